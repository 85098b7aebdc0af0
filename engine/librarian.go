package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// GateRequestView is a queued write as a librarian reviews it: the stored
// request and the write it carries.
type GateRequestView struct {
	graph.GateRequest
	// Write is the request as its author stated it; nil when the payload
	// cannot be decoded.
	Write *IngestRequest `json:"write,omitempty"`
	// RequestedRoles are the author's roles when the write was queued.
	RequestedRoles []string `json:"requested_roles,omitempty"`
}

// Decision is the outcome of a librarian's approve or reject.
type Decision struct {
	Request GateRequestView `json:"request"`
	// Result is what the approved write became; nil for a rejection.
	Result *IngestResult `json:"result,omitempty"`
	// Reason is why the request was rejected.
	Reason string `json:"reason,omitempty"`
	// Fix suggests how the author can get the write through.
	Fix string `json:"fix,omitempty"`
}

// ListGateRequests lists queued writes in p's reach (approverReaches: its
// own scope, and beneath it with the subscopes permission) with status
// (pending when empty), oldest first, one page at a time. It needs the
// approve permission. Without subscopes a page may hold fewer than its
// limit (requests queued beneath p's scope are left out of it); follow the
// cursor until it is empty.
func (e *Engine) ListGateRequests(ctx context.Context, p graph.Principal, status graph.GateStatus, page graph.Page) ([]graph.GateRequest, string, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, PermApprove); err != nil {
		return nil, "", err
	}
	if status == "" {
		status = graph.GatePending
	}
	switch status {
	case graph.GatePending, graph.GateApproved, graph.GateRejected:
	default:
		return nil, "", &graph.FieldError{Field: "status", Message: fmt.Sprintf("%q is not pending, approved or rejected", status)}
	}
	reqs, next, err := e.store.ListGateRequests(ctx, queueFilter(p), status, page)
	if err != nil {
		return nil, "", fmt.Errorf("list gate requests: %w", err)
	}
	reqs = slices.DeleteFunc(reqs, func(g graph.GateRequest) bool { return !approverReaches(pol, p, g.Scope) })
	return reqs, next, nil
}

// queueFilter finds the gate requests in p's scope and beneath it (they
// have no owner, so the scope rule alone applies); the engine then keeps
// those p may see (approverReaches, or its own).
func queueFilter(p graph.Principal) graph.Filter {
	return graph.Filter{Scope: p.Scope, Reader: graph.Reader{UserID: p.User(), Subscopes: true}}
}

// GetGateRequest returns one queued write. Its author sees their own; a
// librarian (approve permission) any in its reach (approverReaches). Any
// other request is not found, so that an id says nothing about a queue the
// caller may not see.
func (e *Engine) GetGateRequest(ctx context.Context, p graph.Principal, id string) (GateRequestView, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, PermRead); err != nil {
		return GateRequestView{}, err
	}
	g, err := e.store.GetGateRequest(ctx, queueFilter(p), id)
	if err != nil {
		return GateRequestView{}, fmt.Errorf("gate request %s: %w", id, err)
	}
	if g.RequestedBy != p.ID && !(pol.Allows(p.Roles, PermApprove) && approverReaches(pol, p, g.Scope)) {
		return GateRequestView{}, fmt.Errorf("gate request %s: %w", id, graph.ErrNotFound)
	}
	v, _ := view(g)
	return v, nil
}

// view decodes a request's payload.
func view(g graph.GateRequest) (GateRequestView, *queuedWrite) {
	var q queuedWrite
	if err := json.Unmarshal(g.Payload, &q); err != nil {
		return GateRequestView{GateRequest: g}, nil
	}
	return GateRequestView{GateRequest: g, Write: &q.Request, RequestedRoles: q.Principal.Roles}, &q
}

// ApproveGateRequest replays a queued write through the write path minus
// the gate, as its author, and settles the request in the same
// transaction as the write (graph.GateSettlement): both happen or neither.
// The new memory's approval audit (with the rule that queued it and the
// librarian as actor) is written in that transaction too. If integrity now
// finds an identical memory, the approval reinforces it. It needs the
// approve permission; a request that is not pending, or that another
// librarian settles meanwhile, is ErrConflict and nothing is written.
func (e *Engine) ApproveGateRequest(ctx context.Context, p graph.Principal, id, note string) (Decision, error) {
	pol := e.policy.Current()
	g, q, err := e.pendingRequest(ctx, pol, p, id)
	if err != nil {
		return Decision{}, err
	}
	reason := "approved by librarian " + p.ID
	if note != "" {
		reason += ": " + note
	}
	s := &settlement{request: g, scope: p.Scope, by: p.ID, reason: reason, at: e.now().UTC()}
	res, err := e.ingest(ctx, pol, q.Principal, []IngestRequest{q.Request}, ingestOpts{approvedBy: p.ID, rule: g.Rule, note: reason, settle: s})
	if err != nil {
		return Decision{}, fmt.Errorf("approve gate request %s: %w", id, err)
	}
	r := res[0]
	if r.Status == StatusRejected {
		// The stored state changed since the write was queued (e.g. the
		// memory it supersedes is gone). The request stays pending.
		v, _ := view(g)
		return Decision{Request: v, Result: &r, Reason: r.Reason, Fix: r.Fix},
			fmt.Errorf("%w: gate request %s cannot be applied: %s (%s)", graph.ErrConflict, id, r.Reason, r.Fix)
	}
	decided := g
	decided.Status, decided.DecidedBy, decided.MemoryID, decided.DecidedAt = graph.GateApproved, p.ID, r.ID, s.at
	decided.Reason = truncate(reason, graph.MaxTitleLen)
	v, _ := view(decided)
	return Decision{Request: v, Result: &r}, nil
}

// RejectGateRequest turns a queued write down with reason and tells its
// author how to get it through: when an active memory with the same key
// exists, the fix is to update it instead. It needs the approve permission.
func (e *Engine) RejectGateRequest(ctx context.Context, p graph.Principal, id, reason string) (Decision, error) {
	pol := e.policy.Current()
	g, q, err := e.pendingRequest(ctx, pol, p, id)
	if err != nil {
		return Decision{}, err
	}
	if reason == "" {
		reason = "rejected by librarian " + p.ID
	}
	fix := e.suggestFix(ctx, pol, q, g)
	now := e.now().UTC()
	decided, err := e.store.DecideGateRequest(ctx, g.Scope, id,
		graph.GateDecision{Status: graph.GateRejected, DecidedBy: p.ID, Reason: truncate(reason, graph.MaxTitleLen), At: now},
		graph.AuditEvent{
			ID: graph.NewID(), Scope: g.Scope, Action: AuditLibrarianReject, SubjectKind: subjectGateRequest, SubjectID: id,
			ActorID: p.ID, Rule: g.Rule, Outcome: "rejected", Reason: truncate(reason+"; fix: "+fix, graph.MaxTitleLen), CreatedAt: now,
		})
	if err != nil {
		return Decision{}, fmt.Errorf("settle gate request %s: %w", id, err)
	}
	v, _ := view(decided)
	return Decision{Request: v, Reason: reason, Fix: fix}, nil
}

// pendingRequest loads a pending request for a librarian to decide under
// pol: one in its reach (approverReaches), else not found.
func (e *Engine) pendingRequest(ctx context.Context, pol *policy.Policy, p graph.Principal, id string) (graph.GateRequest, *queuedWrite, error) {
	if err := authorize(pol, p, PermApprove); err != nil {
		return graph.GateRequest{}, nil, err
	}
	g, err := e.store.GetGateRequest(ctx, queueFilter(p), id)
	if err == nil && !approverReaches(pol, p, g.Scope) {
		err = graph.ErrNotFound
	}
	if err != nil {
		return graph.GateRequest{}, nil, fmt.Errorf("gate request %s: %w", id, err)
	}
	if g.Status != graph.GatePending {
		return graph.GateRequest{}, nil, fmt.Errorf("%w: gate request %s is already %s", graph.ErrConflict, id, g.Status)
	}
	_, q := view(g)
	if q == nil {
		return graph.GateRequest{}, nil, fmt.Errorf("gate request %s: payload is not a queued write", id)
	}
	return g, q, nil
}

// suggestFix tells the author of a rejected write what to do instead.
func (e *Engine) suggestFix(ctx context.Context, pol *policy.Policy, q *queuedWrite, g graph.GateRequest) string {
	const generic = "revise the write and submit it again"
	plans, err := e.prepare(ctx, pol, q.Principal, []IngestRequest{q.Request}, e.now().UTC())
	if err != nil {
		return generic
	}
	pl := plans[0]
	pl.req.Supersedes = ""
	// What integrity would do with the write now: a restatement names the
	// memory it duplicates, a new value the memory holding its slot; a
	// different fact under the same key names nothing.
	if err := e.integrity(ctx, pl, newBatch()); err == nil && pl.target.ID != "" {
		m, k := pl.target, pl.target.CanonicalKey
		switch pl.act {
		case actReinforce:
			return fmt.Sprintf("duplicate of active memory %s (key %s): update it instead (supersedes: %s)", m.ID, k, m.ID)
		case actSupersede, actVersion:
			return fmt.Sprintf("active memory %s holds the same slot (key %s): update it instead (supersedes: %s)", m.ID, k, m.ID)
		}
	}
	if g.Rule != "" {
		return fmt.Sprintf("%s; it was queued by gate rule %q (%s)", generic, g.Rule, g.Reason)
	}
	return generic
}

// settlement is the gate request a librarian's approval carries out. The
// replayed write settles it in its own transaction (graph.GateSettlement),
// so an approval never leaves the memory written and the request pending,
// nor the request approved and the memory missing.
type settlement struct {
	request graph.GateRequest
	scope   graph.Scope // the librarian's
	by      string
	reason  string
	at      time.Time
}

// of is the store's settlement for the write pl makes; nil when s is nil
// (an ordinary write).
func (s *settlement) of(pl *plan) *graph.GateSettlement {
	if s == nil {
		return nil
	}
	var (
		status IngestStatus
		id     string
	)
	switch pl.act {
	case actNew:
		status, id = StatusApproved, pl.in.Memory.ID
	case actSupersede:
		status, id = StatusSuperseded, pl.in.Memory.ID
	case actVersion:
		status, id = StatusUpdated, pl.targetID()
	case actReinforce:
		status, id = StatusReinforced, pl.targetID()
	default:
		return nil
	}
	reason := truncate(s.reason, graph.MaxTitleLen)
	return &graph.GateSettlement{
		RequestID: s.request.ID, Scope: s.scope,
		Decision: graph.GateDecision{Status: graph.GateApproved, DecidedBy: s.by, Reason: reason, MemoryID: id, At: s.at},
		Audit: graph.AuditEvent{
			ID: graph.NewID(), Scope: s.request.Scope, Action: AuditLibrarianApprove, SubjectKind: subjectGateRequest,
			SubjectID: s.request.ID, ActorID: s.by, Rule: s.request.Rule, Outcome: string(status) + " " + id,
			Reason: reason, CreatedAt: s.at,
		},
	}
}

// stillPending returns ErrConflict when the request was settled by someone
// else; nil when it is still pending (or s is nil).
func (s *settlement) stillPending(ctx context.Context, st gateReader) error {
	if s == nil {
		return nil
	}
	g, err := st.GetGateRequest(ctx, graph.Filter{Scope: s.scope, Reader: graph.System}, s.request.ID)
	if err != nil {
		return fmt.Errorf("gate request %s: %w", s.request.ID, err)
	}
	if g.Status != graph.GatePending {
		return fmt.Errorf("%w: gate request %s is already %s", graph.ErrConflict, g.ID, g.Status)
	}
	return nil
}
