package graph

import "context"

// Proposals is the capability to store curation proposals, the decisions
// that settle them and the baselines published from them. It is optional: a
// store without it still serves memories, and the engine answers the use
// cases that need it with ErrUnsupported (graph/doc.go says how the engine
// finds it). Both shipped stores implement it; graph/storetest.RunProposals
// is its conformance suite.
//
// Reads take a Filter whose scope rule (Scope.Sees, or Scope.Contains with
// Subscopes) is pushed into the query; the records carry no owner. Writes
// are one transaction each and refuse invalid records (ErrInvalid).
type Proposals interface {
	// CreateProposal and GetProposal store and read curation proposals;
	// the audit events given to CreateProposal are written in the same
	// transaction. A proposal naming a memory must target one of its
	// versions (else ErrInvalid).
	CreateProposal(ctx context.Context, p Proposal, audit ...AuditEvent) (Proposal, error)
	GetProposal(ctx context.Context, f Filter, id string) (Proposal, error)
	// GetDecision reads a decision (RejectProposal writes them).
	GetDecision(ctx context.Context, f Filter, id string) (Decision, error)
	// GetBaseline reads a published baseline (PromoteBaseline writes
	// them).
	GetBaseline(ctx context.Context, f Filter, id string) (Baseline, error)

	// The curation loop (docs/curation.md, "Proposals and published
	// baselines"): proposals pinned to a version, settled by accept, reject
	// or rebase, and one published baseline per repository, moved by
	// promote. Every state change is one transaction with its audit
	// events: a proposal is never accepted without its version, nor
	// rebased without its successor, nor promoted without its trail.
	// ListProposals lists proposals visible under f, newest first, at
	// most q.Limit (1-1000).
	ListProposals(ctx context.Context, f Filter, q ProposalQuery) ([]Proposal, error)
	// AcceptProposal settles open proposal id (in s) as accepted: in
	// one transaction it appends in as the next version of the
	// proposal's memory (as AddVersion does, in.Audit included) and links
	// the proposal ACCEPTED_AS that version. A proposal not open is
	// ErrConflict; so is one whose TargetVersionID is no longer the
	// memory's current version (the error says to rebase), and a memory
	// no longer active.
	AcceptProposal(ctx context.Context, s Scope, id string, in VersionInput) (Proposal, Version, error)
	// RejectProposal settles open proposal id (in s) as rejected with
	// decision d (written, REJECTED_BECAUSE), and the audit events, in one
	// transaction. A proposal not open is ErrConflict.
	RejectProposal(ctx context.Context, s Scope, id string, d Decision, audit ...AuditEvent) (Proposal, Decision, error)
	// RebaseProposal replaces open proposal id (in s) by next, pinned to
	// the memory's current version: next is written open for the same
	// memory, the old proposal becomes rebased and links REBASED_TO next,
	// with the audit events, in one transaction. A proposal not open is
	// ErrConflict, and so is one already pinned to the current version or
	// a next pinned to any other version.
	RebaseProposal(ctx context.Context, s Scope, id string, next Proposal, audit ...AuditEvent) (Proposal, error)
	// PromoteBaseline publishes b as its repository's baseline (b.Scope
	// names a repository): b.VersionIDs, or when empty the current version
	// of every active memory of that exact scope, read in the same
	// transaction. The newest baseline of a repository is its published
	// one. The audit events are written in the same transaction.
	PromoteBaseline(ctx context.Context, b Baseline, audit ...AuditEvent) (Baseline, error)
	// PublishedBaselines returns, for every repository visible under f
	// that has one, its published (newest) baseline.
	PublishedBaselines(ctx context.Context, f Filter) ([]Baseline, error)
	// ListBaselines lists the baselines visible under f, newest first, at
	// most limit (1-1000).
	ListBaselines(ctx context.Context, f Filter, limit int) ([]Baseline, error)
}

// ProposalQuery selects proposals: those of MemoryID (any when empty)
// with Status (any when empty), at most Limit.
type ProposalQuery struct {
	MemoryID string
	Status   ProposalStatus
	Limit    int
}

// MaxListLimit caps the lists of the curation capabilities.
const MaxListLimit = 1000

// Validate checks a proposal query.
func (q ProposalQuery) Validate() error {
	if err := checkID("memory_id", q.MemoryID, true); err != nil {
		return err
	}
	if q.Status != "" && !q.Status.valid() {
		return invalid("status", "unknown proposal status %q", q.Status)
	}
	return CheckListLimit(q.Limit)
}

// CheckListLimit checks a curation list's limit.
func CheckListLimit(limit int) error {
	if limit < 1 || limit > MaxListLimit {
		return invalid("limit", "must be from 1 to %d", MaxListLimit)
	}
	return nil
}

// StaleProposal is the message of the conflict an accept of a proposal
// pinned to an outdated version meets.
func StaleProposal(id, target, current string) string {
	return "proposal " + id + " targets version " + target + ", but the memory's current version is " +
		current + ": rebase it (POST /v1/proposals/" + id + ":rebase) and accept the rebased proposal"
}
