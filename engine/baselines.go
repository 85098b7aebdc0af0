package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// PromoteRequest publishes a repository's baseline: Scope names the
// repository (the principal's own when nil; it must name a repo), Name
// labels the baseline. Without BaselineID the baseline is a snapshot of
// the current version of every active memory of the repository; with it,
// the versions of that older baseline (a rollback). IdempotencyKey (HTTP:
// the Idempotency-Key header) makes a retry answer the baseline the first
// request promoted instead of promoting another (idempotentID).
type PromoteRequest struct {
	Scope          *graph.Scope `json:"scope,omitempty"`
	Name           string       `json:"name,omitempty"`
	BaselineID     string       `json:"baseline_id,omitempty"`
	IdempotencyKey string       `json:"-"`
}

// BaselineView is a baseline as listed: its versions counted, and whether
// it is its repository's published one.
type BaselineView struct {
	ID           string      `json:"id"`
	Scope        graph.Scope `json:"scope"`
	Name         string      `json:"name"`
	PublishedBy  string      `json:"published_by"`
	CreatedAt    time.Time   `json:"created_at"`
	VersionCount int         `json:"version_count"`
	Published    bool        `json:"published"`
}

func viewOf(b graph.Baseline, published bool) BaselineView {
	return BaselineView{ID: b.ID, Scope: b.Scope, Name: b.Name, PublishedBy: b.PublishedBy,
		CreatedAt: b.CreatedAt, VersionCount: len(b.VersionIDs), Published: published}
}

// PromoteBaseline publishes a new baseline of a repository, which
// read_context's default selector (published) then reads; it is audited
// (baseline.promote) in the same transaction. Needs permission promote,
// in the principal's scope or, with subscopes, beneath it.
func (e *Engine) PromoteBaseline(ctx context.Context, p graph.Principal, r PromoteRequest) (BaselineView, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, policy.PermPromote); err != nil {
		return BaselineView{}, err
	}
	s, err := scopeFor(pol, p, r.Scope)
	if err != nil {
		return BaselineView{}, err
	}
	if s.RepoID == "" {
		return BaselineView{}, &graph.FieldError{Field: "scope.repo_id", Message: "a baseline is published per repository: name one"}
	}
	ps, err := e.proposals()
	if err != nil {
		return BaselineView{}, err
	}
	id, err := idempotentID("baseline.promote", s, p, r.IdempotencyKey)
	if err != nil {
		return BaselineView{}, err
	}
	now := e.now().UTC()
	b := graph.Baseline{ID: id, Scope: s, Name: r.Name, PublishedBy: p.ID, CreatedAt: now}
	outcome := "promoted baseline " + b.ID
	if r.BaselineID != "" {
		if err := graph.CheckID("baseline_id", r.BaselineID); err != nil {
			return BaselineView{}, err
		}
		old, err := ps.GetBaseline(ctx, graph.Filter{Scope: s, Reader: readerOf(pol, p)}, r.BaselineID)
		if err != nil {
			return BaselineView{}, fmt.Errorf("baseline %s: %w", r.BaselineID, err)
		}
		if old.Scope != s {
			return BaselineView{}, &graph.FieldError{Field: "baseline_id", Message: fmt.Sprintf("baseline %s is of %s, not of %s", old.ID, scopeName(old.Scope), scopeName(s))}
		}
		b.VersionIDs = old.VersionIDs
		outcome += " from " + old.ID
		if b.Name == "" {
			b.Name = "rollback to " + old.Name
		}
	}
	if b.Name == "" {
		b.Name = "promoted " + now.Format("2006-01-02T15:04:05Z")
	}
	if err := b.Validate(); err != nil {
		return BaselineView{}, err
	}
	ev := graph.AuditEvent{ID: graph.NewID(), Scope: s, Action: AuditBaselinePromote, SubjectKind: "Baseline",
		SubjectID: b.ID, ActorID: p.ID, Outcome: truncate(outcome, graph.MaxTitleLen), Reason: truncate(b.Name, graph.MaxTitleLen), CreatedAt: now}
	b, err = ps.PromoteBaseline(ctx, b, ev)
	if err != nil {
		// A retry: the baseline the first request promoted, marked
		// published while it still is.
		f := graph.Filter{Scope: s, Reader: readerOf(pol, p)}
		first, err := replayed(r.IdempotencyKey, err, func() (graph.Baseline, error) { return ps.GetBaseline(ctx, f, id) },
			func(old graph.Baseline) bool {
				return old.Scope == s && old.PublishedBy == p.ID && (r.Name == "" || old.Name == r.Name) &&
					(r.BaselineID == "" || sameVersions(old.VersionIDs, b.VersionIDs))
			})
		if err != nil {
			return BaselineView{}, fmt.Errorf("promote %s: %w", scopeName(s), err)
		}
		pub, err := ps.PublishedBaselines(ctx, f)
		if err != nil {
			return BaselineView{}, fmt.Errorf("promote %s: %w", scopeName(s), err)
		}
		return viewOf(first, slices.ContainsFunc(pub, func(x graph.Baseline) bool { return x.ID == first.ID })), nil
	}
	return viewOf(b, true), nil
}

// sameVersions reports whether two baselines publish the same versions.
// A retried rollback must publish what the first request published; a
// retried snapshot is not compared (the repository may have moved since).
func sameVersions(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// ListBaselines lists the baselines p can see in scope (its own when nil),
// newest first, at most limit (default 50), each marked when it is its
// repository's published one.
func (e *Engine) ListBaselines(ctx context.Context, p graph.Principal, scope *graph.Scope, limit int) ([]BaselineView, error) {
	pol := e.policy.Current()
	f, err := readFilter(pol, p, scope, graph.Filter{})
	if err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = 50
	}
	ps, err := e.proposals()
	if err != nil {
		return nil, err
	}
	bs, err := ps.ListBaselines(ctx, f, limit)
	if err != nil {
		return nil, err
	}
	pub, err := ps.PublishedBaselines(ctx, f)
	if err != nil {
		return nil, err
	}
	published := map[string]bool{}
	for _, b := range pub {
		published[b.ID] = true
	}
	out := make([]BaselineView, 0, len(bs))
	for _, b := range bs {
		out = append(out, viewOf(b, published[b.ID]))
	}
	return out, nil
}
