package extract

import "github.com/mnemo-dev/mnemo/policy"

// Hint carries what the caller already knows about a memory.
type Hint struct {
	// Type is the caller-given memory type; when it is in the policy's
	// catalog it always wins over a rule's type.
	Type string
}

// Classification is the type, layer and sublayer of a memory and the name
// of the policy rule that chose them.
type Classification struct {
	Type     string
	Layer    string
	Sublayer string
	// Rule is the classification rule that fired, or DefaultRule.
	Rule string
}

// DefaultRule is the Rule of a classification no policy rule matched.
const DefaultRule = "default"

// Classify applies the policy's classification rules to text in order; the
// first matching rule wins. With no match the policy default applies
// (World.Fact in the shipped policy): Classify never guesses beyond rules.
func Classify(p *policy.Policy, text string, hint Hint) Classification {
	def := p.Classify.Default
	typ := def.Type
	if _, ok := p.Type(hint.Type); ok {
		typ = hint.Type
	}
	for i := range p.Classify.Rules {
		r := &p.Classify.Rules[i]
		if !r.AppliesTo(hint.Type) || !r.Matches(text) {
			continue
		}
		c := Classification{Type: typ, Layer: r.Layer, Sublayer: r.Sublayer, Rule: r.Name}
		if r.Type != "" && typ != hint.Type {
			c.Type = r.Type
		}
		return c
	}
	return Classification{Type: typ, Layer: def.Layer, Sublayer: def.Sublayer, Rule: DefaultRule}
}
