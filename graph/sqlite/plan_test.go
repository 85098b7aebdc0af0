package sqlite

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// TestQueryPlans guards the hot statements against the plan that cost
// searches tens of milliseconds twice (docs/benchmarks.md): scanning a
// tenant's memories, or all of a table, and probing an id list, instead of
// walking the list and seeking each id. The schema has no ANALYZE
// statistics, in tests as in use, so the plan here is the plan there.
func TestQueryPlans(t *testing.T) {
	// The tables that grow with the data, by the names and aliases the
	// statements use.
	bigTables := map[string]bool{"memories": true, "m": true, "versions": true, "v": true, "cv": true,
		"mentions": true, "x": true, "memory_next": true, "n": true, "supersedes": true, "s": true, "y": true, "entities": true, "e": true, "outbox": true}
	s := openTemp(t)
	// Every shape of the access rule: a plain reader (Sees and the user
	// predicate), one in a repo (the org-and-repo clause), and the engine's
	// System reader (Contains, no user predicate).
	for _, r := range []struct {
		name string
		f    graph.Filter
	}{
		{"PlainOrg", graph.Filter{Scope: graph.Scope{TenantID: "t", OrgID: "o"}, Reader: graph.Reader{UserID: "u"}}},
		{"PlainRepo", graph.Filter{Scope: graph.Scope{TenantID: "t", OrgID: "o", RepoID: "r"}, Reader: graph.Reader{UserID: "u"}}},
		{"PlainTenant", graph.Filter{Scope: graph.Scope{TenantID: "t"}, Reader: graph.Reader{UserID: "u"}}},
		{"System", graph.Filter{Scope: graph.Scope{TenantID: "t", OrgID: "o"}, Reader: graph.System}},
	} {
		r.f.Types, r.f.Channel = []string{"note"}, "c"
		t.Run(r.name, func(t *testing.T) { checkPlans(t, s, r.f, bigTables) })
	}
}

func checkPlans(t *testing.T, s *Store, f graph.Filter, bigTables map[string]bool) {
	w, err := memoryFilter(f, false)
	require.NoError(t, err)
	scope := &where{}
	scope.writeScope("m", f.Scope)
	ids := `["a","b"]`
	// Plan steps that would probe every pair of two lists (an index on
	// both columns used for both): quadratic in the walk's lists.
	avoid := map[string][]string{
		"walkLinks": {"supersedes_old", "memory_next_next"},
	}
	for _, tc := range []struct {
		name  string
		query string
		args  []any
	}{
		{"keywordFilter", fmt.Sprintf(keywordFilter, w.sql()), append([]any{`[1,2]`}, w.args...)},
		{"touchMemories", fmt.Sprintf(touchMemories, scope.sql()), append([]any{1, ids}, scope.args...)},
		{"selectMemoriesByID", fmt.Sprintf(selectMemoriesByID, w.sql()), append([]any{ids}, w.args...)},
		{"selectVersionsByID", fmt.Sprintf(selectVersionsByID, w.sql()), append([]any{ids}, w.args...)},
		{"memoriesByRID", memoriesByRID, []any{`[1,2]`}},
		{"selectSeeds", fmt.Sprintf(selectSeeds, w.sql()), append([]any{ids}, w.args...)},
		{"seedEntities", seedEntities, []any{`[1,2]`}},
		{"matchedEntities", matchedEntities, []any{`[1,2]`, `[3]`}},
		{"resolveNames", resolveNames, []any{"t", ids, "t", ids}},
		{"walkResolve", walkResolve, []any{ids, "t", ids, "t"}},
		{"walkSeeds", fmt.Sprintf(walkSeeds, w.sql()), append([]any{ids}, w.args...)},
		{"walkPostings", fmt.Sprintf(walkPostings, w.sql()), append(append([]any{}, w.args...), 501, `[1,2]`)},
		{"walkMentions", walkMentions, []any{`[1,2]`}},
		{"walkLinks", walkLinks, []any{`[1,2]`, `[1,2]`, `[1,2]`, `[1,2]`}},
		{"walkLinked", fmt.Sprintf(walkLinked, w.sql()), append([]any{`[1,2]`, `[1,2]`, `[1,2]`, `[1,2]`}, w.args...)},
		{"keywordDelta", keywordDelta, []any{0, 10}},
		{"dueOutbox", dueOutbox, []any{1, 10}},
		{"deadOutbox", deadOutbox, []any{10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := explain(t, s.r, tc.query, tc.args...)
			require.NotEmpty(t, plan)
			for _, step := range plan {
				assert.NotContains(t, step, "memories_tenant_created", "scans the tenant's memories:\n%s", strings.Join(plan, "\n"))
				for _, a := range avoid[tc.name] {
					assert.NotContains(t, step, a, "probes every pair of two lists:\n%s", strings.Join(plan, "\n"))
				}
				if f := strings.Fields(step); len(f) > 1 && f[0] == "SCAN" {
					assert.False(t, bigTables[f[1]], "scans %s:\n%s", f[1], strings.Join(plan, "\n"))
				}
			}
		})
	}
}

// TestSessionPlan: the lookup of a session's newest memory, made on every
// write of a memory with a session, seeks memories_session instead of
// scanning a tenant's memories or sorting a session's.
func TestSessionPlan(t *testing.T) {
	s := openTemp(t)
	rows, err := s.w.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+newestInSession, "t", "s", "", "", "u", 1)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	joined := strings.Join(plan, "\n")
	assert.Contains(t, joined, "memories_session", joined)
	assert.NotContains(t, joined, "TEMP B-TREE", "sorts the session:\n%s", joined)
}

// TestKeyPlans: the write path's lookups of a key's active holder, three
// per ingested note, seek memories_active_ns to the exact namespace and
// read the newest first. The lookup by key walked the tenant's memories of
// the type before (memories_type_created): ingest slowed as the store grew.
func TestKeyPlans(t *testing.T) {
	s := openTemp(t)
	for _, tc := range []struct {
		name, query string
	}{
		{"selectActiveByKey", selectActiveByKey},
		{"activeHolder", activeHolder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := explain(t, s.r, tc.query, "t", "k", "o", "r", "u", "note")
			joined := strings.Join(plan, "\n")
			assert.Contains(t, joined, "memories_active_ns (tenant_id=? AND canonical_key=? AND org_id=? AND repo_id=? AND user_id=? AND type=?)", joined)
			assert.NotContains(t, joined, "TEMP B-TREE", "sorts the holders:\n%s", joined)
		})
	}
}

// TestCurationPlans: the statements an erase runs per memory or entity,
// and the bundle's listing of one visibility's decisions, seek the index
// named (each scanned a table, or a tenant's rows, before: a partial index
// a bound parameter cannot prove, or no index by entity; see
// docs/benchmarks.md, "Curation targets") and scan no table.
func TestCurationPlans(t *testing.T) {
	s := openTemp(t)
	f := graph.Filter{Scope: graph.Scope{TenantID: "t"}, Reader: graph.Reader{UserID: "u"},
		Types: []string{"decision"}, Visibility: []graph.Visibility{graph.VisibilityUser}}
	w, err := memoryFilter(f, false)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, query, index string
		args               []any
	}{
		{"eraseCapsuleItems", eraseCapsuleItems, "capsule_items_memory", []any{1}},
		{"eraseGateRequests", eraseGateRequests, "gate_memory", []any{"t", "m"}},
		{"deleteOrphanAliases", deleteOrphanAliases, "entity_aliases_entity", []any{1}},
		{"deleteOrphan", deleteOrphan, "entity_aliases_entity", []any{1}},
		{"bundleDecisions", fmt.Sprintf(listMemories, w.sql()), "memories_type_visibility_created", append(w.args, 21)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := explain(t, s.w, tc.query, tc.args...)
			joined := strings.Join(plan, "\n")
			assert.Contains(t, joined, tc.index, joined)
			for _, step := range plan {
				assert.False(t, strings.HasPrefix(step, "SCAN "), "scans a table:\n%s", joined)
			}
		})
	}
}

// explain returns the steps of query's plan on db.
func explain(t *testing.T, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	require.NoError(t, err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	require.NoError(t, rows.Err())
	return plan
}
