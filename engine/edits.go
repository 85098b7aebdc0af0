package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// Audit actions of memory surgery. Each event's subject is the edited
// memory (so GET /v1/audit?memory_id= tells its whole story); its outcome
// names the edit.
const (
	AuditEditPropose = "edit.propose"
	AuditEditApprove = "edit.approve"
	AuditEditReject  = "edit.reject"
)

// FlagQuarantined marks a result shown only because the reader asked for
// quarantined memories (include_quarantined).
const FlagQuarantined = "quarantined"

// EditRequest proposes one edit on a memory. Reason is required. Content
// and Importance go with amend, Importance or Delta with attenuate, Channel
// with block; VersionID pins the edit to a version (it stops applying once
// another version is current).
type EditRequest struct {
	Kind       graph.EditKind `json:"kind"`
	VersionID  string         `json:"version_id,omitempty"`
	Content    string         `json:"content,omitempty"`
	Importance *float64       `json:"importance,omitempty"`
	Delta      *float64       `json:"delta,omitempty"`
	Channel    string         `json:"channel,omitempty"`
	Reason     string         `json:"reason"`
}

// EffectiveView is what readers see of a memory once its approved edits
// apply (docs/curation.md).
type EffectiveView struct {
	// Hidden is true when a plain read (no channel, quarantine not asked
	// for) does not return the memory: retracted or quarantined.
	Hidden      bool `json:"hidden"`
	Retracted   bool `json:"retracted,omitempty"`
	Quarantined bool `json:"quarantined,omitempty"`
	// BlockedChannels lists the channels a block edit hides it on.
	BlockedChannels []string `json:"blocked_channels,omitempty"`
	// Content and Importance are what a reader allowed to see it gets.
	Content    string   `json:"content"`
	Importance float64  `json:"importance"`
	Edits      []string `json:"edits,omitempty"`
}

// EditPreview is a memory's effective view before and after an edit.
type EditPreview struct {
	Before EffectiveView `json:"before"`
	After  EffectiveView `json:"after"`
}

// EditResult is an edit as proposed or decided, with its preview: After
// shows the edit applied, whether or not it is approved yet (for a
// rejection, After equals Before).
type EditResult struct {
	Edit    graph.Edit  `json:"edit"`
	Preview EditPreview `json:"preview"`
	// AutoApproved is true when the policy approved the edit at once.
	AutoApproved bool `json:"auto_approved,omitempty"`
}

// ProposeEdit proposes an edit on memory id. The policy (edits.<kind>)
// decides who may propose it and whose proposals are approved at once
// (auto_approve, when the proposer also reaches the memory's scope:
// approverReaches); otherwise the edit waits, pending, for an approver.
// The memory must be readable by p (a retracted one is not; a quarantined
// one only with read_quarantined). Each step is audited.
func (e *Engine) ProposeEdit(ctx context.Context, p graph.Principal, id string, r EditRequest) (EditResult, error) {
	es, err := e.edits()
	if err != nil {
		return EditResult{}, err
	}
	pol := e.policy.Current()
	if err := authorize(pol, p, PermRead); err != nil {
		return EditResult{}, err
	}
	if !slices.Contains(policy.EditOps, string(r.Kind)) {
		return EditResult{}, &graph.FieldError{Field: "kind", Message: fmt.Sprintf("unknown edit kind %q: %s", r.Kind, strings.Join(policy.EditOps, ", "))}
	}
	if strings.TrimSpace(r.Reason) == "" {
		return EditResult{}, &graph.FieldError{Field: "reason", Message: "required: say why the memory is edited"}
	}
	if !pol.EditAllows(string(r.Kind), policy.EditStagePropose, p.Roles) {
		return EditResult{}, fmt.Errorf("%w: principal %q may not propose a %s edit (policy edits.%s.propose)", graph.ErrForbidden, p.ID, r.Kind, r.Kind)
	}
	m, f, err := e.editTarget(ctx, pol, p, id, false)
	if err != nil {
		return EditResult{}, err
	}
	if r.VersionID != "" {
		v, err := e.store.GetVersion(ctx, f, r.VersionID)
		if err != nil || v.MemoryID != m.ID {
			return EditResult{}, &graph.FieldError{Field: "version_id", Message: fmt.Sprintf("%s is not a version of memory %s", r.VersionID, m.ID)}
		}
	}
	now := e.now().UTC()
	ed := graph.Edit{
		ID: graph.NewID(), Scope: m.Scope, Kind: r.Kind, Status: graph.EditPending, TargetMemoryID: m.ID,
		TargetVersionID: r.VersionID, Content: r.Content, Importance: r.Importance, Delta: r.Delta,
		Channel: r.Channel, Reason: r.Reason, CreatedBy: p.ID, CreatedAt: now,
	}
	if err := ed.Validate(); err != nil {
		return EditResult{}, err
	}
	auto := pol.EditAllows(string(r.Kind), policy.EditStageAutoApprove, p.Roles) && approverReaches(pol, p, m.Scope)
	if auto {
		ed.Status, ed.DecidedBy, ed.DecidedAt = graph.EditApproved, p.ID, now
	}
	before, v, err := e.editBase(ctx, es, f, m)
	if err != nil {
		return EditResult{}, err
	}
	events := []graph.AuditEvent{e.editEvent(ed, AuditEditPropose, p.ID, "pending", ed.Reason, "")}
	if auto {
		events = append(events, e.editEvent(ed, AuditEditApprove, p.ID, "approved", ed.Reason,
			fmt.Sprintf("edits.%s.auto_approve", ed.Kind)))
	}
	if ed, err = es.CreateEdit(ctx, ed, events...); err != nil {
		return EditResult{}, fmt.Errorf("propose edit on %s: %w", m.ID, err)
	}
	return EditResult{Edit: ed, AutoApproved: auto, Preview: e.preview(m, v, before, ed)}, nil
}

// DecideEdit approves (approve true) or rejects a pending edit, with an
// optional note (recorded in the audit event). The policy decides who may
// (edits.<kind>.approve), within approverReaches of the edit's scope. An
// edit p cannot see, or whose memory p cannot read, is ErrNotFound; one no
// longer pending is ErrConflict.
func (e *Engine) DecideEdit(ctx context.Context, p graph.Principal, id string, approve bool, note string) (EditResult, error) {
	es, err := e.edits()
	if err != nil {
		return EditResult{}, err
	}
	pol := e.policy.Current()
	if err := authorize(pol, p, PermRead); err != nil {
		return EditResult{}, err
	}
	ed, err := es.GetEdit(ctx, graph.Filter{Scope: p.Scope, Reader: readerOf(pol, p)}, id)
	if err != nil {
		return EditResult{}, fmt.Errorf("edit %s: %w", id, err)
	}
	m, f, err := e.editTarget(ctx, pol, p, ed.TargetMemoryID, true)
	if errors.Is(err, graph.ErrNotFound) {
		return EditResult{}, fmt.Errorf("edit %s: %w", id, graph.ErrNotFound)
	}
	if err != nil {
		return EditResult{}, err
	}
	if !pol.EditAllows(string(ed.Kind), policy.EditStageApprove, p.Roles) {
		return EditResult{}, fmt.Errorf("%w: principal %q may not decide a %s edit (policy edits.%s.approve)", graph.ErrForbidden, p.ID, ed.Kind, ed.Kind)
	}
	if !approverReaches(pol, p, ed.Scope) {
		return EditResult{}, fmt.Errorf("%w: edit %s is in scope %s, beyond principal %q's reach", graph.ErrForbidden, id, scopeName(ed.Scope), p.ID)
	}
	if ed.Status != graph.EditPending {
		return EditResult{}, fmt.Errorf("%w: edit %s is already %s", graph.ErrConflict, id, ed.Status)
	}
	before, v, err := e.editBase(ctx, es, f, m)
	if err != nil {
		return EditResult{}, err
	}
	status, action, outcome := graph.EditRejected, AuditEditReject, "rejected"
	if approve {
		status, action, outcome = graph.EditApproved, AuditEditApprove, "approved"
	}
	reason := note
	if reason == "" {
		reason = outcome + " by " + p.ID
	}
	decided, err := es.DecideEdit(ctx, p.Scope, id, status, p.ID, e.now().UTC(), e.editEvent(ed, action, p.ID, outcome, reason, ""))
	if err != nil {
		return EditResult{}, fmt.Errorf("decide edit %s: %w", id, err)
	}
	return EditResult{Edit: decided, Preview: e.preview(m, v, before, decided)}, nil
}

// ListMemoryEdits lists the edits on memory id, oldest first: those with
// status (any when empty). The memory must be readable by p as for
// DecideEdit.
func (e *Engine) ListMemoryEdits(ctx context.Context, p graph.Principal, id string, status graph.EditStatus) ([]graph.Edit, error) {
	es, err := e.edits()
	if err != nil {
		return nil, err
	}
	pol := e.policy.Current()
	if err := authorize(pol, p, PermRead); err != nil {
		return nil, err
	}
	q := graph.EditQuery{MemoryIDs: []string{id}}
	switch status {
	case "":
	case graph.EditPending, graph.EditApproved, graph.EditRejected:
		q.Statuses = []graph.EditStatus{status}
	default:
		return nil, &graph.FieldError{Field: "status", Message: fmt.Sprintf("%q is not pending, approved or rejected", status)}
	}
	m, f, err := e.editTarget(ctx, pol, p, id, true)
	if err != nil {
		return nil, err
	}
	eds, err := es.ListEdits(ctx, f, q)
	if err != nil {
		return nil, fmt.Errorf("list edits of %s: %w", m.ID, err)
	}
	return eds, nil
}

// editTarget reads memory id as curation sees it: any status but
// retracted (retracted too when settling: forSettle), quarantined ones
// only with read_quarantined, whatever channel blocks it. The user and
// scope rules hold as for every read. It returns the filter it read with.
func (e *Engine) editTarget(ctx context.Context, pol *policy.Policy, p graph.Principal, id string, forSettle bool) (graph.Memory, graph.Filter, error) {
	if err := graph.CheckID("id", id); err != nil {
		return graph.Memory{}, graph.Filter{}, err
	}
	f := graph.Filter{
		Scope: p.Scope, Reader: readerOf(pol, p),
		Statuses:           []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived},
		IncludeQuarantined: pol.Allows(p.Roles, PermReadQuarantined),
	}
	if forSettle {
		f.Statuses = append(f.Statuses, graph.StatusRetracted)
	}
	m, err := e.store.GetMemory(ctx, f, id)
	if err != nil {
		return graph.Memory{}, graph.Filter{}, fmt.Errorf("edit target: %w", err)
	}
	return m, f, nil
}

// editBase reads, before an edit is written, what its preview starts
// from: m's approved edits and its current version.
func (e *Engine) editBase(ctx context.Context, es graph.Edits, f graph.Filter, m graph.Memory) ([]graph.Edit, graph.Version, error) {
	eds, err := es.ListEdits(ctx, f, graph.EditQuery{MemoryIDs: []string{m.ID}, Statuses: []graph.EditStatus{graph.EditApproved}})
	if err != nil {
		return nil, graph.Version{}, fmt.Errorf("edits of %s: %w", m.ID, err)
	}
	v, err := e.store.GetVersion(ctx, f, m.CurrentVersionID)
	if err != nil {
		return nil, graph.Version{}, fmt.Errorf("memory %s current version: %w", m.ID, err)
	}
	return eds, v, nil
}

// preview is m's effective view (version v current) under the approved
// edits before, and with ed applied too unless it was rejected.
func (e *Engine) preview(m graph.Memory, v graph.Version, before []graph.Edit, ed graph.Edit) EditPreview {
	before = slices.DeleteFunc(slices.Clone(before), func(x graph.Edit) bool { return x.ID == ed.ID })
	after := before
	if ed.Status != graph.EditRejected {
		ed.Status = graph.EditApproved
		if ed.DecidedAt.IsZero() {
			ed.DecidedAt = e.now().UTC()
		}
		after = append(slices.Clone(before), ed)
	}
	return EditPreview{Before: effectiveOf(m, v, before), After: effectiveOf(m, v, after)}
}

// effectiveOf is m's effective view (version v current) under edits.
func effectiveOf(m graph.Memory, v graph.Version, edits []graph.Edit) EffectiveView {
	var ev EffectiveView
	for _, ed := range edits {
		if ed.TargetMemoryID != m.ID || ed.Status != graph.EditApproved {
			continue
		}
		switch ed.Kind {
		case graph.EditRetract:
			ev.Retracted = true
		case graph.EditQuarantine:
			ev.Quarantined = true
		case graph.EditBlock:
			if !slices.Contains(ev.BlockedChannels, ed.Channel) {
				ev.BlockedChannels = append(ev.BlockedChannels, ed.Channel)
			}
		}
	}
	ev.Hidden = ev.Retracted || ev.Quarantined
	st := foldEdits(m, edits, graph.Filter{IncludeQuarantined: true})
	ev.Content, ev.Importance, ev.Edits = v.Content, st.Importance, st.Applied
	if st.Content != nil {
		ev.Content = *st.Content
	}
	if st.Hidden { // retracted: nothing applies
		ev.Importance, ev.Edits = m.Importance, nil
	}
	return ev
}

// editEvent is the audit event of one step of edit ed: its subject is the
// edited memory, its outcome names the edit.
func (e *Engine) editEvent(ed graph.Edit, action, actor, outcome, reason, rule string) graph.AuditEvent {
	return graph.AuditEvent{
		ID: graph.NewID(), Scope: ed.Scope, Action: action, SubjectKind: subjectMemory, SubjectID: ed.TargetMemoryID,
		ActorID: actor, Rule: rule, Outcome: truncate(fmt.Sprintf("%s %s edit %s", outcome, ed.Kind, ed.ID), graph.MaxTitleLen),
		Reason: truncate(reason, graph.MaxTitleLen), CreatedAt: e.now().UTC(),
	}
}
