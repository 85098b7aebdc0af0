package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// TestEditsHTTP walks memory surgery and the audit trail over HTTP, one
// request a step, in order: each step's status, and the error code (or
// field) of a failure.
func TestEditsHTTP(t *testing.T) {
	a := newIngAPI(t)
	c, err := a.store.CreateMemory(context.Background(), graph.MemoryInput{
		Memory: graph.Memory{Scope: graph.Scope{TenantID: "t1"}, Type: "note", Title: "pool", Importance: 0.9,
			Visibility: graph.VisibilityProject},
		Version: graph.VersionInput{Content: "postgres pool size is 10"},
		Audit:   []graph.AuditEvent{{Scope: graph.Scope{TenantID: "t1"}, Action: "gate.approve", ActorID: "writer"}},
	})
	require.NoError(t, err)
	mem := c.Memory.ID
	edits := "/v1/memories/" + mem + "/edits"
	var amendID, retractID string
	steps := []httpStep{
		{"reader may not amend", "reader", "POST", fixed(edits), `{"kind":"amend","content":"x","reason":"r"}`, 403, "forbidden", nil},
		{"reason is required", "writer", "POST", fixed(edits), `{"kind":"amend","content":"x"}`, 400, "reason", nil},
		{"unknown field", "writer", "POST", fixed(edits), `{"kind":"amend","content":"x","reason":"r","why":"?"}`, 400, "why", nil},
		{"unknown kind", "writer", "POST", fixed(edits), `{"kind":"erase","reason":"r"}`, 400, "kind", nil},
		{"unknown memory", "writer", "POST", fixed("/v1/memories/" + graph.NewID() + "/edits"), `{"kind":"retract","reason":"r"}`, 404, "not_found", nil},
		{"writer proposes an amend: pending, with preview", "writer", "POST", fixed(edits),
			`{"kind":"amend","content":"postgres pool size is 20","reason":"resized"}`, 201, "", func(t *testing.T, body map[string]any) {
				ed := body["edit"].(map[string]any)
				assert.Equal(t, "pending", ed["status"])
				amendID = ed["id"].(string)
				pv := body["preview"].(map[string]any)
				assert.Equal(t, "postgres pool size is 10", pv["before"].(map[string]any)["content"])
				assert.Equal(t, "postgres pool size is 20", pv["after"].(map[string]any)["content"])
			}},
		{"pending changes nothing", "reader", "GET", fixed("/v1/memories/" + mem), "", 200, "", func(t *testing.T, body map[string]any) {
			assert.Equal(t, "postgres pool size is 10", body["content"])
		}},
		{"list edits", "reader", "GET", fixed(edits), "", 200, "", func(t *testing.T, body map[string]any) {
			assert.Len(t, body["edits"], 1)
		}},
		{"list edits by bad status", "reader", "GET", fixed(edits + "?status=maybe"), "", 400, "status", nil},
		{"writer may not approve", "writer", "POST", func() string { return "/v1/edits/" + amendID + ":approve" }, "", 403, "forbidden", nil},
		{"unknown verb", "librarian", "POST", func() string { return "/v1/edits/" + amendID + ":frobnicate" }, "", 404, "not_found", nil},
		{"unknown edit", "librarian", "POST", fixed("/v1/edits/" + graph.NewID() + ":approve"), "", 404, "not_found", nil},
		{"librarian approves", "librarian", "POST", func() string { return "/v1/edits/" + amendID + ":approve" }, `{"reason":"checked"}`, 200, "", func(t *testing.T, body map[string]any) {
			assert.Equal(t, "approved", body["edit"].(map[string]any)["status"])
		}},
		{"approving twice conflicts", "librarian", "POST", func() string { return "/v1/edits/" + amendID + ":approve" }, "", 409, "conflict", nil},
		{"rejecting an approved edit conflicts", "librarian", "POST", func() string { return "/v1/edits/" + amendID + ":reject" }, "", 409, "conflict", nil},
		{"get shows the amendment, the version unchanged", "reader", "GET", fixed("/v1/memories/" + mem), "", 200, "", func(t *testing.T, body map[string]any) {
			assert.Equal(t, "postgres pool size is 20", body["content"])
			assert.Equal(t, "postgres pool size is 10", body["version"].(map[string]any)["content"])
		}},
		{"librarian blocks on public: approved at once", "librarian", "POST", fixed(edits), `{"kind":"block","channel":"public","reason":"internal"}`, 201, "", func(t *testing.T, body map[string]any) {
			assert.Equal(t, true, body["auto_approved"])
		}},
		{"hidden on public", "reader", "GET", fixed("/v1/memories/" + mem + "?channel=public"), "", 404, "not_found", nil},
		{"visible on team", "reader", "GET", fixed("/v1/memories/" + mem + "?channel=team"), "", 200, "", nil},
		{"include_quarantined must be a boolean", "reader", "GET", fixed("/v1/memories/" + mem + "?include_quarantined=maybe"), "", 400, "include_quarantined", nil},
		{"writer proposes a retract", "writer", "POST", fixed(edits), `{"kind":"retract","reason":"wrong"}`, 201, "", func(t *testing.T, body map[string]any) {
			retractID = body["edit"].(map[string]any)["id"].(string)
		}},
		{"librarian rejects it", "librarian", "POST", func() string { return "/v1/edits/" + retractID + ":reject" }, `{"reason":"it is right"}`, 200, "", func(t *testing.T, body map[string]any) {
			assert.Equal(t, "rejected", body["edit"].(map[string]any)["status"])
		}},
		{"audit needs audit_read", "reader", "GET", fixed("/v1/audit"), "", 403, "forbidden", nil},
		{"audit of the memory", "librarian", "GET", fixed("/v1/audit?memory_id=" + mem), "", 200, "", func(t *testing.T, body map[string]any) {
			var actions []string
			for _, ev := range body["events"].([]any) {
				actions = append(actions, ev.(map[string]any)["action"].(string))
			}
			assert.Equal(t, []string{"gate.approve", "edit.propose", "edit.approve", "edit.propose", "edit.approve",
				"edit.propose", "edit.reject"}, actions)
			assert.Equal(t, "", body["next_cursor"])
		}},
		{"audit by actor, paged", "librarian", "GET", fixed("/v1/audit?actor=librarian&limit=2"), "", 200, "", func(t *testing.T, body map[string]any) {
			assert.Len(t, body["events"], 2)
			assert.NotEmpty(t, body["next_cursor"])
		}},
		{"audit of an unknown memory", "librarian", "GET", fixed("/v1/audit?memory_id=" + graph.NewID()), "", 404, "not_found", nil},
		{"audit with a bad time", "librarian", "GET", fixed("/v1/audit?from=yesterday"), "", 400, "from", nil},
		{"audit with to before from", "librarian", "GET", fixed("/v1/audit?from=2026-01-02&to=2026-01-01"), "", 400, "to", nil},
		{"audit with a bad limit", "librarian", "GET", fixed("/v1/audit?limit=0"), "", 400, "limit", nil},
	}
	a.walk(t, steps)
}

// httpStep is one request of a walk through the API: who sends what, the
// status it gets, and the error code (or error field for a 400) or a check
// of the body.
type httpStep struct {
	name   string
	role   string
	method string
	path   func() string
	body   string
	status int
	code   string // error code, or error field for 400
	check  func(t *testing.T, body map[string]any)
}

// walk sends steps in order, each a subtest.
func (a *ingAPI) walk(t *testing.T, steps []httpStep) {
	t.Helper()
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			status, body := a.call(t, s.role, s.method, s.path(), s.body)
			require.Equal(t, s.status, status, "body: %v", body)
			if s.code != "" {
				assert.Contains(t, []string{errCode(body), errField(body)}, s.code, fmt.Sprint(body))
			}
			if s.check != nil {
				s.check(t, body)
			}
		})
	}
}

func fixed(p string) func() string { return func() string { return p } }
