package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// runIngest implements `mnemo ingest [flags] [TEXT...]` (one note from the
// arguments, or from stdin when there are none or TEXT is "-") and
// `mnemo ingest backlog [flags] DIR`.
func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "backlog" {
		return runBacklog(ctx, args[1:], stdout, stderr)
	}
	c := newCmdline("mnemo ingest", "mnemo ingest [flags] [TEXT...|-]   (one note; stdin when no TEXT or TEXT is -)\n"+
		"       mnemo ingest backlog [flags] DIR   (mirror DIR's **/*.md; -h for its flags)", stdout, stderr).withConfig()
	id := c.identity("writer")
	typ := c.fs.String("type", "", "memory type (default: classified)")
	title := c.fs.String("title", "", "title (default: derived)")
	tags := c.fs.String("tags", "", "tags, comma-separated")
	format := c.fs.String("format", "", "text or markdown (default: text; markdown for documents)")
	kind := c.fs.String("source-kind", "", "AUTHORED (default), INGESTED_EVIDENCE or PROPOSED")
	supersedes := c.fs.String("supersedes", "", "id of an active memory this one replaces")
	a, pos, err := c.open(ctx, args, anyArgs)
	if err != nil {
		return err
	}
	defer a.Close()
	text := strings.Join(pos, " ")
	if text == "" || text == "-" {
		data, err := io.ReadAll(io.LimitReader(os.Stdin, graph.MaxContentLen+1))
		if err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		text = string(data)
	}
	res, err := a.engine.Ingest(ctx, id.principal(), engine.IngestRequest{
		Type: *typ, Title: *title, Content: text, Format: *format, Tags: commaList(*tags),
		SourceKind: graph.SourceKind(*kind), Supersedes: *supersedes,
		Provenance: graph.Provenance{ToolID: "mnemo-cli"},
	})
	if err != nil {
		return err
	}
	if err := c.print(res, func(w io.Writer) { printResult(w, res) }); err != nil {
		return err
	}
	if res.Status == engine.StatusRejected {
		return errors.New("rejected")
	}
	return nil
}

func printResult(w io.Writer, r engine.IngestResult) {
	switch r.Status {
	case engine.StatusPending:
		fmt.Fprintf(w, "pending %s (rule %s: %s)\n", r.RequestID, r.Rule, r.Reason)
	case engine.StatusRejected:
		fmt.Fprintf(w, "rejected (rule %s): %s\nfix: %s\n", r.Rule, r.Reason, r.Fix)
	default:
		fmt.Fprintf(w, "%s %s version=%s key=%s type=%s %s.%s", r.Status, r.ID, r.VersionID, r.CanonicalKey, r.Type, r.Layer, r.Sublayer)
		if r.Supersedes != "" {
			fmt.Fprintf(w, " supersedes=%s", r.Supersedes)
		}
		if len(r.Entities) > 0 {
			fmt.Fprintf(w, " entities=%s", strings.Join(r.Entities, ","))
		}
		fmt.Fprintln(w)
	}
}

// runBacklog implements `mnemo ingest backlog [flags] DIR`.
func runBacklog(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo ingest backlog", "mnemo ingest backlog [flags] DIR", stdout, stderr).withConfig()
	id := c.identity("writer")
	source := c.fs.String("source-repo", "", "source repository (default: git remote origin, else the directory name)")
	batch := c.fs.Int("batch", 0, "files per write batch (default 64)")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return c.usageErr("one DIR")
	}
	dir, err := filepath.Abs(pos[0])
	if err != nil {
		return err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", graph.ErrInvalid, pos[0])
	}
	a, err := c.openParsed(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	repo, sha := gitSource(ctx, dir)
	if *source != "" {
		repo = *source
	}
	bar := newProgress(stderr, "backlog", "files", c.json)
	sum, err := a.engine.IngestBacklog(ctx, id.principal(), engine.BacklogRequest{
		Files: os.DirFS(dir), SourceRepo: repo, CommitSHA: sha, BatchSize: *batch,
		Progress: func(p engine.BacklogProgress) { bar.update(p.Done, p.Total, p.Path) },
	})
	bar.done()
	if !c.json {
		for _, f := range sum.Failures {
			fmt.Fprintln(stderr, "failed:", f)
		}
	}
	if err != nil {
		return err
	}
	return c.print(sum, func(w io.Writer) { fmt.Fprintln(w, sum.String()) })
}

// gitSource names the repository and commit of dir when it is a git
// checkout: the origin remote's URL (else the directory name) and HEAD.
func gitSource(ctx context.Context, dir string) (repo, sha string) {
	git := func(args ...string) string {
		out, err := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	sha = git("rev-parse", "HEAD")
	repo = git("config", "--get", "remote.origin.url")
	if repo == "" {
		if top := git("rev-parse", "--show-toplevel"); top != "" {
			repo = filepath.Base(top)
		} else {
			repo = filepath.Base(dir)
		}
	}
	return repo, sha
}
