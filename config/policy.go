package config

import _ "embed"

//go:embed default_policy.yaml
var defaultPolicy []byte

// DefaultPolicy returns a copy of the policy YAML shipped with mnemo, used
// when no policy file is configured. Parse it with policy.Parse.
func DefaultPolicy() []byte {
	out := make([]byte, len(defaultPolicy))
	copy(out, defaultPolicy)
	return out
}
