package graphtest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// ErrInjected is what every fault a Faulty store injects wraps (through
// *InjectedError), so a test tells an injected failure from a real one
// with errors.Is.
var ErrInjected = errors.New("injected fault")

// InjectedError is the error an armed Fault returns when it has no Err of
// its own: which method failed, on which of its calls, and whether the
// real call had committed first (a lost acknowledgement).
type InjectedError struct {
	Method string
	Call   int
	Lost   bool
}

func (e *InjectedError) Error() string {
	if e.Lost {
		return fmt.Sprintf("%s call %d: acknowledgement lost after commit: %v", e.Method, e.Call, ErrInjected)
	}
	return fmt.Sprintf("%s call %d: %v", e.Method, e.Call, ErrInjected)
}

// Unwrap returns ErrInjected.
func (e *InjectedError) Unwrap() error { return ErrInjected }

// Fault is one failure armed on a Faulty store.
type Fault struct {
	// Method names the store method that fails: one of graph.Store's or
	// of a capability's (graph.Proposals, Edits, Capsules, Relations),
	// e.g. "CreateMemories". Arm panics on any other name.
	Method string
	// Nth is the call of Method that fails, counted from when the fault is
	// armed: 1 (or 0) is the next call.
	Nth int
	// From makes every call from the Nth on fail, not only the Nth.
	From bool
	// Lost runs the real call first and fails only when it succeeded: the
	// write committed but the caller never heard (a lost commit
	// acknowledgement, a connection dropped after COMMIT).
	Lost bool
	// Err is the error the call returns; nil returns an *InjectedError.
	Err error
	// Do, when set, runs instead of the failure, before the real call
	// (e.g. a concurrent writer acting on the inner store): its error
	// fails the call, nil lets the call go on to the store.
	Do func(ctx context.Context) error

	armedAt int // calls of Method before it was armed
}

// Faulty wraps a real store and fails the calls its armed faults name,
// for tests of partial failure (compare Vault's physical.ErrorInjector).
// It implements graph.Store and every capability by passing each call on to
// the wrapped store, so an engine built on it finds the capabilities it
// would find on the store itself; graph.Counter is passed on too. It counts
// every call by method and records their order, so a test can learn the
// steps a use case takes and then fail each in turn.
//
// Faults only ever fail a call, before or after the real one: they never
// change what the store writes, so whatever a test sees in the store after
// a fault is what a real failure at that step would leave.
type Faulty struct {
	s Store

	mu     sync.Mutex
	calls  map[string]int
	log    []string
	faults []*Fault
}

// Static checks: Faulty is a store with every capability.
var (
	_ Store         = (*Faulty)(nil)
	_ graph.Counter = (*Faulty)(nil)
)

// NewFaulty wraps s; no fault is armed.
func NewFaulty(s Store) *Faulty {
	return &Faulty{s: s, calls: map[string]int{}}
}

// Inner returns the wrapped store: reads and writes on it bypass the faults
// and are not counted.
func (w *Faulty) Inner() Store { return w.s }

// storeMethods are the methods a Fault may name.
var storeMethods = func() map[string]bool {
	out := map[string]bool{}
	for _, t := range []reflect.Type{reflect.TypeFor[Store](), reflect.TypeFor[graph.Counter]()} {
		for i := range t.NumMethod() {
			out[t.Method(i).Name] = true
		}
	}
	return out
}()

// Arm arms faults; each fires once (or, with From, on every call from its
// Nth on) until Clear. A fault naming no store method panics: it is a typo
// in the test.
func (w *Faulty) Arm(faults ...Fault) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range faults {
		if !storeMethods[f.Method] {
			panic(fmt.Sprintf("graphtest: Faulty.Arm: %q is no store method", f.Method))
		}
		f.Nth = max(f.Nth, 1)
		f.armedAt = w.calls[f.Method]
		w.faults = append(w.faults, &f)
	}
}

// Clear disarms every fault (the counts and the log stay).
func (w *Faulty) Clear() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.faults = nil
}

// Calls returns how many times method was called through w.
func (w *Faulty) Calls(method string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.calls[method]
}

// Log returns the methods called through w, in order, since the last
// ResetLog.
func (w *Faulty) Log() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.log...)
}

// ResetLog empties the log (the counts stay: armed faults count from them).
func (w *Faulty) ResetLog() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.log = nil
}

// fire counts a call of method and returns the fault that fires on it and
// the call's number, or nil. A fault that fired for the last time is
// disarmed.
func (w *Faulty) fire(method string) (*Fault, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls[method]++
	w.log = append(w.log, method)
	n := w.calls[method]
	for i, f := range w.faults {
		if f.Method != method {
			continue
		}
		k := n - f.armedAt
		if k == f.Nth || (f.From && k > f.Nth) {
			if !f.From {
				w.faults = append(w.faults[:i:i], w.faults[i+1:]...)
			}
			return f, n
		}
	}
	return nil, n
}

// run runs call, the real store call of method, under the faults.
func (w *Faulty) run(ctx context.Context, method string, call func() error) error {
	f, n := w.fire(method)
	switch {
	case f == nil:
		return call()
	case f.Do != nil:
		if err := f.Do(ctx); err != nil {
			return err
		}
		return call()
	case f.Lost:
		if err := call(); err != nil {
			return err
		}
	}
	if f.Err != nil {
		return f.Err
	}
	return &InjectedError{Method: method, Call: n, Lost: f.Lost}
}

// run1 is run for a call that returns a value.
func run1[T any](w *Faulty, ctx context.Context, method string, call func() (T, error)) (T, error) {
	var v T
	err := w.run(ctx, method, func() error {
		var err error
		v, err = call()
		return err
	})
	return v, err
}

// Close closes the wrapped store (never faulted).
func (w *Faulty) Close() error { return w.s.Close() }

// Counts implements graph.Counter when the wrapped store does; otherwise
// it returns graph.ErrUnsupported.
func (w *Faulty) Counts(ctx context.Context) (graph.Counts, error) {
	c, ok := w.s.(graph.Counter)
	if !ok {
		return graph.Counts{}, fmt.Errorf("graphtest: %T has no counts: %w", w.s, graph.ErrUnsupported)
	}
	return run1(w, ctx, "Counts", func() (graph.Counts, error) { return c.Counts(ctx) })
}

// The methods below pass each call on to the wrapped store under the faults.

// CreateMemories implements graph.Store.
func (w *Faulty) CreateMemories(ctx context.Context, in []graph.MemoryInput) ([]graph.Created, error) {
	return run1(w, ctx, "CreateMemories", func() ([]graph.Created, error) { return w.s.CreateMemories(ctx, in) })
}

// AddVersion implements graph.Store.
func (w *Faulty) AddVersion(ctx context.Context, s graph.Scope, memoryID string, in graph.VersionInput) (graph.Version, error) {
	return run1(w, ctx, "AddVersion", func() (graph.Version, error) { return w.s.AddVersion(ctx, s, memoryID, in) })
}

// GetMemory implements graph.Store.
func (w *Faulty) GetMemory(ctx context.Context, f graph.Filter, id string) (graph.Memory, error) {
	return run1(w, ctx, "GetMemory", func() (graph.Memory, error) { return w.s.GetMemory(ctx, f, id) })
}

// GetMemories implements graph.Store.
func (w *Faulty) GetMemories(ctx context.Context, f graph.Filter, ids []string) ([]graph.Memory, error) {
	return run1(w, ctx, "GetMemories", func() ([]graph.Memory, error) { return w.s.GetMemories(ctx, f, ids) })
}

// GetVersion implements graph.Store.
func (w *Faulty) GetVersion(ctx context.Context, f graph.Filter, id string) (graph.Version, error) {
	return run1(w, ctx, "GetVersion", func() (graph.Version, error) { return w.s.GetVersion(ctx, f, id) })
}

// GetVersions implements graph.Store.
func (w *Faulty) GetVersions(ctx context.Context, f graph.Filter, ids []string) ([]graph.Version, error) {
	return run1(w, ctx, "GetVersions", func() ([]graph.Version, error) { return w.s.GetVersions(ctx, f, ids) })
}

// ListVersions implements graph.Store.
func (w *Faulty) ListVersions(ctx context.Context, f graph.Filter, memoryID string) ([]graph.Version, error) {
	return run1(w, ctx, "ListVersions", func() ([]graph.Version, error) { return w.s.ListVersions(ctx, f, memoryID) })
}

// GetChunks implements graph.Store.
func (w *Faulty) GetChunks(ctx context.Context, f graph.Filter, versionID string) ([]graph.Chunk, error) {
	return run1(w, ctx, "GetChunks", func() ([]graph.Chunk, error) { return w.s.GetChunks(ctx, f, versionID) })
}

// FindActiveByKey implements graph.Store.
func (w *Faulty) FindActiveByKey(ctx context.Context, ns graph.Namespace, key string) (graph.Memory, error) {
	return run1(w, ctx, "FindActiveByKey", func() (graph.Memory, error) { return w.s.FindActiveByKey(ctx, ns, key) })
}

// Resolve implements graph.Store.
func (w *Faulty) Resolve(ctx context.Context, f graph.Filter, id string) (graph.Memory, error) {
	return run1(w, ctx, "Resolve", func() (graph.Memory, error) { return w.s.Resolve(ctx, f, id) })
}

// Archive implements graph.Store.
func (w *Faulty) Archive(ctx context.Context, s graph.Scope, id string, audit ...graph.AuditEvent) error {
	return w.run(ctx, "Archive", func() error { return w.s.Archive(ctx, s, id, audit...) })
}

// Restore implements graph.Store.
func (w *Faulty) Restore(ctx context.Context, s graph.Scope, id string, audit ...graph.AuditEvent) error {
	return w.run(ctx, "Restore", func() error { return w.s.Restore(ctx, s, id, audit...) })
}

// Erase implements graph.Store.
func (w *Faulty) Erase(ctx context.Context, s graph.Scope, in graph.EraseInput) (graph.Erasure, error) {
	return run1(w, ctx, "Erase", func() (graph.Erasure, error) { return w.s.Erase(ctx, s, in) })
}

// Touch implements graph.Store.
func (w *Faulty) Touch(ctx context.Context, s graph.Scope, ids []string, at time.Time) error {
	return w.run(ctx, "Touch", func() error { return w.s.Touch(ctx, s, ids, at) })
}

// ListMemories implements graph.Store.
func (w *Faulty) ListMemories(ctx context.Context, f graph.Filter, p graph.Page) (graph.Listing, error) {
	return run1(w, ctx, "ListMemories", func() (graph.Listing, error) { return w.s.ListMemories(ctx, f, p) })
}

// Candidates implements graph.Store.
func (w *Faulty) Candidates(ctx context.Context, f graph.Filter, names []string, limit int) ([]graph.Candidate, error) {
	return run1(w, ctx, "Candidates", func() ([]graph.Candidate, error) { return w.s.Candidates(ctx, f, names, limit) })
}

// Neighbours implements graph.Store.
func (w *Faulty) Neighbours(ctx context.Context, f graph.Filter, seedIDs []string, perSeed int) ([]graph.Neighbour, error) {
	return run1(w, ctx, "Neighbours", func() ([]graph.Neighbour, error) { return w.s.Neighbours(ctx, f, seedIDs, perSeed) })
}

// Walk implements graph.Store.
func (w *Faulty) Walk(ctx context.Context, f graph.Filter, r graph.WalkRequest) ([]graph.Walked, error) {
	return run1(w, ctx, "Walk", func() ([]graph.Walked, error) { return w.s.Walk(ctx, f, r) })
}

// KeywordSearch implements graph.Store.
func (w *Faulty) KeywordSearch(ctx context.Context, f graph.Filter, query string, limit int) ([]graph.Scored, error) {
	return run1(w, ctx, "KeywordSearch", func() ([]graph.Scored, error) { return w.s.KeywordSearch(ctx, f, query, limit) })
}

// AppendAudit implements graph.Store.
func (w *Faulty) AppendAudit(ctx context.Context, events ...graph.AuditEvent) error {
	return w.run(ctx, "AppendAudit", func() error { return w.s.AppendAudit(ctx, events...) })
}

// ListAudit implements graph.Store.
func (w *Faulty) ListAudit(ctx context.Context, f graph.Filter, q graph.AuditQuery, p graph.Page) ([]graph.AuditEvent, string, error) {
	var b string
	a, err := run1(w, ctx, "ListAudit", func() (a []graph.AuditEvent, err error) {
		a, b, err = w.s.ListAudit(ctx, f, q, p)
		return a, err
	})
	return a, b, err
}

// CreateGateRequest implements graph.Store.
func (w *Faulty) CreateGateRequest(ctx context.Context, g graph.GateRequest, audit graph.AuditEvent) (graph.GateRequest, error) {
	return run1(w, ctx, "CreateGateRequest", func() (graph.GateRequest, error) { return w.s.CreateGateRequest(ctx, g, audit) })
}

// GetGateRequest implements graph.Store.
func (w *Faulty) GetGateRequest(ctx context.Context, f graph.Filter, id string) (graph.GateRequest, error) {
	return run1(w, ctx, "GetGateRequest", func() (graph.GateRequest, error) { return w.s.GetGateRequest(ctx, f, id) })
}

// ListGateRequests implements graph.Store.
func (w *Faulty) ListGateRequests(ctx context.Context, f graph.Filter, status graph.GateStatus, p graph.Page) ([]graph.GateRequest, string, error) {
	var b string
	a, err := run1(w, ctx, "ListGateRequests", func() (a []graph.GateRequest, err error) {
		a, b, err = w.s.ListGateRequests(ctx, f, status, p)
		return a, err
	})
	return a, b, err
}

// DecideGateRequest implements graph.Store.
func (w *Faulty) DecideGateRequest(ctx context.Context, s graph.Scope, id string, d graph.GateDecision, audit graph.AuditEvent) (graph.GateRequest, error) {
	return run1(w, ctx, "DecideGateRequest", func() (graph.GateRequest, error) { return w.s.DecideGateRequest(ctx, s, id, d, audit) })
}

// CreateContextReceipt implements graph.Store.
func (w *Faulty) CreateContextReceipt(ctx context.Context, r graph.ContextReceipt) (graph.ContextReceipt, error) {
	return run1(w, ctx, "CreateContextReceipt", func() (graph.ContextReceipt, error) { return w.s.CreateContextReceipt(ctx, r) })
}

// GetContextReceipt implements graph.Store.
func (w *Faulty) GetContextReceipt(ctx context.Context, f graph.Filter, id string) (graph.ContextReceipt, error) {
	return run1(w, ctx, "GetContextReceipt", func() (graph.ContextReceipt, error) { return w.s.GetContextReceipt(ctx, f, id) })
}

// PolicyMark implements graph.Store.
func (w *Faulty) PolicyMark(ctx context.Context) (graph.PolicyMark, error) {
	return run1(w, ctx, "PolicyMark", func() (graph.PolicyMark, error) { return w.s.PolicyMark(ctx) })
}

// MarkPolicy implements graph.Store.
func (w *Faulty) MarkPolicy(ctx context.Context, digest string, name string, by string, at time.Time) (graph.PolicyMark, error) {
	return run1(w, ctx, "MarkPolicy", func() (graph.PolicyMark, error) { return w.s.MarkPolicy(ctx, digest, name, by, at) })
}

// DueOutbox implements graph.Store.
func (w *Faulty) DueOutbox(ctx context.Context, at time.Time, lease time.Duration, limit int) ([]graph.OutboxItem, error) {
	return run1(w, ctx, "DueOutbox", func() ([]graph.OutboxItem, error) { return w.s.DueOutbox(ctx, at, lease, limit) })
}

// AckOutbox implements graph.Store.
func (w *Faulty) AckOutbox(ctx context.Context, ids []string) error {
	return w.run(ctx, "AckOutbox", func() error { return w.s.AckOutbox(ctx, ids) })
}

// FailOutbox implements graph.Store.
func (w *Faulty) FailOutbox(ctx context.Context, fails []graph.OutboxFailure) error {
	return w.run(ctx, "FailOutbox", func() error { return w.s.FailOutbox(ctx, fails) })
}

// RequeueOutbox implements graph.Store.
func (w *Faulty) RequeueOutbox(ctx context.Context, at time.Time, ids []string) (int, error) {
	return run1(w, ctx, "RequeueOutbox", func() (int, error) { return w.s.RequeueOutbox(ctx, at, ids) })
}

// OutboxStatus implements graph.Store.
func (w *Faulty) OutboxStatus(ctx context.Context, at time.Time, deadLimit int) (graph.OutboxStatus, error) {
	return run1(w, ctx, "OutboxStatus", func() (graph.OutboxStatus, error) { return w.s.OutboxStatus(ctx, at, deadLimit) })
}

// Health implements graph.Store.
func (w *Faulty) Health(ctx context.Context) error {
	return w.run(ctx, "Health", func() error { return w.s.Health(ctx) })
}

// CreateProposal implements graph.Proposals.
func (w *Faulty) CreateProposal(ctx context.Context, p graph.Proposal, audit ...graph.AuditEvent) (graph.Proposal, error) {
	return run1(w, ctx, "CreateProposal", func() (graph.Proposal, error) { return w.s.CreateProposal(ctx, p, audit...) })
}

// GetProposal implements graph.Proposals.
func (w *Faulty) GetProposal(ctx context.Context, f graph.Filter, id string) (graph.Proposal, error) {
	return run1(w, ctx, "GetProposal", func() (graph.Proposal, error) { return w.s.GetProposal(ctx, f, id) })
}

// GetDecision implements graph.Proposals.
func (w *Faulty) GetDecision(ctx context.Context, f graph.Filter, id string) (graph.Decision, error) {
	return run1(w, ctx, "GetDecision", func() (graph.Decision, error) { return w.s.GetDecision(ctx, f, id) })
}

// GetBaseline implements graph.Proposals.
func (w *Faulty) GetBaseline(ctx context.Context, f graph.Filter, id string) (graph.Baseline, error) {
	return run1(w, ctx, "GetBaseline", func() (graph.Baseline, error) { return w.s.GetBaseline(ctx, f, id) })
}

// ListProposals implements graph.Proposals.
func (w *Faulty) ListProposals(ctx context.Context, f graph.Filter, q graph.ProposalQuery) ([]graph.Proposal, error) {
	return run1(w, ctx, "ListProposals", func() ([]graph.Proposal, error) { return w.s.ListProposals(ctx, f, q) })
}

// AcceptProposal implements graph.Proposals.
func (w *Faulty) AcceptProposal(ctx context.Context, s graph.Scope, id string, in graph.VersionInput) (graph.Proposal, graph.Version, error) {
	var b graph.Version
	a, err := run1(w, ctx, "AcceptProposal", func() (a graph.Proposal, err error) {
		a, b, err = w.s.AcceptProposal(ctx, s, id, in)
		return a, err
	})
	return a, b, err
}

// RejectProposal implements graph.Proposals.
func (w *Faulty) RejectProposal(ctx context.Context, s graph.Scope, id string, d graph.Decision, audit ...graph.AuditEvent) (graph.Proposal, graph.Decision, error) {
	var b graph.Decision
	a, err := run1(w, ctx, "RejectProposal", func() (a graph.Proposal, err error) {
		a, b, err = w.s.RejectProposal(ctx, s, id, d, audit...)
		return a, err
	})
	return a, b, err
}

// RebaseProposal implements graph.Proposals.
func (w *Faulty) RebaseProposal(ctx context.Context, s graph.Scope, id string, next graph.Proposal, audit ...graph.AuditEvent) (graph.Proposal, error) {
	return run1(w, ctx, "RebaseProposal", func() (graph.Proposal, error) { return w.s.RebaseProposal(ctx, s, id, next, audit...) })
}

// PromoteBaseline implements graph.Proposals.
func (w *Faulty) PromoteBaseline(ctx context.Context, b graph.Baseline, audit ...graph.AuditEvent) (graph.Baseline, error) {
	return run1(w, ctx, "PromoteBaseline", func() (graph.Baseline, error) { return w.s.PromoteBaseline(ctx, b, audit...) })
}

// PublishedBaselines implements graph.Proposals.
func (w *Faulty) PublishedBaselines(ctx context.Context, f graph.Filter) ([]graph.Baseline, error) {
	return run1(w, ctx, "PublishedBaselines", func() ([]graph.Baseline, error) { return w.s.PublishedBaselines(ctx, f) })
}

// ListBaselines implements graph.Proposals.
func (w *Faulty) ListBaselines(ctx context.Context, f graph.Filter, limit int) ([]graph.Baseline, error) {
	return run1(w, ctx, "ListBaselines", func() ([]graph.Baseline, error) { return w.s.ListBaselines(ctx, f, limit) })
}

// CreateEdit implements graph.Edits.
func (w *Faulty) CreateEdit(ctx context.Context, e graph.Edit, audit ...graph.AuditEvent) (graph.Edit, error) {
	return run1(w, ctx, "CreateEdit", func() (graph.Edit, error) { return w.s.CreateEdit(ctx, e, audit...) })
}

// GetEdit implements graph.Edits.
func (w *Faulty) GetEdit(ctx context.Context, f graph.Filter, id string) (graph.Edit, error) {
	return run1(w, ctx, "GetEdit", func() (graph.Edit, error) { return w.s.GetEdit(ctx, f, id) })
}

// DecideEdit implements graph.Edits.
func (w *Faulty) DecideEdit(ctx context.Context, s graph.Scope, id string, status graph.EditStatus, by string, at time.Time, audit ...graph.AuditEvent) (graph.Edit, error) {
	return run1(w, ctx, "DecideEdit", func() (graph.Edit, error) { return w.s.DecideEdit(ctx, s, id, status, by, at, audit...) })
}

// ListEdits implements graph.Edits.
func (w *Faulty) ListEdits(ctx context.Context, f graph.Filter, q graph.EditQuery) ([]graph.Edit, error) {
	return run1(w, ctx, "ListEdits", func() ([]graph.Edit, error) { return w.s.ListEdits(ctx, f, q) })
}

// CreateCapsule implements graph.Capsules.
func (w *Faulty) CreateCapsule(ctx context.Context, c graph.Capsule, audit ...graph.AuditEvent) (graph.Capsule, error) {
	return run1(w, ctx, "CreateCapsule", func() (graph.Capsule, error) { return w.s.CreateCapsule(ctx, c, audit...) })
}

// GetCapsule implements graph.Capsules.
func (w *Faulty) GetCapsule(ctx context.Context, f graph.Filter, q graph.CapsuleQuery, id string) (graph.Capsule, error) {
	return run1(w, ctx, "GetCapsule", func() (graph.Capsule, error) { return w.s.GetCapsule(ctx, f, q, id) })
}

// ListCapsules implements graph.Capsules.
func (w *Faulty) ListCapsules(ctx context.Context, f graph.Filter, q graph.CapsuleQuery, p graph.Page) ([]graph.Capsule, string, error) {
	var b string
	a, err := run1(w, ctx, "ListCapsules", func() (a []graph.Capsule, err error) {
		a, b, err = w.s.ListCapsules(ctx, f, q, p)
		return a, err
	})
	return a, b, err
}

// RevokeCapsule implements graph.Capsules.
func (w *Faulty) RevokeCapsule(ctx context.Context, s graph.Scope, id string, by string, at time.Time, audit ...graph.AuditEvent) (graph.Capsule, error) {
	return run1(w, ctx, "RevokeCapsule", func() (graph.Capsule, error) { return w.s.RevokeCapsule(ctx, s, id, by, at, audit...) })
}

// CreateRelation implements graph.Relations.
func (w *Faulty) CreateRelation(ctx context.Context, r graph.Relation, audit ...graph.AuditEvent) (graph.Relation, bool, error) {
	var b bool
	a, err := run1(w, ctx, "CreateRelation", func() (a graph.Relation, err error) {
		a, b, err = w.s.CreateRelation(ctx, r, audit...)
		return a, err
	})
	return a, b, err
}

// GetRelation implements graph.Relations.
func (w *Faulty) GetRelation(ctx context.Context, f graph.Filter, id string) (graph.Relation, error) {
	return run1(w, ctx, "GetRelation", func() (graph.Relation, error) { return w.s.GetRelation(ctx, f, id) })
}

// DeleteRelation implements graph.Relations.
func (w *Faulty) DeleteRelation(ctx context.Context, s graph.Scope, id string, audit ...graph.AuditEvent) (graph.Relation, error) {
	return run1(w, ctx, "DeleteRelation", func() (graph.Relation, error) { return w.s.DeleteRelation(ctx, s, id, audit...) })
}

// RelationsOf implements graph.Relations.
func (w *Faulty) RelationsOf(ctx context.Context, f graph.Filter, ids []string, perMemory int) ([]graph.Relation, error) {
	return run1(w, ctx, "RelationsOf", func() ([]graph.Relation, error) { return w.s.RelationsOf(ctx, f, ids, perMemory) })
}
