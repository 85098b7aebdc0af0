package policy

// Edit ops (memory surgery); they mirror graph.EditKind, which policy may
// not import.
const (
	EditRetract    = "retract"
	EditAmend      = "amend"
	EditQuarantine = "quarantine"
	EditAttenuate  = "attenuate"
	EditBlock      = "block"
)

// EditOps lists the edit ops in the order docs/curation.md gives them.
var EditOps = []string{EditRetract, EditAmend, EditQuarantine, EditAttenuate, EditBlock}

// PermAuditRead reads the audit trail (GET /v1/audit), within the reader's
// scope and user rule.
const PermAuditRead = "audit_read"

// EditRule says who may do what with one edit op (YAML: edits.<op>). A
// list names roles; "*" in a list means every role. An op the policy does
// not list may be neither proposed nor approved.
type EditRule struct {
	// Propose lists the roles that may propose the edit.
	Propose []string `yaml:"propose"`
	// Approve lists the roles that may approve or reject a pending edit.
	Approve []string `yaml:"approve"`
	// AutoApprove lists the roles whose proposals are approved at once
	// (by the proposer); it must be a subset of Approve.
	AutoApprove []string `yaml:"auto_approve"`
}

// Edit stages a role may be granted.
const (
	EditStagePropose     = "propose"
	EditStageApprove     = "approve"
	EditStageAutoApprove = "auto_approve"
)

// EditAllows reports whether any of roles may take stage (propose, approve
// or auto_approve) of edit op.
func (p *Policy) EditAllows(op, stage string, roles []string) bool {
	r, ok := p.Edits[op]
	if !ok {
		return false
	}
	var list []string
	switch stage {
	case EditStagePropose:
		list = r.Propose
	case EditStageApprove:
		list = r.Approve
	case EditStageAutoApprove:
		list = r.AutoApprove
	}
	if contains(list, "*") {
		return len(roles) > 0
	}
	for _, role := range roles {
		if contains(list, role) {
			return true
		}
	}
	return false
}

func (v *validator) edits(p *Policy) {
	for _, op := range sortedKeys(p.Edits) {
		at := path{"edits", op}
		if !v.oneOf(at, "edit op", op, EditOps) {
			continue
		}
		r := p.Edits[op]
		for stage, list := range map[string][]string{
			EditStagePropose: r.Propose, EditStageApprove: r.Approve, EditStageAutoApprove: r.AutoApprove,
		} {
			for i, role := range list {
				if _, ok := p.Roles[role]; !ok && role != "*" {
					v.add(at.with(stage, i), "unknown role %q", role)
				}
			}
		}
		for i, role := range r.AutoApprove {
			if !contains(r.Approve, role) && !contains(r.Approve, "*") {
				v.add(at.with(EditStageAutoApprove, i), "role %q auto-approves but may not approve (add it to approve)", role)
			}
		}
	}
}
