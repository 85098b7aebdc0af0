package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
	"go.opentelemetry.io/otel/attribute"
)

// Formats an IngestRequest's content may be in.
const (
	// FormatText is plain prose: fluff is dropped before it is stored.
	FormatText = "text"
	// FormatMarkdown is a markdown document: stored as written and chunked
	// by heading path.
	FormatMarkdown = "markdown"
)

// MaxBatch is the most items one IngestBatch call takes.
const MaxBatch = 1000

// IngestRequest is one write as a caller states it. It is also the payload
// of a queued GateRequest (as JSON), so a librarian's approval replays
// exactly what was asked. Zero fields mean "derive it": the type, layer and
// sublayer come from classification, the canonical key from SAQ, the user
// from the principal.
type IngestRequest struct {
	Scope   *graph.Scope `json:"scope,omitempty"`
	Type    string       `json:"type,omitempty"`
	Title   string       `json:"title,omitempty"`
	Content string       `json:"content"`
	Summary string       `json:"summary,omitempty"`
	// Format is text (default) or markdown; type document defaults to
	// markdown.
	Format string   `json:"format,omitempty"`
	UserID string   `json:"user_id,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	// Entities are names the caller knows the memory mentions, added to
	// what extraction finds.
	Entities []string `json:"entities,omitempty"`
	// CanonicalKey overrides the SAQ key.
	CanonicalKey string `json:"canonical_key,omitempty"`
	// Supersedes names an active memory this one replaces, whatever its key.
	Supersedes  string           `json:"supersedes,omitempty"`
	Importance  *float64         `json:"importance,omitempty"`
	ValidFrom   time.Time        `json:"valid_from,omitzero"`
	ValidTo     time.Time        `json:"valid_to,omitzero"`
	Visibility  graph.Visibility `json:"visibility,omitempty"`
	SubjectType string           `json:"subject_type,omitempty"`
	SubjectID   string           `json:"subject_id,omitempty"`
	ProjectID   string           `json:"project_id,omitempty"`
	SessionID   string           `json:"session_id,omitempty"`
	Channel     string           `json:"channel,omitempty"`
	// SourceKind defaults to AUTHORED.
	SourceKind graph.SourceKind `json:"source_kind,omitempty"`
	// Provenance's actor fields are set from the principal; the caller
	// states the tool and source (repo, commit, path).
	Provenance graph.Provenance `json:"provenance,omitzero"`
	// Metadata is matched by the gate's metadata rules (the channel is
	// added as "channel").
	Metadata map[string]string `json:"metadata,omitempty"`
}

// IngestStatus is what became of one ingested item.
type IngestStatus string

// Ingest statuses.
const (
	// StatusApproved: a new memory was written.
	StatusApproved IngestStatus = "approved"
	// StatusSuperseded: a new memory was written that supersedes an older
	// one with the same key (or the one named in supersedes).
	StatusSuperseded IngestStatus = "superseded"
	// StatusUpdated: a document with the same identity got a new version.
	StatusUpdated IngestStatus = "updated"
	// StatusReinforced: an identical active memory exists; its access count
	// went up and nothing new was written.
	StatusReinforced IngestStatus = "reinforced"
	// StatusPending: the gate queued the write for a librarian; it is
	// invisible to search until approved.
	StatusPending IngestStatus = "pending"
	// StatusRejected: nothing was written; Reason says why, Fix what to do.
	StatusRejected IngestStatus = "rejected"
)

// IngestResult is the outcome of one ingested item.
type IngestResult struct {
	Status IngestStatus `json:"status"`
	// ID is the memory written, reinforced or updated.
	ID        string `json:"id,omitempty"`
	VersionID string `json:"version_id,omitempty"`
	// RequestID is the gate request of a pending write.
	RequestID    string `json:"request_id,omitempty"`
	CanonicalKey string `json:"canonical_key,omitempty"`
	Type         string `json:"type,omitempty"`
	Layer        string `json:"layer,omitempty"`
	Sublayer     string `json:"sublayer,omitempty"`
	// Supersedes is the memory the new one replaced.
	Supersedes string `json:"supersedes,omitempty"`
	// Rule is the gate rule that decided (or the integrity check that
	// refused the write).
	Rule   string `json:"rule,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Fix suggests how to make a rejected write succeed.
	Fix string `json:"fix,omitempty"`
	// Entities are the names of the entities the memory mentions.
	Entities []string `json:"entities"`
	// Integrity says why the write reinforced or superseded a memory
	// found under its canonical key ("same content words", "same subject
	// and listen, a new value").
	Integrity string `json:"integrity,omitempty"`
	// Contradicts names active memories the new one may contradict: they
	// share its key and subject, but nothing shows the new statement
	// replaces them, so both are kept and the pair is flagged (also as an
	// ingest.possible_contradiction audit event) — never hidden.
	Contradicts []PossibleContradiction `json:"contradicts,omitempty"`
	// Conflict marks a rejection caused by the stored state (e.g. the
	// memory named in supersedes is no longer active) rather than by the
	// policy.
	Conflict bool `json:"conflict,omitempty"`
}

// PossibleContradiction is an active memory a new one may contradict.
type PossibleContradiction struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Ingest runs one write through the write path: normalize, classify,
// entities and canonical key, integrity (reinforce, supersede or new), the
// policy gate, the graph write and the vector index. Bad input is an error
// wrapping graph.ErrInvalid (a *graph.FieldError naming the field) and
// nothing is written; a gate or integrity refusal is a result with status
// rejected, not an error.
func (e *Engine) Ingest(ctx context.Context, p graph.Principal, r IngestRequest) (IngestResult, error) {
	res, err := e.ingest(ctx, e.policy.Current(), p, []IngestRequest{r}, ingestOpts{})
	if err != nil {
		var (
			fe *graph.FieldError
			ie *itemErr
		)
		switch {
		case errors.As(err, &fe):
			fe.Field = strings.TrimPrefix(fe.Field, "items[0].")
		case errors.As(err, &ie):
			err = ie.err
		}
		return IngestResult{}, err
	}
	return res[0], nil
}

// IngestBatch runs many writes through the write path together: one
// classification and keying pass, one graph transaction for all new
// memories, one embedding call for all index texts. Bad input in any item
// is an error naming it (items[i].field) and nothing is written. Results
// are in the order of rs.
func (e *Engine) IngestBatch(ctx context.Context, p graph.Principal, rs []IngestRequest) ([]IngestResult, error) {
	switch {
	case len(rs) == 0:
		return nil, &graph.FieldError{Field: "items", Message: "at least one item"}
	case len(rs) > MaxBatch:
		return nil, &graph.FieldError{Field: "items", Message: fmt.Sprintf("more than %d items", MaxBatch)}
	}
	return e.ingest(ctx, e.policy.Current(), p, rs, ingestOpts{batch: true})
}

// ingestOpts changes how the pipeline runs for a librarian's replay.
type ingestOpts struct {
	// approvedBy, when set, skips the gate: the write was queued and a
	// librarian (this principal id) approved it under rule with note.
	approvedBy string
	rule       string
	note       string
	// settle, when set, is the gate request the replay carries out: it is
	// settled in the transaction of the write.
	settle *settlement
	// batch says IngestBatch called (for the Observer's mode).
	batch bool
}

// conflictRetries bounds how often a batch is re-planned when a concurrent
// writer got in the way: superseded a memory it meant to supersede, or took
// the exclusive key first. Within one process the key locks make that rare;
// writers in other processes can win several times in a row, so attempts
// after the first wait a short random while that grows.
const conflictRetries = 8

// planAndWrite runs the integrity and write stages under the batch's key
// locks, re-planning when a concurrent writer got in the way.
func (e *Engine) planAndWrite(ctx context.Context, plans []*plan, o ingestOpts) error {
	unlock := e.keys.lock(plans)
	defer unlock()
	for attempt := 1; ; attempt++ {
		if err := e.planIntegrity(ctx, plans, o); err != nil {
			return err
		}
		err := e.write(ctx, plans, o)
		if err == nil || !errors.Is(err, graph.ErrConflict) || attempt == conflictRetries {
			return err
		}
		if err := o.settle.stillPending(ctx, e.store); err != nil {
			return err // another librarian settled it: re-planning cannot help
		}
		e.log.Info("ingest conflict, re-planning", "attempt", attempt, "err", err)
		backoff := time.Duration(rand.Int64N(int64(attempt) * int64(5*time.Millisecond)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		for _, pl := range plans {
			pl.reset()
		}
	}
}

// ingest runs the write path under pol, the request's policy snapshot.
func (e *Engine) ingest(ctx context.Context, pol *policy.Policy, p graph.Principal, rs []IngestRequest, o ingestOpts) (out []IngestResult, err error) {
	ctx, end := startSpan(ctx, "mnemo.ingest", attribute.Int("mnemo.items", len(rs)), attribute.Bool("mnemo.batch", o.batch))
	defer func() {
		e.observeIngest(o, len(rs), out, err)
		end(err, ingestOutcomes(out)...)
	}()
	if err := authorize(pol, p, PermWrite); err != nil {
		return nil, err
	}
	now := e.now().UTC()
	sctx, endStep := startSpan(ctx, "mnemo.ingest.prepare")
	plans, err := e.prepare(sctx, pol, p, rs, now)
	endStep(err)
	if err != nil {
		return nil, err
	}
	ahead := e.embedAhead(ctx, plans)
	sctx, endStep = startSpan(ctx, "mnemo.ingest.write")
	err = e.planAndWrite(sctx, plans, o)
	endStep(err)
	if err != nil {
		ahead.cancel()
		ahead.wait() // never leave it running past the call
		return nil, err
	}
	sctx, endStep = startSpan(ctx, "mnemo.ingest.index")
	e.indexNow(sctx, plans, ahead.wait())
	endStep(nil)
	out = make([]IngestResult, len(plans))
	for i, pl := range plans {
		out[i] = pl.result()
	}
	return out, nil
}

// ingestOutcomes are the span attributes of an ingest's results: how many
// items ended in each status.
func ingestOutcomes(out []IngestResult) []attribute.KeyValue {
	n := map[IngestStatus]int{}
	for _, r := range out {
		n[r.Status]++
	}
	kv := make([]attribute.KeyValue, 0, len(n))
	for st, c := range n {
		kv = append(kv, attribute.Int("mnemo.ingest."+string(st), c))
	}
	return kv
}
