package policy

// GateInput describes one durable write the gate decides on.
type GateInput struct {
	Type       string
	Layer      string
	Sublayer   string
	SourceKind string
	// Roles are the writing principal's roles.
	Roles []string
	// Metadata is the write's metadata (e.g. channel, origin).
	Metadata map[string]string
}

// GateDecision is the gate's verdict on a write.
type GateDecision struct {
	// Action is approve, queue or reject.
	Action string
	// Rule is the name of the rule that matched, or "default".
	Rule string
	// Reason is the rule's reason, for audit.
	Reason string
}

// DefaultRule is the Rule of a decision no gate rule matched.
const DefaultRule = "default"

// Gate decides a write: the first rule whose criteria all hold wins; when
// none matches, the gate's default action applies.
func (p *Policy) Gate(in GateInput) GateDecision {
	for _, r := range p.WriteGate.Rules {
		if r.Match.matches(in) {
			return GateDecision{Action: r.Action, Rule: r.Name, Reason: r.Reason}
		}
	}
	return GateDecision{Action: p.WriteGate.Default, Rule: DefaultRule, Reason: "no gate rule matched"}
}

func (m GateMatch) matches(in GateInput) bool {
	if len(m.Types) > 0 && !contains(m.Types, in.Type) {
		return false
	}
	if len(m.Layers) > 0 && !contains(m.Layers, in.Layer) {
		return false
	}
	if len(m.Sublayers) > 0 && !contains(m.Sublayers, in.Sublayer) {
		return false
	}
	if len(m.SourceKinds) > 0 && !contains(m.SourceKinds, in.SourceKind) {
		return false
	}
	if len(m.Roles) > 0 && !anyOf(m.Roles, in.Roles) {
		return false
	}
	for k, want := range m.Metadata {
		got, ok := in.Metadata[k]
		if !ok || (want != "*" && got != want) {
			return false
		}
	}
	return true
}

func anyOf(want, have []string) bool {
	for _, h := range have {
		if contains(want, h) {
			return true
		}
	}
	return false
}

// Allows reports whether any of roles grants perm. Unknown roles grant
// nothing; "*" grants every permission but the operator ones
// (policy_reload), which a role must name.
func (p *Policy) Allows(roles []string, perm string) bool {
	wildcard := !contains(operatorPerms, perm)
	for _, role := range roles {
		perms := p.Roles[role]
		if (wildcard && contains(perms, PermAll)) || contains(perms, perm) {
			return true
		}
	}
	return false
}
