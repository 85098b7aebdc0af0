package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/graph"
)

// BacklogTag marks every memory the backlog mirror writes; a second tag,
// "repo:" + the source repository, tells mirrors of different repositories
// apart.
const BacklogTag = "backlog"

// backlogBatch is how many files one IngestBatch call takes by default.
const backlogBatch = 64

// BacklogRequest mirrors a tree of markdown files into memories.
type BacklogRequest struct {
	// Files is the tree; every **/*.md in it is a document. Directories
	// whose name starts with "." (.git, .github, ...) are skipped.
	Files fs.FS
	// SourceRepo and CommitSHA are recorded in every version's provenance
	// (with the file's path); SourceRepo also scopes the mirror's identity
	// (see BacklogSummary). Required: SourceRepo.
	SourceRepo string
	CommitSHA  string
	// Scope narrows the principal's scope; nil writes in the principal's.
	Scope *graph.Scope
	// Tags are added to BacklogTag and the repo tag.
	Tags []string
	// BatchSize is how many files go through one IngestBatch call; zero
	// means 64.
	BatchSize int
	// Progress, when set, is called after each batch.
	Progress func(BacklogProgress)
}

// BacklogProgress reports how far a mirror run is.
type BacklogProgress struct {
	Done  int
	Total int
	// Path is the last file handled.
	Path string
}

// BacklogSummary counts what a mirror run did.
type BacklogSummary struct {
	Added     int           `json:"added"`
	Updated   int           `json:"updated"`
	Unchanged int           `json:"unchanged"`
	Archived  int           `json:"archived"`
	Failed    int           `json:"failed"`
	Queued    int           `json:"queued"`
	Rejected  int           `json:"rejected"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	// Failures names each failed file and why.
	Failures []string `json:"failures,omitempty"`
}

// String is the one-line summary: added N, updated N, unchanged N,
// archived N, failed N in 1.2s (queued and rejected when not zero).
func (s BacklogSummary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "added %d, updated %d, unchanged %d, archived %d, failed %d", s.Added, s.Updated, s.Unchanged, s.Archived, s.Failed)
	if s.Queued > 0 {
		fmt.Fprintf(&b, ", queued %d", s.Queued)
	}
	if s.Rejected > 0 {
		fmt.Fprintf(&b, ", rejected %d", s.Rejected)
	}
	fmt.Fprintf(&b, " in %.1fs", s.Elapsed.Seconds())
	return b.String()
}

// IngestBacklog mirrors every markdown file of r.Files as a document
// (source_kind INGESTED_EVIDENCE, provenance {source_repo, commit_sha,
// path}, chunked by heading path with each chunk's own entities), through
// the same write path and gate as any write. A document's identity is its
// canonical key Doc-<hash of source repo and path>, so re-running is
// idempotent: an unchanged file reinforces its memory, a changed file adds
// a version, and the memory of a file that is gone is archived (only after
// a complete run). A file that cannot be ingested is counted as failed and
// the run goes on.
func (e *Engine) IngestBacklog(ctx context.Context, p graph.Principal, r BacklogRequest) (BacklogSummary, error) {
	start := time.Now()
	if r.Files == nil {
		return BacklogSummary{}, &graph.FieldError{Field: "files", Message: "required"}
	}
	if strings.TrimSpace(r.SourceRepo) == "" {
		return BacklogSummary{}, &graph.FieldError{Field: "source_repo", Message: "required"}
	}
	pol := e.policy.Current()
	if err := authorize(pol, p, PermWrite); err != nil {
		return BacklogSummary{}, err
	}
	scope, err := scopeFor(pol, p, r.Scope)
	if err != nil {
		return BacklogSummary{}, err
	}
	paths, err := markdownFiles(ctx, r.Files)
	if err != nil {
		return BacklogSummary{}, err
	}
	size := r.BatchSize
	if size <= 0 {
		size = backlogBatch
	}
	tags := append([]string{BacklogTag, repoTag(r.SourceRepo)}, r.Tags...)
	var sum BacklogSummary
	seen := make(map[string]bool, len(paths))
	for i := 0; i < len(paths); i += size {
		batch := paths[i:min(i+size, len(paths))]
		var reqs []IngestRequest
		var names []string
		for _, name := range batch {
			prov := graph.Provenance{SourceRepo: r.SourceRepo, CommitSHA: r.CommitSHA, Path: name}
			seen[documentKey(prov, "")] = true
			content, err := readDocument(r.Files, name)
			if err != nil {
				sum.fail(name, err)
				continue
			}
			reqs = append(reqs, IngestRequest{
				Scope: &scope, Type: TypeDocument, Format: FormatMarkdown, Content: content, Tags: tags,
				SourceKind: graph.SourceIngestedEvidence, Provenance: prov,
			})
			names = append(names, name)
		}
		if err := e.backlogBatch(ctx, p, reqs, names, &sum); err != nil {
			return sum, err
		}
		if r.Progress != nil {
			r.Progress(BacklogProgress{Done: i + len(batch), Total: len(paths), Path: batch[len(batch)-1]})
		}
	}
	if err := e.archiveGone(ctx, p, scope, tags[:2], seen, &sum); err != nil {
		return sum, err
	}
	sum.Elapsed = time.Since(start)
	return sum, nil
}

// backlogBatch ingests one batch of documents; when one of them is bad
// input, each is retried alone so the others still go in.
func (e *Engine) backlogBatch(ctx context.Context, p graph.Principal, reqs []IngestRequest, names []string, sum *BacklogSummary) error {
	if len(reqs) == 0 {
		return nil
	}
	res, err := e.IngestBatch(ctx, p, reqs)
	if errors.Is(err, graph.ErrInvalid) && len(reqs) > 1 {
		for i := range reqs {
			if err := e.backlogBatch(ctx, p, reqs[i:i+1], names[i:i+1], sum); err != nil {
				return err
			}
		}
		return nil
	}
	if errors.Is(err, graph.ErrInvalid) {
		sum.fail(names[0], err)
		return nil
	}
	if err != nil {
		return err
	}
	for i, r := range res {
		switch r.Status {
		case StatusApproved:
			sum.Added++
		case StatusUpdated, StatusSuperseded:
			sum.Updated++
		case StatusReinforced:
			sum.Unchanged++
		case StatusPending:
			sum.Queued++
		case StatusRejected:
			sum.Rejected++
			sum.Failures = append(sum.Failures, fmt.Sprintf("%s: rejected: %s", names[i], r.Reason))
		}
	}
	return nil
}

func (s *BacklogSummary) fail(name string, err error) {
	s.Failed++
	s.Failures = append(s.Failures, fmt.Sprintf("%s: %v", name, err))
}

// archiveGone archives the mirror's documents whose file was not seen.
func (e *Engine) archiveGone(ctx context.Context, p graph.Principal, s graph.Scope, tags []string, seen map[string]bool, sum *BacklogSummary) error {
	f := graph.Filter{Scope: s, Reader: graph.System, UserID: p.User(), Types: []string{TypeDocument}, Tags: tags}
	var gone []graph.Memory
	for page := (graph.Page{Limit: 1000}); ; {
		l, err := e.store.ListMemories(ctx, f, page)
		if err != nil {
			return fmt.Errorf("list mirrored documents: %w", err)
		}
		for _, m := range l.Memories {
			if m.Scope == s && !seen[m.CanonicalKey] {
				gone = append(gone, m)
			}
		}
		if l.NextCursor == "" {
			break
		}
		page.Cursor = l.NextCursor
	}
	now := e.now().UTC()
	for _, m := range gone {
		ev := graph.AuditEvent{
			ID: graph.NewID(), Scope: s, Action: AuditBacklogArchive, SubjectKind: subjectMemory, SubjectID: m.ID,
			ActorID: p.ID, Outcome: "archived", Reason: truncate("file gone: "+m.Title, graph.MaxTitleLen), CreatedAt: now,
		}
		if err := e.store.Archive(ctx, s, m.ID, ev); err != nil { // audited in the archive's transaction
			return fmt.Errorf("archive %s (file gone): %w", m.ID, err)
		}
		sum.Archived++
	}
	return nil
}

// markdownFiles lists **/*.md in fsys, sorted, skipping dot directories.
func markdownFiles(ctx context.Context, fsys fs.FS) ([]string, error) {
	var out []string
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if d.IsDir() {
			if name != "." && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if strings.EqualFold(path.Ext(name), ".md") && d.Type().IsRegular() {
			out = append(out, name)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk backlog: %w", err)
	}
	return out, nil
}

// readDocument reads one file, refusing what no memory can hold.
func readDocument(fsys fs.FS, name string) (string, error) {
	data, err := fs.ReadFile(fsys, name)
	switch {
	case err != nil:
		return "", err
	case len(data) > graph.MaxContentLen:
		return "", fmt.Errorf("%d bytes, more than %d", len(data), graph.MaxContentLen)
	case !utf8.Valid(data):
		return "", errors.New("not valid UTF-8")
	case strings.TrimSpace(string(data)) == "":
		return "", errors.New("empty")
	}
	return string(data), nil
}

// repoTag is the tag naming a mirror's source repository.
func repoTag(repo string) string {
	return truncate("repo:"+repo, graph.MaxTagLen)
}
