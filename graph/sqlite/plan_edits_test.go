package sqlite

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/graph"
)

// TestEditAndAuditPlans: the edits of a few memories (every search reads
// them) are found through edits_target, not by walking every edit of the
// tenant; audit by actor through audit_actor.
func TestEditAndAuditPlans(t *testing.T) {
	s := openTemp(t)
	f := graph.Filter{Scope: graph.Scope{TenantID: "t", OrgID: "o"}, Reader: graph.Reader{UserID: "u"}}
	edits := &where{}
	edits.readScope("ed", f)
	edits.in("ed.status", []any{"approved"})
	audit := &where{}
	audit.readScope("a", f)
	audit.add("a.actor_id = ?", "x")
	audit.add(auditOfReadable, "u")
	for _, tc := range []struct {
		name, query, index string
		args               []any
	}{
		{"listEditsOf", fmt.Sprintf(listEditsOf, edits.sql()), "edits_target (tenant_id=? AND target_memory_id=?",
			append([]any{`["a","b"]`, "t"}, edits.args...)},
		{"listAuditByActor", fmt.Sprintf(listAudit, audit.sql()), "audit_actor", append(audit.args, 10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := explain(t, s.r, tc.query, tc.args...)
			assert.Contains(t, strings.Join(plan, "\n"), tc.index, "plan:\n%s", strings.Join(plan, "\n"))
		})
	}
}
