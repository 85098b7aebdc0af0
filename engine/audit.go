package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// AuditRequest selects audit events. Zero fields do not filter. MemoryID
// keeps the events about that memory (its writes, gate decisions and
// edits); From is inclusive, To exclusive.
type AuditRequest struct {
	MemoryID string
	ActorID  string
	Action   string
	From     time.Time
	To       time.Time
	Limit    int
	Cursor   string
}

// ListAudit lists audit events, oldest first, one page at a time. It
// needs the audit_read permission. The scope and user rules of reads hold
// and are pushed into the store query: p sees the events of its scope (and
// beneath it with subscopes), never one about a memory private to another
// user (unless read_all_users). With MemoryID, the memory must be one p may
// read, whatever edit hides it (a retracted or quarantined memory's trail
// is what an auditor asks for; events carry no content); else ErrNotFound.
func (e *Engine) ListAudit(ctx context.Context, p graph.Principal, r AuditRequest) ([]graph.AuditEvent, string, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, policy.PermAuditRead); err != nil {
		return nil, "", err
	}
	if !r.From.IsZero() && !r.To.IsZero() && !r.From.Before(r.To) {
		return nil, "", &graph.FieldError{Field: "to", Message: "must be after from"}
	}
	f := graph.Filter{Scope: p.Scope, Reader: readerOf(pol, p)}
	q := graph.AuditQuery{ActorID: r.ActorID, Action: r.Action, From: r.From, To: r.To}
	if r.MemoryID != "" {
		if err := graph.CheckID("memory_id", r.MemoryID); err != nil {
			return nil, "", err
		}
		g := f
		g.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted,
			graph.StatusErased} // an erased memory's trail stays readable (its tombstone keeps the access fields)
		g.IncludeQuarantined = true
		if _, err := e.store.GetMemory(ctx, g, r.MemoryID); err != nil {
			return nil, "", fmt.Errorf("audit of memory: %w", err)
		}
		q.SubjectID = r.MemoryID
	}
	evs, next, err := e.store.ListAudit(ctx, f, q, graph.Page{Limit: r.Limit, Cursor: r.Cursor})
	if err != nil {
		return nil, "", fmt.Errorf("list audit: %w", err)
	}
	return evs, next, nil
}
