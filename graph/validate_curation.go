package graph

// Validate checks a proposal before it is stored.
func (p Proposal) Validate() error {
	if err := p.Scope.Validate(); err != nil {
		return err
	}
	if err := checkIDs(map[string]idField{
		"id": {p.ID, true}, "proposed_by": {p.ProposedBy, false}, "memory_id": {p.MemoryID, true},
		"rebased_to_id":     {p.RebasedToID, true},
		"target_version_id": {p.TargetVersionID, true}, "rebased_to_version_id": {p.RebasedToVersionID, true},
		"accepted_version_id": {p.AcceptedVersionID, true}, "rejected_decision_id": {p.RejectedDecisionID, true},
	}); err != nil {
		return err
	}
	if p.Status != "" && !p.Status.valid() {
		return invalid("status", "unknown proposal status %q", p.Status)
	}
	if err := checkText("title", p.Title, MaxTitleLen); err != nil {
		return err
	}
	return checkText("content", p.Content, MaxContentLen)
}

// Validate checks a decision before it is stored.
func (d Decision) Validate() error {
	if err := d.Scope.Validate(); err != nil {
		return err
	}
	if err := checkIDs(map[string]idField{"id": {d.ID, true}, "decided_by": {d.DecidedBy, false}}); err != nil {
		return err
	}
	if d.Kind != "gate" && d.Kind != "curation" {
		return invalid("kind", "unknown decision kind %q (want gate|curation)", d.Kind)
	}
	if d.Outcome == "" {
		return invalid("outcome", "required")
	}
	for field, v := range map[string]string{"outcome": d.Outcome, "rule": d.Rule, "reason": d.Reason} {
		if err := checkText(field, v, MaxTitleLen); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks a baseline before it is stored.
func (b Baseline) Validate() error {
	if err := b.Scope.Validate(); err != nil {
		return err
	}
	if err := checkIDs(map[string]idField{"id": {b.ID, true}, "published_by": {b.PublishedBy, false}}); err != nil {
		return err
	}
	if err := checkText("name", b.Name, MaxTitleLen); err != nil {
		return err
	}
	return checkIDList("version_ids", b.VersionIDs)
}

// Validate checks an edit before it is stored.
func (e Edit) Validate() error {
	if err := e.Scope.Validate(); err != nil {
		return err
	}
	if err := checkIDs(map[string]idField{
		"id": {e.ID, true}, "target_memory_id": {e.TargetMemoryID, false},
		"target_version_id": {e.TargetVersionID, true}, "created_by": {e.CreatedBy, false},
		"channel": {e.Channel, true},
	}); err != nil {
		return err
	}
	if !e.Kind.valid() {
		return invalid("kind", "unknown edit kind %q (want retract|amend|quarantine|attenuate|block)", e.Kind)
	}
	if e.Status != "" && !e.Status.valid() {
		return invalid("status", "unknown edit status %q", e.Status)
	}
	switch e.Kind {
	case EditAmend:
		if e.Content == "" && e.Importance == nil {
			return invalid("content", "an amend needs content or importance")
		}
	case EditAttenuate:
		if (e.Importance == nil) == (e.Delta == nil) {
			return invalid("importance", "an attenuate edit needs importance or delta, not both")
		}
	case EditBlock:
		if e.Channel == "" {
			return invalid("channel", "a block edit needs a channel")
		}
	}
	if e.Importance != nil && (*e.Importance < 0 || *e.Importance > 1 || *e.Importance != *e.Importance) {
		return invalid("importance", "must be within [0, 1]")
	}
	if e.Delta != nil && e.Kind != EditAttenuate {
		return invalid("delta", "only an attenuate edit takes a delta")
	}
	if e.Delta != nil && !(*e.Delta >= -1 && *e.Delta < 0) {
		return invalid("delta", "must be within [-1, 0): an attenuate edit lowers importance")
	}
	if err := checkText("content", e.Content, MaxContentLen); err != nil {
		return err
	}
	return checkText("reason", e.Reason, MaxTitleLen)
}

// Validate checks a gate request before it is stored.
func (g GateRequest) Validate() error {
	if err := g.Scope.Validate(); err != nil {
		return err
	}
	if err := checkIDs(map[string]idField{"id": {g.ID, true}, "requested_by": {g.RequestedBy, false}}); err != nil {
		return err
	}
	if g.Status != "" && g.Status != GatePending {
		return invalid("status", "a new gate request is pending")
	}
	if len(g.Payload) == 0 {
		return invalid("payload", "required")
	}
	if err := checkText("payload", string(g.Payload), MaxContentLen); err != nil {
		return err
	}
	for field, v := range map[string]string{"title": g.Title, "rule": g.Rule, "reason": g.Reason} {
		if err := checkText(field, v, MaxTitleLen); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks a gate decision.
func (d GateDecision) Validate() error {
	if d.Status != GateApproved && d.Status != GateRejected {
		return invalid("status", "a decision approves or rejects, got %q", d.Status)
	}
	if err := checkID("decided_by", d.DecidedBy, false); err != nil {
		return err
	}
	if err := checkID("memory_id", d.MemoryID, true); err != nil {
		return err
	}
	return checkText("reason", d.Reason, MaxTitleLen)
}

// Validate checks a settlement: an approval of a named request, in a valid
// scope, with a valid audit event (its subject may be left to default).
func (g GateSettlement) Validate() error {
	if err := checkID("settles.request_id", g.RequestID, false); err != nil {
		return err
	}
	if err := g.Scope.Validate(); err != nil {
		return err
	}
	if g.Decision.Status != GateApproved {
		return invalid("settles.status", "a write settles its request by approving it, got %q", g.Decision.Status)
	}
	if err := g.Decision.Validate(); err != nil {
		return err
	}
	return g.Audit.Validate()
}

// ValidateEditStatus checks the status an edit is decided with.
func ValidateEditStatus(s EditStatus) error {
	if s != EditApproved && s != EditRejected {
		return invalid("status", "an edit decision approves or rejects, got %q", s)
	}
	return nil
}

type idField struct {
	v        string
	optional bool
}

func checkIDs(fields map[string]idField) error {
	for name, f := range fields {
		if err := checkID(name, f.v, f.optional); err != nil {
			return err
		}
	}
	return nil
}

func checkIDList(field string, ids []string) error {
	for _, id := range ids {
		if err := checkID(field, id, false); err != nil {
			return err
		}
	}
	return nil
}

// Validate checks a context receipt before it is stored.
func (r ContextReceipt) Validate() error {
	if err := r.Scope.Validate(); err != nil {
		return err
	}
	if err := checkIDs(map[string]idField{"id": {r.ID, true}, "principal_id": {r.PrincipalID, false}}); err != nil {
		return err
	}
	if err := checkText("query", r.Query, MaxContentLen); err != nil {
		return err
	}
	if len(r.Citations) > 10000 {
		return invalid("citations", "more than 10000 citations")
	}
	for _, c := range r.Citations {
		if err := checkIDs(map[string]idField{"citations.element_id": {c.ElementID, false}, "citations.version_id": {c.VersionID, false}, "citations.repository_id": {c.RepositoryID, true}}); err != nil {
			return err
		}
		if err := checkText("citations.chunk_key", c.ChunkKey, MaxTitleLen); err != nil {
			return err
		}
	}
	return nil
}
