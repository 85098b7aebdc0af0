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
}

// Get fetches one memory in p's scope with its current version and
// reinforces it (access_count + 1, last_accessed = now).
func (e *Engine) Get(ctx context.Context, p graph.Principal, id string) (MemoryView, error) {
	f, err := readFilter(e.policy.Current(), p, nil, graph.Filter{})
	if err != nil {
		return MemoryView{}, err
	}
	m, err := e.store.GetMemory(ctx, f, id)
	if err != nil {
		return MemoryView{}, fmt.Errorf("get memory %s: %w", id, err)
	}
	v, err := e.store.GetVersion(ctx, f, m.CurrentVersionID)
	if err != nil {
		return MemoryView{}, fmt.Errorf("get memory %s current version: %w", id, err)
	}
	now := e.now().UTC()
	if err := e.store.Touch(ctx, m.Scope, []string{m.ID}, now); err != nil {
		e.log.Warn("reinforce on read failed", "memory", m.ID, "err", err)
	} else {
		m.AccessCount++
		m.LastAccessed = now
	}
	return MemoryView{Memory: m, Version: v}, nil
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
