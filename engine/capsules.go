package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// Audit actions of capsules. Each event's subject is the capsule; it
// carries counts, never the subject text or the items' content (an erase
// would have to find it there).
const (
	AuditCapsuleCreate = "capsule.create"
	AuditCapsuleRevoke = "capsule.revoke"
	subjectCapsule     = "Capsule"
)

// Capsule lifetimes (docs/curation.md): a capsule lives DefaultCapsuleTTL
// unless its request says otherwise, and never more than MaxCapsuleTTL, so
// a handover cannot turn into a standing grant.
const (
	DefaultCapsuleTTL = 7 * 24 * time.Hour
	MaxCapsuleTTL     = 30 * 24 * time.Hour
)

// Item kinds of a capsule and of a context bundle.
const (
	ItemMemory   = "memory"
	ItemVersion  = "version"
	ItemDecision = "decision"
)

// CapsuleRequest creates a capsule: a subject, the agents (principal ids)
// it is for, its items, and how long it lives (TTLSeconds; 0 takes
// DefaultCapsuleTTL). Scope narrows the principal's scope as a write's
// does. IdempotencyKey (HTTP: the Idempotency-Key header) makes a retry
// answer the capsule the first request created instead of creating
// another (idempotentID).
type CapsuleRequest struct {
	Scope          *graph.Scope `json:"scope,omitempty"`
	Subject        string       `json:"subject"`
	Audience       []string     `json:"audience"`
	MemoryIDs      []string     `json:"memory_ids,omitempty"`
	VersionIDs     []string     `json:"version_ids,omitempty"`
	DecisionIDs    []string     `json:"decision_ids,omitempty"`
	TTLSeconds     int64        `json:"ttl_seconds,omitempty"`
	IdempotencyKey string       `json:"-"`
}

// ItemView is one memory, version or decision as a capsule or a context
// bundle shows it: the effective view (approved edits applied), pinned to
// the version it shows.
type ItemView struct {
	Kind       string           `json:"kind"`
	ID         string           `json:"id"`
	MemoryID   string           `json:"memory_id,omitempty"`
	VersionID  string           `json:"version_id,omitempty"`
	Type       string           `json:"type,omitempty"`
	Visibility graph.Visibility `json:"visibility,omitempty"`
	Title      string           `json:"title,omitempty"`
	Content    string           `json:"content"`
	// Status is the memory's when it is not active (superseded).
	Status    graph.Status    `json:"status,omitempty"`
	Edits     []string        `json:"edits,omitempty"`
	Citation  *graph.Citation `json:"citation,omitempty"`
	createdAt time.Time
}

// tokens is what the item costs in a context budget.
func (it ItemView) tokens() int { return tokens(it.Title) + tokens(it.Content) }

// CapsuleView is a capsule as its reader sees it: its items resolved now.
// An item that is no longer readable (archived, retracted, quarantined,
// expired, erased) is left out, and so are its ids.
type CapsuleView struct {
	graph.Capsule
	Items []ItemView `json:"items"`
}

// CreateCapsule writes a capsule from p to r.Audience. p needs the write
// permission, and must be able to read every item now (scope, user rule,
// edits): an item it cannot read is ErrNotFound, as for a read, so a
// capsule never hands on what its creator cannot see. Audited.
func (e *Engine) CreateCapsule(ctx context.Context, p graph.Principal, r CapsuleRequest) (graph.Capsule, error) {
	caps, err := e.capsules()
	if err != nil {
		return graph.Capsule{}, err
	}
	pol := e.policy.Current()
	if err := authorize(pol, p, PermWrite); err != nil {
		return graph.Capsule{}, err
	}
	ttl := time.Duration(r.TTLSeconds) * time.Second
	switch {
	case r.TTLSeconds == 0:
		ttl = DefaultCapsuleTTL
	case r.TTLSeconds < 0 || r.TTLSeconds > int64(MaxCapsuleTTL/time.Second):
		return graph.Capsule{}, &graph.FieldError{Field: "ttl_seconds",
			Message: fmt.Sprintf("must be from 1 to %d (%s)", int64(MaxCapsuleTTL/time.Second), MaxCapsuleTTL)}
	}
	now := e.now().UTC()
	f, err := readFilter(pol, p, r.Scope, graph.Filter{ValidAt: now,
		Statuses: []graph.Status{graph.StatusActive, graph.StatusSuperseded}})
	if err != nil {
		return graph.Capsule{}, err
	}
	id, err := idempotentID("capsule.create", f.Scope, p, r.IdempotencyKey)
	if err != nil {
		return graph.Capsule{}, err
	}
	c := graph.Capsule{
		ID: id, Scope: f.Scope, Subject: strings.TrimSpace(r.Subject), Audience: unique(r.Audience),
		MemoryIDs: unique(r.MemoryIDs), VersionIDs: unique(r.VersionIDs), DecisionIDs: unique(r.DecisionIDs),
		CreatedBy: p.ID, CreatedAt: now, ExpiresAt: now.Add(ttl),
	}
	if err := c.Validate(); err != nil {
		return graph.Capsule{}, err
	}
	if err := e.creatorReads(ctx, f, c); err != nil {
		return graph.Capsule{}, err
	}
	n := len(c.MemoryIDs) + len(c.VersionIDs) + len(c.DecisionIDs)
	ev := graph.AuditEvent{ID: graph.NewID(), Scope: c.Scope, Action: AuditCapsuleCreate, SubjectKind: subjectCapsule,
		SubjectID: c.ID, ActorID: p.ID, CreatedAt: now,
		Outcome: truncate(fmt.Sprintf("capsule for %d agents with %d items, expires %s", len(c.Audience), n,
			c.ExpiresAt.Format(time.RFC3339)), graph.MaxTitleLen)}
	created, err := caps.CreateCapsule(ctx, c, ev)
	if err != nil {
		// A retry: the capsule the first request created, while it is live.
		created, err = replayed(r.IdempotencyKey, err, func() (graph.Capsule, error) {
			return caps.GetCapsule(ctx, f, graph.CapsuleQuery{Agent: p.ID, At: now}, id)
		}, func(old graph.Capsule) bool { return sameCapsule(old, c) })
		if err != nil {
			return graph.Capsule{}, fmt.Errorf("create capsule: %w", err)
		}
	}
	return created, nil
}

// sameCapsule reports whether a capsule stored under an idempotency key
// answers request c (its lifetime aside: the retry comes later).
func sameCapsule(old, c graph.Capsule) bool {
	return old.Scope == c.Scope && old.CreatedBy == c.CreatedBy && old.Subject == c.Subject &&
		slices.Equal(old.Audience, c.Audience) && slices.Equal(old.MemoryIDs, c.MemoryIDs) &&
		slices.Equal(old.VersionIDs, c.VersionIDs) && slices.Equal(old.DecisionIDs, c.DecisionIDs)
}

// creatorReads checks that every item of c is readable under f, the
// creator's filter: missing, hidden or unreadable is ErrNotFound naming the
// item.
func (e *Engine) creatorReads(ctx context.Context, f graph.Filter, c graph.Capsule) error {
	vs, err := e.store.GetVersions(ctx, f, c.VersionIDs)
	if err != nil {
		return fmt.Errorf("capsule items: %w", err)
	}
	// A version is readable when its memory is: the versions' memories
	// are checked with the capsule's own.
	owners := make(map[string]string, len(vs))
	ids := slices.Clone(c.MemoryIDs)
	for _, v := range vs {
		owners[v.ID] = v.MemoryID
		ids = append(ids, v.MemoryID)
	}
	ms, err := e.store.GetMemories(ctx, f, unique(ids))
	if err != nil {
		return fmt.Errorf("capsule items: %w", err)
	}
	hs := liveHits(ms)
	if err := e.applyEdits(ctx, f, hs); err != nil {
		return err
	}
	if err := missing("memory", c.MemoryIDs, hs, func(h *hit) string { return h.mem.ID }); err != nil {
		return err
	}
	readable := make(map[string]bool, len(hs))
	for _, h := range hs {
		readable[h.mem.ID] = h.mem.ID != ""
	}
	for _, id := range c.VersionIDs {
		if !readable[owners[id]] {
			return fmt.Errorf("capsule item version %s: %w", id, graph.ErrNotFound)
		}
	}
	if len(c.DecisionIDs) == 0 {
		return nil
	}
	pr, err := e.proposals() // decisions are the Proposals capability's
	if err != nil {
		return err
	}
	for _, id := range c.DecisionIDs {
		if _, err := pr.GetDecision(ctx, f, id); err != nil {
			return fmt.Errorf("capsule item decision %s: %w", id, err)
		}
	}
	return nil
}

// missing is ErrNotFound naming the first of want that got lacks.
func missing[T any](kind string, want []string, got []T, id func(T) string) error {
	have := make(map[string]bool, len(got))
	for _, g := range got {
		have[id(g)] = true
	}
	for _, w := range want {
		if !have[w] {
			return fmt.Errorf("capsule item %s %s: %w", kind, w, graph.ErrNotFound)
		}
	}
	return nil
}

// GetCapsule reads capsule id for p, an agent of its audience or its
// creator, with its items resolved now (docs/curation.md says what an
// audience sees). Anyone else, and everyone once it is revoked or expired,
// gets ErrNotFound: 404, which does not tell that it exists.
func (e *Engine) GetCapsule(ctx context.Context, p graph.Principal, id string) (CapsuleView, error) {
	caps, err := e.capsules()
	if err != nil {
		return CapsuleView{}, err
	}
	if err := graph.CheckID("id", id); err != nil {
		return CapsuleView{}, err
	}
	pol := e.policy.Current()
	f, err := readFilter(pol, p, nil, graph.Filter{})
	if err != nil {
		return CapsuleView{}, err
	}
	now := e.now().UTC()
	c, err := caps.GetCapsule(ctx, f, graph.CapsuleQuery{Agent: p.ID, At: now}, id)
	if err != nil {
		return CapsuleView{}, fmt.Errorf("capsule %s: %w", id, err)
	}
	views, err := e.resolveCapsules(ctx, p, []graph.Capsule{c}, now, "")
	if err != nil {
		return CapsuleView{}, err
	}
	return views[0], nil
}

// CapsuleListRequest pages through the live capsules addressed to the
// caller (or those it created, Sent).
type CapsuleListRequest struct {
	Sent   bool
	Limit  int
	Cursor string
}

// MaxCapsulePage caps a page of capsules (each with up to
// graph.MaxCapsuleItems items resolved).
const MaxCapsulePage = 50

// ListCapsules lists the live capsules addressed to p (or created by p,
// r.Sent), newest first, with their items resolved now.
func (e *Engine) ListCapsules(ctx context.Context, p graph.Principal, r CapsuleListRequest) ([]CapsuleView, string, error) {
	caps, err := e.capsules()
	if err != nil {
		return nil, "", err
	}
	if r.Limit < 0 || r.Limit > MaxCapsulePage {
		return nil, "", &graph.FieldError{Field: "limit", Message: fmt.Sprintf("must be from 1 to %d", MaxCapsulePage)}
	}
	if r.Limit == 0 {
		r.Limit = 20
	}
	pol := e.policy.Current()
	f, err := readFilter(pol, p, nil, graph.Filter{})
	if err != nil {
		return nil, "", err
	}
	now := e.now().UTC()
	cs, next, err := caps.ListCapsules(ctx, f, graph.CapsuleQuery{Agent: p.ID, At: now, Sent: r.Sent},
		graph.Page{Limit: r.Limit, Cursor: r.Cursor})
	if err != nil {
		return nil, "", fmt.Errorf("list capsules: %w", err)
	}
	views, err := e.resolveCapsules(ctx, p, cs, now, "")
	if err != nil {
		return nil, "", err
	}
	return views, next, nil
}

// RevokeCapsule revokes capsule id. Only its creator may (403 for an agent
// of its audience; 404 for anyone else, or when it is revoked or expired
// already, as for a read). Audited.
func (e *Engine) RevokeCapsule(ctx context.Context, p graph.Principal, id, reason string) (graph.Capsule, error) {
	caps, err := e.capsules()
	if err != nil {
		return graph.Capsule{}, err
	}
	if err := graph.CheckID("id", id); err != nil {
		return graph.Capsule{}, err
	}
	pol := e.policy.Current()
	f, err := readFilter(pol, p, nil, graph.Filter{})
	if err != nil {
		return graph.Capsule{}, err
	}
	now := e.now().UTC()
	c, err := caps.GetCapsule(ctx, f, graph.CapsuleQuery{Agent: p.ID, At: now}, id)
	if err != nil {
		return graph.Capsule{}, fmt.Errorf("capsule %s: %w", id, err)
	}
	if c.CreatedBy != p.ID {
		return graph.Capsule{}, fmt.Errorf("%w: only capsule %s's creator may revoke it", graph.ErrForbidden, id)
	}
	ev := graph.AuditEvent{ID: graph.NewID(), Scope: c.Scope, Action: AuditCapsuleRevoke, SubjectKind: subjectCapsule,
		SubjectID: c.ID, ActorID: p.ID, Outcome: "revoked", Reason: truncate(reason, graph.MaxTitleLen), CreatedAt: now}
	revoked, err := caps.RevokeCapsule(ctx, p.Scope, id, p.ID, now, ev)
	if err != nil {
		return graph.Capsule{}, fmt.Errorf("revoke capsule %s: %w", id, err)
	}
	return revoked, nil
}

// resolveCapsules reads the items of cs for reader p at now: the items of
// all capsules of one scope at once (a bundle resolves twenty capsules in
// three store reads, not sixty). A capsule is a grant: its audience reads
// its items as its creator could when it made it (checked then), so the
// items are read under the capsule's scope for every user, never beyond
// its ids; what hides a memory from everyone still hides it here
// (archive, retract, quarantine, a block on channel, expiry, erasure).
func (e *Engine) resolveCapsules(ctx context.Context, p graph.Principal, cs []graph.Capsule, now time.Time, channel string) ([]CapsuleView, error) {
	var scopes []graph.Scope
	byScope := map[graph.Scope]*graph.Capsule{}
	for _, c := range cs {
		all := byScope[c.Scope]
		if all == nil {
			all = &graph.Capsule{Scope: c.Scope}
			byScope[c.Scope] = all
			scopes = append(scopes, c.Scope)
		}
		all.MemoryIDs = append(all.MemoryIDs, c.MemoryIDs...)
		all.VersionIDs = append(all.VersionIDs, c.VersionIDs...)
		all.DecisionIDs = append(all.DecisionIDs, c.DecisionIDs...)
	}
	resolved := map[graph.Scope]map[string]ItemView{}
	for _, sc := range scopes {
		all := byScope[sc]
		all.MemoryIDs, all.VersionIDs, all.DecisionIDs = unique(all.MemoryIDs), unique(all.VersionIDs), unique(all.DecisionIDs)
		items, err := e.capsuleItems(ctx, capsuleGrant(*all, p, now, channel), *all)
		if err != nil {
			return nil, fmt.Errorf("capsule items: %w", err)
		}
		resolved[sc] = make(map[string]ItemView, len(items))
		for _, it := range items {
			resolved[sc][it.Kind+"/"+it.ID] = it
		}
	}
	out := make([]CapsuleView, len(cs))
	for i, c := range cs {
		v := CapsuleView{Capsule: c, Items: []ItemView{}}
		v.MemoryIDs, v.VersionIDs, v.DecisionIDs = nil, nil, nil
		for _, l := range []struct {
			kind string
			ids  []string
			keep *[]string
		}{{ItemMemory, c.MemoryIDs, &v.MemoryIDs}, {ItemVersion, c.VersionIDs, &v.VersionIDs},
			{ItemDecision, c.DecisionIDs, &v.DecisionIDs}} {
			for _, id := range l.ids {
				if it, ok := resolved[c.Scope][l.kind+"/"+id]; ok {
					v.Items = append(v.Items, it)
					*l.keep = append(*l.keep, id)
				}
			}
		}
		out[i] = v
	}
	return out, nil
}

// capsuleGrant is the filter a capsule's items are read with.
func capsuleGrant(c graph.Capsule, p graph.Principal, now time.Time, channel string) graph.Filter {
	return graph.Filter{Scope: c.Scope, Reader: graph.Reader{UserID: p.User(), AllUsers: true, Subscopes: true},
		Statuses: []graph.Status{graph.StatusActive, graph.StatusSuperseded}, ValidAt: now, Channel: channel}
}

// capsuleItems resolves c's items under g, in the capsule's order
// (memories, versions, decisions), leaving out those g no longer reads.
func (e *Engine) capsuleItems(ctx context.Context, g graph.Filter, c graph.Capsule) ([]ItemView, error) {
	var items []ItemView
	if len(c.MemoryIDs) > 0 {
		ms, err := e.store.GetMemories(ctx, g, c.MemoryIDs)
		if err != nil {
			return nil, err
		}
		hs, err := e.effectiveHits(ctx, g, liveHits(ms))
		if err != nil {
			return nil, err
		}
		for _, h := range hs {
			items = append(items, memoryItem(h))
		}
	}
	if len(c.VersionIDs) > 0 {
		vs, err := e.store.GetVersions(ctx, g, c.VersionIDs)
		if err != nil {
			return nil, err
		}
		ids := make([]string, len(vs))
		for i, v := range vs {
			ids[i] = v.MemoryID
		}
		ms, err := e.store.GetMemories(ctx, g, unique(ids))
		if err != nil {
			return nil, err
		}
		hs := liveHits(ms)
		if err := e.applyEdits(ctx, g, hs); err != nil {
			return nil, err
		}
		byMemory := map[string]*hit{}
		for _, h := range hs {
			if h.mem.ID != "" {
				byMemory[h.mem.ID] = h
			}
		}
		for _, v := range vs {
			h := byMemory[v.MemoryID]
			if h == nil {
				continue
			}
			vh := *h
			vh.version, vh.hasVersion = v, true
			if v.ID != h.mem.CurrentVersionID {
				vh.amended = nil // an amendment applies to the current version only
			}
			it := memoryItem(&vh)
			it.Kind, it.ID = ItemVersion, v.ID
			items = append(items, it)
		}
	}
	pr := e.caps.proposals // a store without decisions has no decision items to show
	for _, id := range c.DecisionIDs {
		if pr == nil {
			break
		}
		d, err := pr.GetDecision(ctx, g, id)
		if errors.Is(err, graph.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		items = append(items, ItemView{Kind: ItemDecision, ID: d.ID, Title: d.Kind + " decision: " + d.Outcome,
			Content: strings.TrimSpace(strings.Join([]string{d.Rule, d.Reason}, " ")), createdAt: d.CreatedAt})
	}
	return items, nil
}

// effectiveHits applies the approved edits to hs (dropping those they
// hide) and loads each survivor's current version.
func (e *Engine) effectiveHits(ctx context.Context, f graph.Filter, hs []*hit) ([]*hit, error) {
	if err := e.applyEdits(ctx, f, hs); err != nil {
		return nil, err
	}
	hs = slices.DeleteFunc(hs, func(h *hit) bool { return h.mem.ID == "" })
	if err := e.loadVersions(ctx, f, hs); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(hs, func(h *hit) bool { return !h.hasVersion }), nil
}

// liveHits are hits of ms, the memories of a fetch by id, that a capsule
// shows: active or superseded. A fetch by id returns archived memories too
// (graph.Store.GetMemory); a capsule leaves them out until restored.
func liveHits(ms []graph.Memory) []*hit {
	hs := make([]*hit, 0, len(ms))
	for _, m := range ms {
		if m.Status == graph.StatusActive || m.Status == graph.StatusSuperseded {
			hs = append(hs, &hit{mem: m})
		}
	}
	return hs
}

// memoryItem is hit h as an item: its effective text, cited by version.
func memoryItem(h *hit) ItemView {
	cit := citationOf(h.mem, h.version.ID)
	it := ItemView{Kind: ItemMemory, ID: h.mem.ID, MemoryID: h.mem.ID, VersionID: h.version.ID, Type: h.mem.Type,
		Visibility: h.mem.Visibility, Title: h.mem.Title, Content: h.text(), Edits: h.edits, Citation: &cit,
		createdAt: h.mem.CreatedAt}
	if h.mem.Status != graph.StatusActive {
		it.Status = h.mem.Status
	}
	return it
}

// unique returns ids without repeats, in first-seen order.
func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	var out []string
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
