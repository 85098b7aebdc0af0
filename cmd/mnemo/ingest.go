package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// identity is who an operator command acts as. The CLI talks to the
// stores directly, so it names its principal itself; the gate and the
// roles of the policy apply exactly as over HTTP.
type identity struct {
	as, user, roles, tenant, org, repo string
}

func (id *identity) register(fs *flag.FlagSet, roles string) {
	fs.StringVar(&id.user, "user", "", "user the principal acts as (default: the principal id)")
	id.registerScope(fs, roles)
}

// registerScope registers the identity flags but --user, for a command
// whose --user means something else (mnemo forget --user U).
func (id *identity) registerScope(fs *flag.FlagSet, roles string) {
	tenant := os.Getenv("MNEMO_TENANT")
	if tenant == "" {
		tenant = "default"
	}
	fs.StringVar(&id.as, "as", "cli", "principal id the command acts as")
	fs.StringVar(&id.roles, "roles", roles, "roles of that principal, comma-separated")
	fs.StringVar(&id.tenant, "tenant", tenant, "tenant (env MNEMO_TENANT)")
	fs.StringVar(&id.org, "org", "", "organisation within the tenant")
	fs.StringVar(&id.repo, "repo", "", "repository within the organisation")
}

func (id identity) principal() graph.Principal {
	return graph.Principal{
		ID: id.as, UserID: id.user, Roles: commaList(id.roles),
		Scope: graph.Scope{TenantID: id.tenant, OrgID: id.org, RepoID: id.repo},
	}
}

func commaList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// openWith splits args between the command's own flags (fs) and the
// configuration flags, opens the app and parses fs. It returns the
// positional arguments.
func openWith(ctx context.Context, name string, fs *flag.FlagSet, args []string, stderr io.Writer) (*app, []string, error) {
	var mine, cfgArgs, pos []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			pos = append(pos, arg)
			continue
		}
		flagName, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		dst := &cfgArgs
		takesValue := true
		if f := fs.Lookup(flagName); f != nil {
			dst = &mine
			if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
				takesValue = false
			}
		} else if flagName == "h" || flagName == "help" {
			fs.SetOutput(stderr)
			fs.Usage()
			return nil, nil, flag.ErrHelp
		}
		*dst = append(*dst, arg)
		if takesValue && !hasValue && i+1 < len(args) {
			i++
			*dst = append(*dst, args[i])
		}
	}
	if err := fs.Parse(mine); err != nil {
		return nil, nil, err
	}
	a, _, err := openApp(ctx, name, cfgArgs, stderr)
	if err != nil {
		return nil, nil, err
	}
	return a, pos, nil
}

// runIngest implements `mnemo ingest [flags] [TEXT...]` (one note from the
// arguments, or from stdin when there are none or TEXT is "-") and
// `mnemo ingest backlog [flags] DIR`.
func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "backlog" {
		return runBacklog(ctx, args[1:], stdout, stderr)
	}
	fs := flag.NewFlagSet("mnemo ingest", flag.ContinueOnError)
	var id identity
	id.register(fs, "writer")
	typ := fs.String("type", "", "memory type (default: classified)")
	title := fs.String("title", "", "title (default: derived)")
	tags := fs.String("tags", "", "tags, comma-separated")
	format := fs.String("format", "", "text or markdown (default: text; markdown for documents)")
	kind := fs.String("source-kind", "", "AUTHORED (default), INGESTED_EVIDENCE or PROPOSED")
	supersedes := fs.String("supersedes", "", "id of an active memory this one replaces")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	a, pos, err := openWith(ctx, "mnemo ingest", fs, args, stderr)
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
	if *asJSON {
		return json.NewEncoder(stdout).Encode(res)
	}
	printResult(stdout, res)
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
	fs := flag.NewFlagSet("mnemo ingest backlog", flag.ContinueOnError)
	var id identity
	id.register(fs, "writer")
	source := fs.String("source-repo", "", "source repository (default: git remote origin, else the directory name)")
	batch := fs.Int("batch", 0, "files per write batch (default 64)")
	a, pos, err := openWith(ctx, "mnemo ingest backlog", fs, args, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	if len(pos) != 1 {
		return errors.New("usage: mnemo ingest backlog [flags] DIR")
	}
	dir, err := filepath.Abs(pos[0])
	if err != nil {
		return err
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%s is not a directory", pos[0])
	}
	repo, sha := gitSource(ctx, dir)
	if *source != "" {
		repo = *source
	}
	progress := newProgress(stderr)
	sum, err := a.engine.IngestBacklog(ctx, id.principal(), engine.BacklogRequest{
		Files: os.DirFS(dir), SourceRepo: repo, CommitSHA: sha, BatchSize: *batch, Progress: progress.update,
	})
	progress.done()
	for _, f := range sum.Failures {
		fmt.Fprintln(stderr, "failed:", f)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, sum.String())
	return nil
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

// progress renders backlog progress on stderr: a bar redrawn in place when
// stderr is a terminal, otherwise a log line every few seconds.
type progress struct {
	w        io.Writer
	terminal bool
	last     time.Time
	drawn    bool
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, last: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.terminal = true
		}
	}
	return p
}

func (p *progress) update(b engine.BacklogProgress) {
	if b.Total == 0 {
		return
	}
	if p.terminal {
		const width = 30
		n := width * b.Done / b.Total
		fmt.Fprintf(p.w, "\r[%s%s] %d/%d %-40.40s", strings.Repeat("#", n), strings.Repeat("-", width-n), b.Done, b.Total, b.Path)
		p.drawn = true
		return
	}
	if time.Since(p.last) >= 2*time.Second || b.Done == b.Total {
		p.last = time.Now()
		fmt.Fprintf(p.w, "backlog: %d/%d files\n", b.Done, b.Total)
	}
}

func (p *progress) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}
