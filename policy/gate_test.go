package policy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/policy"
)

func TestGateDefaultPolicy(t *testing.T) {
	p := loadDefault(t)
	tests := []struct {
		name       string
		in         policy.GateInput
		wantAction string
		wantRule   string
	}{
		{
			name:       "quarantine channel wins over admin",
			in:         policy.GateInput{Type: "note", Layer: "World", Sublayer: "Fact", SourceKind: "AUTHORED", Roles: []string{"admin"}, Metadata: map[string]string{"channel": "quarantine"}},
			wantAction: policy.ActionReject, wantRule: "reject-quarantined-channel",
		},
		{
			name:       "librarian approves",
			in:         policy.GateInput{Type: "decision", Layer: "Intent", Sublayer: "Decision", SourceKind: "AUTHORED", Roles: []string{"librarian"}},
			wantAction: policy.ActionApprove, wantRule: "librarian-approves",
		},
		{
			name:       "proposal queues",
			in:         policy.GateInput{Type: "note", Layer: "World", Sublayer: "Fact", SourceKind: "PROPOSED", Roles: []string{"writer"}},
			wantAction: policy.ActionQueue, wantRule: "proposals-queue",
		},
		{
			name:       "writer rule queues",
			in:         policy.GateInput{Type: "note", Layer: "World", Sublayer: "Rule", SourceKind: "AUTHORED", Roles: []string{"writer"}},
			wantAction: policy.ActionQueue, wantRule: "rules-and-decisions-need-review",
		},
		{
			name:       "writer preference approves",
			in:         policy.GateInput{Type: "note", Layer: "Self", Sublayer: "Preference", SourceKind: "AUTHORED", Roles: []string{"writer"}},
			wantAction: policy.ActionApprove, wantRule: "self-layer-authored",
		},
		{
			name:       "writer note approves",
			in:         policy.GateInput{Type: "note", Layer: "World", Sublayer: "Fact", SourceKind: "AUTHORED", Roles: []string{"reader", "writer"}},
			wantAction: policy.ActionApprove, wantRule: "authored-notes-and-tasks",
		},
		{
			name:       "reader falls to default",
			in:         policy.GateInput{Type: "note", Layer: "World", Sublayer: "Fact", SourceKind: "AUTHORED", Roles: []string{"reader"}},
			wantAction: policy.ActionQueue, wantRule: policy.DefaultRule,
		},
		{
			name:       "no roles falls to default",
			in:         policy.GateInput{Type: "skill", Layer: "World", Sublayer: "Procedure", SourceKind: "AUTHORED"},
			wantAction: policy.ActionQueue, wantRule: policy.DefaultRule,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Gate(tt.in)
			assert.Equal(t, tt.wantAction, got.Action)
			assert.Equal(t, tt.wantRule, got.Rule)
			assert.NotEmpty(t, got.Reason)
		})
	}
}

func TestGateMetadata(t *testing.T) {
	p := mustParse(t, replaceOnce(t, minimal, "  rules:\n    - name: admin-approves\n", `  rules:
    - name: has-origin
      match: {metadata: {origin: "*", team: core}}
      action: approve
    - name: admin-approves
`))
	tests := []struct {
		name string
		md   map[string]string
		want string
	}{
		{"all keys match", map[string]string{"origin": "x", "team": "core"}, "has-origin"},
		{"wildcard needs presence", map[string]string{"team": "core"}, policy.DefaultRule},
		{"value mismatch", map[string]string{"origin": "x", "team": "web"}, policy.DefaultRule},
		{"nil metadata", nil, policy.DefaultRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, p.Gate(policy.GateInput{Type: "note", Metadata: tt.md}).Rule)
		})
	}
}

func TestAllows(t *testing.T) {
	p := loadDefault(t)
	tests := []struct {
		roles []string
		perm  string
		want  bool
	}{
		{[]string{"reader"}, policy.PermRead, true},
		{[]string{"reader"}, policy.PermWrite, false},
		{[]string{"writer"}, policy.PermWrite, true},
		{[]string{"writer"}, policy.PermApprove, false},
		{[]string{"librarian"}, policy.PermApprove, true},
		{[]string{"librarian"}, policy.PermPolicyReload, false},
		{[]string{"admin"}, policy.PermPolicyReload, false}, // "*" grants no operator permission
		{[]string{"operator"}, policy.PermPolicyReload, true},
		{[]string{"operator"}, policy.PermRead, false},
		{[]string{"admin", "operator"}, policy.PermPolicyReload, true},
		{[]string{"admin"}, policy.PermReadQuarantined, true},
		{[]string{"admin"}, policy.PermReadAllUsers, true},
		{[]string{"admin"}, policy.PermActAsUser, true},
		{[]string{"admin"}, policy.PermSubscopes, true},
		{[]string{"librarian"}, policy.PermReadAllUsers, false},
		{[]string{"librarian"}, policy.PermActAsUser, false},
		{[]string{"writer"}, policy.PermSubscopes, false},
		{[]string{"reader", "librarian"}, policy.PermCurate, true},
		{[]string{"ghost"}, policy.PermRead, false},
		{nil, policy.PermRead, false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, p.Allows(tt.roles, tt.perm), "roles %v perm %s", tt.roles, tt.perm)
	}
}
