package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mnemo-dev/mnemo/extract"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
)

// Audit actions of the curation loop. A proposal's events are about the
// memory it changes (its trail tells the whole story), their outcome naming
// the proposal; a promote's event is about the baseline.
const (
	AuditProposalCreate  = "proposal.create"
	AuditProposalAccept  = "proposal.accept"
	AuditProposalReject  = "proposal.reject"
	AuditProposalRebase  = "proposal.rebase"
	AuditBaselinePromote = "baseline.promote"
)

// ProposalRequest proposes new content for a memory, pinned to the version
// it was written against: VersionID, or VersionNumber (one of them).
type ProposalRequest struct {
	MemoryID      string `json:"memory_id"`
	VersionID     string `json:"version_id,omitempty"`
	VersionNumber int    `json:"version_number,omitempty"`
	Title         string `json:"title,omitempty"`
	Content       string `json:"content"`
}

// RebaseRequest rebases a proposal onto its memory's current version,
// optionally with new title or content (else the old proposal's).
type RebaseRequest struct {
	Title   string `json:"title,omitempty"`
	Content string `json:"content,omitempty"`
}

// ProposalResult is a proposal after a step: the version an accept wrote,
// the decision a reject recorded.
type ProposalResult struct {
	Proposal graph.Proposal  `json:"proposal"`
	Version  *graph.Version  `json:"version,omitempty"`
	Decision *graph.Decision `json:"decision,omitempty"`
}

// ProposalList selects proposals: of MemoryID and with Status when set, at
// most Limit (default 50, at most graph.MaxListLimit), newest first.
type ProposalList struct {
	MemoryID string
	Status   graph.ProposalStatus
	Limit    int
}

// Propose writes an open proposal on a memory p can read (else
// ErrNotFound), pinned to the version it names. Needs permission propose.
// The pinned version need not be the current one (an agent proposes
// against what read_context gave it), but only a proposal pinned to the
// current version can be accepted.
func (e *Engine) Propose(ctx context.Context, p graph.Principal, r ProposalRequest) (graph.Proposal, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, policy.PermPropose); err != nil {
		return graph.Proposal{}, err
	}
	switch {
	case strings.TrimSpace(r.Content) == "":
		return graph.Proposal{}, &graph.FieldError{Field: "content", Message: "required: the proposed text"}
	case r.MemoryID == "":
		return graph.Proposal{}, &graph.FieldError{Field: "memory_id", Message: "required"}
	case (r.VersionID == "") == (r.VersionNumber == 0):
		return graph.Proposal{}, &graph.FieldError{Field: "version_id", Message: "pin the version the proposal was written against: version_id or version_number, one of them"}
	case r.VersionNumber < 0:
		return graph.Proposal{}, &graph.FieldError{Field: "version_number", Message: "must be >= 1"}
	}
	m, f, err := e.proposalTarget(ctx, pol, p, r.MemoryID)
	if err != nil {
		return graph.Proposal{}, err
	}
	target, err := e.pinVersion(ctx, f, m, r)
	if err != nil {
		return graph.Proposal{}, err
	}
	title := r.Title
	if title == "" {
		title = m.Title
	}
	now := e.now().UTC()
	pr := graph.Proposal{ID: graph.NewID(), Scope: m.Scope, MemoryID: m.ID, Title: title, Content: r.Content,
		Status: graph.ProposalOpen, ProposedBy: p.ID, TargetVersionID: target, CreatedAt: now}
	if err := pr.Validate(); err != nil {
		return graph.Proposal{}, err
	}
	ps, err := e.proposals()
	if err != nil {
		return graph.Proposal{}, err
	}
	pr, err = ps.CreateProposal(ctx, pr, e.proposalEvent(pr, AuditProposalCreate, p.ID, "open", ""))
	if err != nil {
		return graph.Proposal{}, fmt.Errorf("propose on %s: %w", m.ID, err)
	}
	return pr, nil
}

// pinVersion resolves the version r pins, which must be one of m's.
func (e *Engine) pinVersion(ctx context.Context, f graph.Filter, m graph.Memory, r ProposalRequest) (string, error) {
	if r.VersionID != "" {
		v, err := e.store.GetVersion(ctx, f, r.VersionID)
		if err != nil || v.MemoryID != m.ID {
			return "", &graph.FieldError{Field: "version_id", Message: fmt.Sprintf("%s is not a version of memory %s", r.VersionID, m.ID)}
		}
		return v.ID, nil
	}
	vs, err := e.store.ListVersions(ctx, f, m.ID)
	if err != nil {
		return "", fmt.Errorf("versions of %s: %w", m.ID, err)
	}
	for _, v := range vs {
		if v.Number == r.VersionNumber {
			return v.ID, nil
		}
	}
	return "", &graph.FieldError{Field: "version_number", Message: fmt.Sprintf("memory %s has no version %d (it has %d)", m.ID, r.VersionNumber, len(vs))}
}

// proposalTarget reads memory id as the curation loop sees it: readable
// by p (scope and user rules; else ErrNotFound), whatever its status, and
// returns the filter it read with.
func (e *Engine) proposalTarget(ctx context.Context, pol *policy.Policy, p graph.Principal, id string) (graph.Memory, graph.Filter, error) {
	if err := graph.CheckID("memory_id", id); err != nil {
		return graph.Memory{}, graph.Filter{}, err
	}
	f := graph.Filter{Scope: p.Scope, Reader: readerOf(pol, p),
		Statuses:           []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived},
		IncludeQuarantined: pol.Allows(p.Roles, PermReadQuarantined)}
	m, err := e.store.GetMemory(ctx, f, id)
	if err != nil {
		return graph.Memory{}, graph.Filter{}, fmt.Errorf("memory %s: %w", id, err)
	}
	return m, f, nil
}

// GetProposal returns a proposal on a memory p can read (else ErrNotFound).
func (e *Engine) GetProposal(ctx context.Context, p graph.Principal, id string) (graph.Proposal, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, PermRead); err != nil {
		return graph.Proposal{}, err
	}
	pr, _, err := e.readProposal(ctx, pol, p, id)
	return pr, err
}

// readProposal reads proposal id and its memory, both readable by p (else
// ErrNotFound).
func (e *Engine) readProposal(ctx context.Context, pol *policy.Policy, p graph.Principal, id string) (graph.Proposal, graph.Memory, error) {
	if err := graph.CheckID("id", id); err != nil {
		return graph.Proposal{}, graph.Memory{}, err
	}
	ps, err := e.proposals()
	if err != nil {
		return graph.Proposal{}, graph.Memory{}, err
	}
	pr, err := ps.GetProposal(ctx, graph.Filter{Scope: p.Scope, Reader: readerOf(pol, p)}, id)
	if err != nil {
		return graph.Proposal{}, graph.Memory{}, fmt.Errorf("proposal %s: %w", id, err)
	}
	m, _, err := e.proposalTarget(ctx, pol, p, pr.MemoryID)
	if errors.Is(err, graph.ErrNotFound) {
		return graph.Proposal{}, graph.Memory{}, fmt.Errorf("proposal %s: %w", id, graph.ErrNotFound)
	}
	return pr, m, err
}

// ListProposals lists the proposals p can read, newest first.
func (e *Engine) ListProposals(ctx context.Context, p graph.Principal, q ProposalList) ([]graph.Proposal, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, PermRead); err != nil {
		return nil, err
	}
	if q.Limit == 0 {
		q.Limit = 50
	}
	ps, err := e.proposals()
	if err != nil {
		return nil, err
	}
	return ps.ListProposals(ctx, graph.Filter{Scope: p.Scope, Reader: readerOf(pol, p)},
		graph.ProposalQuery{MemoryID: q.MemoryID, Status: q.Status, Limit: q.Limit})
}

// decidable reads proposal id for a curator's decision: p needs permission
// curate and must reach the proposal's scope (approverReaches); the
// proposal must be open.
func (e *Engine) decidable(ctx context.Context, pol *policy.Policy, p graph.Principal, id string) (graph.Proposal, graph.Memory, error) {
	if err := authorize(pol, p, policy.PermCurate); err != nil {
		return graph.Proposal{}, graph.Memory{}, err
	}
	pr, m, err := e.readProposal(ctx, pol, p, id)
	if err != nil {
		return pr, m, err
	}
	if !approverReaches(pol, p, pr.Scope) {
		return pr, m, fmt.Errorf("%w: proposal %s is in scope %s, beyond principal %q's reach", graph.ErrForbidden, id, scopeName(pr.Scope), p.ID)
	}
	return pr, m, openOrConflict(pr)
}

func openOrConflict(pr graph.Proposal) error {
	switch pr.Status {
	case graph.ProposalOpen:
		return nil
	case graph.ProposalRebased:
		return fmt.Errorf("%w: proposal %s was rebased: proposal %s replaces it", graph.ErrConflict, pr.ID, pr.RebasedToID)
	}
	return fmt.Errorf("%w: proposal %s is already %s", graph.ErrConflict, pr.ID, pr.Status)
}

// AcceptProposal accepts an open proposal: its content becomes the next
// version of its memory, linked ACCEPTED_AS, in one transaction with the
// audit event. Refused (ErrConflict, with a message that says to rebase)
// while the version it is pinned to is no longer the memory's current one.
// Needs permission curate.
func (e *Engine) AcceptProposal(ctx context.Context, p graph.Principal, id, note string) (ProposalResult, error) {
	pol := e.policy.Current()
	pr, m, err := e.decidable(ctx, pol, p, id)
	if err != nil {
		return ProposalResult{}, err
	}
	if m.Status != graph.StatusActive {
		return ProposalResult{}, fmt.Errorf("%w: memory %s is %s: a proposal is accepted on an active memory only", graph.ErrConflict, m.ID, m.Status)
	}
	if m.CurrentVersionID != pr.TargetVersionID {
		return ProposalResult{}, fmt.Errorf("%w: %s", graph.ErrConflict, graph.StaleProposal(id, pr.TargetVersionID, m.CurrentVersionID))
	}
	ps, err := e.proposals()
	if err != nil {
		return ProposalResult{}, err
	}
	in := e.proposalVersion(pol, m, pr)
	in.Audit = []graph.AuditEvent{e.proposalEvent(pr, AuditProposalAccept, p.ID, "accepted", note)}
	pr, v, err := ps.AcceptProposal(ctx, pr.Scope, id, in)
	if err != nil {
		return ProposalResult{}, fmt.Errorf("accept proposal %s: %w", id, err)
	}
	e.indexVersion(ctx, m, v)
	return ProposalResult{Proposal: pr, Version: &v}, nil
}

// proposalVersion is the version an accepted proposal writes: its content
// as proposed (a curator accepted this text, so it is not normalised), the
// entities and chunks extracted as ingest extracts them, the memory type's
// index text, the proposer as the version's author.
func (e *Engine) proposalVersion(pol *policy.Policy, m graph.Memory, pr graph.Proposal) graph.VersionInput {
	x := e.xc.get(pol)
	var (
		mentions []extract.Mention
		chunks   []graph.ChunkInput
	)
	if m.Type == TypeDocument {
		chunks, mentions = chunkDocument(x, pr.Content)
	} else {
		mentions = x.Extract(pr.Content, extract.Hint{Type: m.Type}).Entities
	}
	refs, _ := entityRefs(mentions, nil)
	td, _ := pol.Type(m.Type)
	return graph.VersionInput{
		ID: graph.NewID(), Content: pr.Content, ContentHash: graph.ContentHash(pr.Content),
		IndexText: td.IndexTextOf(map[string]string{policy.FieldTitle: m.Title, policy.FieldContent: pr.Content,
			policy.FieldTags: strings.Join(m.Tags, " ")}),
		Provenance: graph.Provenance{ActorType: "principal", ActorID: pr.ProposedBy, ToolID: "proposal:" + pr.ID},
		Chunks:     chunks, Entities: refs, Index: e.enqueue,
	}
}

// indexVersion upserts the vector of m's new version v now; on failure the
// outbox item written with the version delivers it later.
func (e *Engine) indexVersion(ctx context.Context, m graph.Memory, v graph.Version) {
	if e.index == nil {
		return
	}
	vecs, err := e.embedder.Embed(ctx, []string{graph.SearchText(v.IndexText, v.Content)})
	if err == nil && len(vecs) == 1 {
		err = e.index.Upsert(ctx, []vector.Point{point(m, v.ID, vecs[0])})
	}
	if err != nil {
		e.log.Warn("index accepted version failed; the outbox will retry", "memory", m.ID, "err", err)
	}
}

// RejectProposal rejects an open proposal, recording a Decision with the
// reason (required), linked REJECTED_BECAUSE. Needs permission curate.
func (e *Engine) RejectProposal(ctx context.Context, p graph.Principal, id, reason string) (ProposalResult, error) {
	if strings.TrimSpace(reason) == "" {
		return ProposalResult{}, &graph.FieldError{Field: "reason", Message: "required: say why the proposal is rejected"}
	}
	pol := e.policy.Current()
	pr, _, err := e.decidable(ctx, pol, p, id)
	if err != nil {
		return ProposalResult{}, err
	}
	ps, err := e.proposals()
	if err != nil {
		return ProposalResult{}, err
	}
	d := graph.Decision{ID: graph.NewID(), Scope: pr.Scope, Kind: "curation", Outcome: "rejected",
		Rule: "proposal", Reason: truncate(reason, graph.MaxTitleLen), DecidedBy: p.ID, CreatedAt: e.now().UTC()}
	pr, d, err = ps.RejectProposal(ctx, pr.Scope, id, d, e.proposalEvent(pr, AuditProposalReject, p.ID, "rejected", reason))
	if err != nil {
		return ProposalResult{}, fmt.Errorf("reject proposal %s: %w", id, err)
	}
	return ProposalResult{Proposal: pr, Decision: &d}, nil
}

// RebaseProposal replaces an open proposal pinned to an outdated version
// by a new one pinned to its memory's current version (REBASED_TO from the
// old, which can no longer be accepted). Needs permission propose; a
// proposal already pinned to the current version is ErrConflict.
func (e *Engine) RebaseProposal(ctx context.Context, p graph.Principal, id string, r RebaseRequest) (ProposalResult, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, policy.PermPropose); err != nil {
		return ProposalResult{}, err
	}
	old, m, err := e.readProposal(ctx, pol, p, id)
	if err != nil {
		return ProposalResult{}, err
	}
	if err := openOrConflict(old); err != nil {
		return ProposalResult{}, err
	}
	if m.CurrentVersionID == old.TargetVersionID {
		return ProposalResult{}, fmt.Errorf("%w: proposal %s already targets the current version %s: nothing to rebase", graph.ErrConflict, id, m.CurrentVersionID)
	}
	ps, err := e.proposals()
	if err != nil {
		return ProposalResult{}, err
	}
	next := graph.Proposal{ID: graph.NewID(), Scope: old.Scope, MemoryID: old.MemoryID, Title: old.Title, Content: old.Content,
		Status: graph.ProposalOpen, ProposedBy: p.ID, TargetVersionID: m.CurrentVersionID, CreatedAt: e.now().UTC()}
	if r.Title != "" {
		next.Title = r.Title
	}
	if strings.TrimSpace(r.Content) != "" {
		next.Content = r.Content
	}
	if err := next.Validate(); err != nil {
		return ProposalResult{}, err
	}
	ev := e.proposalEvent(old, AuditProposalRebase, p.ID, "rebased to "+next.ID+" at version "+next.TargetVersionID+":", "")
	next, err = ps.RebaseProposal(ctx, old.Scope, id, next, ev)
	if err != nil {
		return ProposalResult{}, fmt.Errorf("rebase proposal %s: %w", id, err)
	}
	return ProposalResult{Proposal: next}, nil
}

// proposalEvent is the audit event of one step of proposal pr: about its
// memory, its outcome naming the proposal.
func (e *Engine) proposalEvent(pr graph.Proposal, action, actor, outcome, reason string) graph.AuditEvent {
	return graph.AuditEvent{
		ID: graph.NewID(), Scope: pr.Scope, Action: action, SubjectKind: subjectMemory, SubjectID: pr.MemoryID,
		ActorID: actor, Outcome: truncate(fmt.Sprintf("%s proposal %s", outcome, pr.ID), graph.MaxTitleLen),
		Reason: truncate(reason, graph.MaxTitleLen), CreatedAt: e.now().UTC(),
	}
}
