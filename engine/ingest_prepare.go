package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mnemo-dev/mnemo/extract"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// TypeDocument is the memory type whose identity is its source (path or
// title) rather than its content: a changed document gets a new version.
const TypeDocument = "document"

// defaultImportance is a new memory's importance when the caller names none.
const defaultImportance = 0.5

// titleLen caps a derived title, in runes.
const titleLen = 80

// prepare runs the pure stages — normalize, classify, entities, key, index
// text, gate decision — on every item and validates the writes. Any bad item
// fails the whole call with a *graph.FieldError naming items[i].field.
// Sizes are checked before any extraction starts, and no new item starts
// once ctx is done: extraction costs CPU in proportion to the text.
func (e *Engine) prepare(ctx context.Context, pol *policy.Policy, p graph.Principal, rs []IngestRequest, now time.Time) ([]*plan, error) {
	for i, r := range rs {
		if err := checkSizes(r); err != nil {
			return nil, itemError(i, err)
		}
	}
	x := e.xc.get(pol)
	plans := make([]*plan, len(rs))
	errs := make([]error, len(rs))
	// Extraction (NER above all) is CPU-bound and pure: spread it over
	// the cores.
	var (
		wg   sync.WaitGroup
		next atomic.Int64
	)
	for range min(runtime.GOMAXPROCS(0), len(rs)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(rs); i = int(next.Add(1)) - 1 {
				if errs[i] = ctx.Err(); errs[i] != nil {
					return
				}
				plans[i], errs[i] = e.prepareOne(pol, x, p, rs[i], now)
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, err := range errs {
		if err != nil {
			return nil, itemError(i, err)
		}
		plans[i].idx = i
	}
	return plans, nil
}

// itemError names item i in err: items[i].field for a field error, an
// *itemErr otherwise.
func itemError(i int, err error) error {
	var fe *graph.FieldError
	if errors.As(err, &fe) {
		return &graph.FieldError{Field: fmt.Sprintf("items[%d].%s", i, fe.Field), Message: fe.Message}
	}
	return &itemErr{i: i, err: err}
}

// itemErr is an error of one item of a batch; Ingest, which has one item,
// answers the error itself.
type itemErr struct {
	i   int
	err error
}

func (e *itemErr) Error() string { return fmt.Sprintf("items[%d]: %v", e.i, e.err) }
func (e *itemErr) Unwrap() error { return e.err }

// checkSizes refuses text fields over the limits graph validates, before
// extraction reads them. Extraction is linear in the text (about 1.3 ms of
// CPU per KiB with NER capped at extract.NERLimit, at e2b9c33, 2026-11-26),
// so the largest content accepted, graph.MaxContentLen, costs about 1.3 s;
// a 4 MiB content used to cost 46 s before graph refused it.
func checkSizes(r IngestRequest) error {
	for _, f := range []struct {
		field string
		n     int
		max   int
	}{
		{"content", len(r.Content), graph.MaxContentLen},
		{"summary", len(r.Summary), graph.MaxContentLen},
		{"title", len(r.Title), graph.MaxTitleLen},
		{"canonical_key", len(r.CanonicalKey), graph.MaxTitleLen},
	} {
		if f.n > f.max {
			return &graph.FieldError{Field: f.field, Message: fmt.Sprintf(
				"is %d bytes, more than the %s one memory may hold; split it into several memories", f.n, graph.SizeText(int64(f.max)))}
		}
	}
	switch {
	case len(r.Tags) > graph.MaxTags:
		return &graph.FieldError{Field: "tags", Message: fmt.Sprintf("has %d tags, more than %d", len(r.Tags), graph.MaxTags)}
	case len(r.Entities) > graph.MaxEntities:
		return &graph.FieldError{Field: "entities", Message: fmt.Sprintf("has %d names, more than %d", len(r.Entities), graph.MaxEntities)}
	}
	return nil
}

func (e *Engine) prepareOne(pol *policy.Policy, x *extract.Extractor, p graph.Principal, r IngestRequest, now time.Time) (*plan, error) {
	s, err := scopeFor(pol, p, r.Scope)
	if err != nil {
		return nil, err
	}
	r.Scope = &s
	if err := mayWriteAs(pol, p, r.UserID); err != nil {
		return nil, err
	}
	if strings.TrimSpace(r.Content) == "" {
		return nil, &graph.FieldError{Field: "content", Message: "required"}
	}
	if r.Type != "" {
		if _, ok := pol.Type(r.Type); !ok {
			return nil, &graph.FieldError{Field: "type", Message: fmt.Sprintf("unknown type %q (the policy has %s)",
				r.Type, strings.Join(slices.Sorted(maps.Keys(pol.Types)), ", "))}
		}
	}
	format := r.Format
	if format == "" {
		format = FormatText
		if r.Type == TypeDocument {
			format = FormatMarkdown
		}
	}
	if format != FormatText && format != FormatMarkdown {
		return nil, &graph.FieldError{Field: "format", Message: fmt.Sprintf("%q is not text or markdown", r.Format)}
	}

	var (
		content, key string
		cls          extract.Classification
		mentions     []extract.Mention
		chunks       []graph.ChunkInput
	)
	if format == FormatMarkdown {
		// A document is classified by its title: keyword cues scattered
		// through a long body ("must", "port") say little about it.
		content = r.Content
		head := r.Title
		if head == "" {
			head = deriveTitle(content, format, r.Provenance.Path)
		}
		cls = extract.Classify(pol, head, extract.Hint{Type: r.Type})
		chunks, mentions = chunkDocument(x, content)
	} else {
		res := x.Extract(r.Content, extract.Hint{Type: r.Type})
		content, cls, mentions, key = res.Normalized, res.Classification, res.Entities, res.Key
		if strings.TrimSpace(content) == "" { // nothing but fluff: keep what was said
			content = strings.TrimSpace(r.Content)
		}
	}
	title := r.Title
	if title == "" {
		title = deriveTitle(content, format, r.Provenance.Path)
	}
	doc := cls.Type == TypeDocument
	td, _ := pol.Type(cls.Type)
	switch {
	case r.CanonicalKey != "":
		key = r.CanonicalKey
	case doc:
		key = documentKey(r.Provenance, title)
	case !td.Dedupes():
		key = ""
	case key == "":
		key = x.Extract(content, extract.Hint{Type: cls.Type}).Key
	}

	refs, names := entityRefs(mentions, r.Entities)
	userID := r.UserID
	if userID == "" {
		userID = p.User()
	}
	importance := defaultImportance
	if r.Importance != nil {
		importance = *r.Importance
	}
	sourceKind := r.SourceKind
	if sourceKind == "" {
		sourceKind = graph.SourceAuthored
	}
	prov := r.Provenance
	prov.ActorType, prov.ActorID = "principal", p.ID
	indexText := td.IndexTextOf(map[string]string{
		policy.FieldTitle: title, policy.FieldContent: content, policy.FieldSummary: r.Summary,
		policy.FieldTags: strings.Join(r.Tags, " "),
	})
	in := graph.MemoryInput{
		Memory: graph.Memory{
			ID: graph.NewID(), Scope: s, UserID: userID, Type: cls.Type, Layer: cls.Layer, Sublayer: cls.Sublayer,
			Title: title, CanonicalKey: key, Status: graph.StatusActive, SourceKind: sourceKind,
			Importance: importance, AccessCount: 1, ValidFrom: r.ValidFrom, ValidTo: r.ValidTo,
			Visibility: r.Visibility, SubjectType: r.SubjectType, SubjectID: r.SubjectID, ProjectID: r.ProjectID,
			SessionID: r.SessionID, Channel: r.Channel, Tags: r.Tags, CreatedAt: now,
		},
		Version: graph.VersionInput{
			ID: graph.NewID(), Content: content, Summary: r.Summary, IndexText: indexText,
			ContentHash: graph.ContentHash(content), Provenance: prov, Chunks: chunks, Entities: refs,
		},
	}
	in.Supersedes = r.Supersedes // validated here, set again by integrity
	if err := in.Validate(); err != nil {
		return nil, err
	}
	in.Supersedes = ""
	// The store keeps a deduping type's key to one active memory per
	// namespace, across processes: a racing first write gets ErrConflict
	// and planAndWrite plans it again against the winner.
	in.ExclusiveKey = td.Dedupes() && in.Memory.CanonicalKey != ""
	meta := make(map[string]string, len(r.Metadata)+1)
	maps.Copy(meta, r.Metadata)
	if r.Channel != "" {
		meta["channel"] = r.Channel
	}
	gate := pol.Gate(policy.GateInput{
		Type: cls.Type, Layer: cls.Layer, Sublayer: cls.Sublayer, SourceKind: string(sourceKind),
		Roles: p.Roles, Metadata: meta,
	})
	return &plan{principal: p, reader: readerOf(pol, p), actAsUser: pol.Allows(p.Roles, policy.PermActAsUser),
		req: r, in: in, doc: doc, dedupe: td.Dedupes(), entities: names, gate: gate,
		x: x, baseKey: key, callerKey: r.CanonicalKey != "", exclusive: in.ExclusiveKey}, nil
}

// chunkDocument splits a markdown document by heading path and extracts
// each chunk's entities; the document mentions the union. NER reads at most
// extract.NERLimit bytes of the whole document (the first chunks'), so a
// long document costs no more NER than a long note.
func chunkDocument(x *extract.Extractor, content string) ([]graph.ChunkInput, []extract.Mention) {
	var (
		chunks []graph.ChunkInput
		all    []extract.Mention
		seen   = map[string]bool{}
		ner    = extract.NERLimit
	)
	for _, c := range extract.ChunkMarkdown(content) {
		ms := x.EntitiesNER(content[c.Start:c.End], ner)
		ner -= c.End - c.Start
		refs, _ := entityRefs(ms, nil)
		chunks = append(chunks, graph.ChunkInput{Key: c.Key, Start: c.Start, End: c.End, Entities: refs})
		for _, m := range ms {
			if !seen[m.NormName] {
				seen[m.NormName] = true
				all = append(all, m)
			}
		}
	}
	return chunks, all
}

// entityRefs turns mentions and caller-named entities into the refs a
// version mentions (at most graph.MaxEntities, first found first) and
// their names.
func entityRefs(ms []extract.Mention, named []string) ([]graph.EntityRef, []string) {
	var (
		refs  []graph.EntityRef
		names []string
		seen  = map[string]bool{}
	)
	add := func(r graph.EntityRef) {
		if r.NormName == "" || seen[r.NormName] || len(refs) >= graph.MaxEntities {
			return
		}
		seen[r.NormName] = true
		refs = append(refs, r)
		names = append(names, r.Name)
	}
	for _, m := range ms {
		add(graph.EntityRef{Name: m.Name, NormName: m.NormName, Type: m.Type, Aliases: m.Aliases})
	}
	for _, n := range named {
		name := strings.TrimSpace(n)
		r := graph.EntityRef{Name: name, NormName: extract.NormName(name)}
		if f := extract.FoldName(name); f != name {
			r.Aliases = []string{f} // as the extractor's mentions carry it
		}
		add(r)
	}
	return refs, names
}

// documentKey is a document's identity: Doc- and 16 hex digits of the
// sha256 of its source repository and path when it has a path, else of its
// title. A document with neither is keyless.
func documentKey(prov graph.Provenance, title string) string {
	var id string
	switch {
	case prov.Path != "":
		id = "path\x00" + prov.SourceRepo + "\x00" + prov.Path
	case strings.TrimSpace(title) != "":
		id = "title\x00" + graph.NormName(title)
	default:
		return ""
	}
	sum := sha256.Sum256([]byte(id))
	return "Doc-" + hex.EncodeToString(sum[:8])
}

// deriveTitle names a memory whose caller gave no title: a markdown
// document's first heading, else its path, else the first line of text,
// cut to titleLen runes.
func deriveTitle(content, format, path string) string {
	if format == FormatMarkdown {
		for _, c := range extract.ChunkMarkdown(content) {
			if c.Heading != "" {
				return cut(c.Heading, titleLen)
			}
		}
		if path != "" {
			return cut(path, titleLen)
		}
	}
	line, _, _ := strings.Cut(strings.TrimSpace(content), "\n")
	return cut(strings.TrimSpace(line), titleLen)
}

// cut shortens s to at most n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
