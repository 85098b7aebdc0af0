package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// MemoryView is a memory with its current version, as a direct fetch
// returns it.
type MemoryView struct {
	Memory  graph.Memory  `json:"memory"`
	Version graph.Version `json:"version"`
	// HeadID names the newest memory of a superseded memory's chain (A
	// superseded by B superseded by C: C), the one to read or supersede;
	// Memory.SupersededBy is only the next hop.
	HeadID string `json:"head_id,omitempty"`
	// Content is the effective text: an approved amendment's, else the
	// version's (which stays as it was written). Memory.Importance is the
	// effective importance; Edits lists the edits applied (foldEdits).
	Content string   `json:"content"`
	Edits   []string `json:"edits,omitempty"`
}

// GetOptions apply edits to a direct fetch as to a search: a memory
// blocked on Channel is not found; a quarantined one is found only with
// IncludeQuarantined (permission read_quarantined).
//
// TimeTravel reads the memory as known at KnownAt (its status, version,
// successor and edits then; not found when written later or erased) and,
// with AsOf, only if it is valid at AsOf.
type GetOptions struct {
	Channel            string
	IncludeQuarantined bool
	TimeTravel
}

// Get fetches one memory in p's scope with its current version and
// reinforces it (access_count + 1, last_accessed = now).
func (e *Engine) Get(ctx context.Context, p graph.Principal, id string) (MemoryView, error) {
	return e.GetWith(ctx, p, id, GetOptions{})
}

// GetWith is Get with options: the effective view of the memory (approved
// edits applied) for a reader on o.Channel.
func (e *Engine) GetWith(ctx context.Context, p graph.Principal, id string, o GetOptions) (MemoryView, error) {
	now := e.now().UTC()
	if err := o.check(now); err != nil {
		return MemoryView{}, err
	}
	want := graph.Filter{Channel: o.Channel, IncludeQuarantined: o.IncludeQuarantined}
	o.apply(&want, now, false)
	f, err := readFilter(e.policy.Current(), p, nil, want)
	if err != nil {
		return MemoryView{}, err
	}
	m, err := e.store.GetMemory(ctx, f, id)
	if err != nil {
		return MemoryView{}, fmt.Errorf("get memory %s: %w", id, err)
	}
	h := &hit{mem: m}
	if err := e.applyEdits(ctx, f, []*hit{h}); err != nil {
		return MemoryView{}, err
	}
	if h.mem.ID == "" {
		return MemoryView{}, fmt.Errorf("get memory %s: %w", id, graph.ErrNotFound)
	}
	m = h.mem
	v, err := e.store.GetVersion(ctx, f, m.CurrentVersionID)
	if err != nil {
		return MemoryView{}, fmt.Errorf("get memory %s current version: %w", id, err)
	}
	if err := e.store.Touch(ctx, m.Scope, []string{m.ID}, now); err != nil {
		e.log.Warn("reinforce on read failed", "memory", m.ID, "err", err)
	} else {
		m.AccessCount++
		m.LastAccessed = now
	}
	h.version = v
	view := MemoryView{Memory: m, Version: v, Content: h.text(), Edits: h.edits}
	if m.SupersededBy != "" {
		if view.HeadID, err = e.headOf(ctx, f, m); err != nil {
			return MemoryView{}, fmt.Errorf("get memory %s: %w", id, err)
		}
	}
	return view, nil
}

// headOf is the id of the newest memory of m's supersession chain that f
// admits (its successors may be archived; retracted ones are not followed),
// or "" when f admits none of m's successors.
func (e *Engine) headOf(ctx context.Context, f graph.Filter, m graph.Memory) (string, error) {
	f.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}
	f.ValidAt = time.Time{}
	head, err := e.store.Resolve(ctx, f, m.ID)
	if err != nil {
		return "", fmt.Errorf("head of supersession chain of %s: %w", m.ID, err)
	}
	if head.ID == m.ID {
		return "", nil
	}
	return head.ID, nil
}

// ListRequest narrows a listing. Scope may narrow the principal's scope;
// zero fields do not filter.
type ListRequest struct {
	Scope         *graph.Scope
	Types         []string
	UserID        string
	Tags          []string
	CreatedAfter  time.Time
	CreatedBefore time.Time
	Statuses      []graph.Status
	Limit         int
	Cursor        string
}

// List lists memories in p's scope, newest first, one page at a time.
func (e *Engine) List(ctx context.Context, p graph.Principal, r ListRequest) (graph.Listing, error) {
	f, err := readFilter(e.policy.Current(), p, r.Scope, graph.Filter{
		Types: r.Types, UserID: r.UserID, Tags: r.Tags,
		CreatedAfter: r.CreatedAfter, CreatedBefore: r.CreatedBefore, Statuses: r.Statuses,
	})
	if err != nil {
		return graph.Listing{}, err
	}
	l, err := e.store.ListMemories(ctx, f, graph.Page{Limit: r.Limit, Cursor: r.Cursor})
	if err != nil {
		return graph.Listing{}, fmt.Errorf("list memories: %w", err)
	}
	return l, nil
}
