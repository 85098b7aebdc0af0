package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
)

// editFixture is a real store (SQLite, or Neo4j with MNEMO_TEST_STORE) and
// an engine with the default policy, holding:
//
//	pool     shared (visibility project) note of u1, importance 0.9:
//	         "postgres pool size is 10"
//	private  u2's private note on the same subject
type editFixture struct {
	t     *testing.T
	store graph.Store
	eng   *engine.Engine
	scope graph.Scope
	pool  string
	priv  string
	clock time.Time
}

func newEditFixture(t *testing.T) *editFixture {
	t.Helper()
	st := graphtest.Open(t)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	fx := &editFixture{t: t, store: st, scope: graph.Scope{TenantID: "t1"}, clock: now}
	// Each call is a second later, so decisions have an order.
	fx.eng, err = engine.New(engine.Options{Store: st, Policy: holder, Now: func() time.Time {
		fx.clock = fx.clock.Add(time.Second)
		return fx.clock
	}})
	require.NoError(t, err)
	pg := graph.EntityRef{Name: "PostgreSQL", Type: "tool", Aliases: []string{"postgres"}}
	add := func(user string, vis graph.Visibility, content string) string {
		c, err := graphtest.CreateMemory(context.Background(), st, graph.MemoryInput{
			Memory: graph.Memory{Scope: fx.scope, UserID: user, Type: "note", Title: "postgres pool", Importance: 0.9,
				Visibility: vis, CreatedAt: now.Add(-time.Hour)},
			Version: graph.VersionInput{Content: content, Entities: []graph.EntityRef{pg}},
			Audit:   []graph.AuditEvent{{Scope: fx.scope, Action: engine.AuditGateApprove, ActorID: user, CreatedAt: now.Add(-time.Hour)}},
		})
		require.NoError(t, err)
		return c.Memory.ID
	}
	fx.pool = add("u1", graph.VisibilityProject, "postgres pool size is 10")
	fx.priv = add("u2", graph.VisibilityUser, "postgres pool size is secret")
	return fx
}

// as is a principal of user u1 in the fixture's scope, with roles.
func (fx *editFixture) as(id string, roles ...string) graph.Principal {
	return graph.Principal{ID: id, UserID: "u1", Roles: roles, Scope: fx.scope}
}

// found reports whether a search by roles (on channel, asking for
// quarantined ones) returns the pool memory, and the result.
func (fx *editFixture) found(channel string, quarantined bool, roles ...string) (engine.SearchResult, bool) {
	fx.t.Helper()
	resp, err := fx.eng.Search(context.Background(), fx.as("reader", roles...), engine.SearchRequest{
		Query: "postgres pool size", Mode: policy.ModeKeyword, Channel: channel, IncludeQuarantined: quarantined})
	require.NoError(fx.t, err)
	for _, r := range resp.Results {
		if r.Memory.ID == fx.pool {
			return r, true
		}
	}
	return engine.SearchResult{}, false
}

// context reports whether read_context (by query, and by element) returns
// the pool memory on channel, and its content.
func (fx *editFixture) context(channel string) (string, bool, bool) {
	fx.t.Helper()
	ctx := context.Background()
	resp, err := fx.eng.ReadContext(ctx, fx.as("reader", "reader"), engine.ContextRequest{Query: "postgres pool size", Channel: channel})
	require.NoError(fx.t, err)
	content, byQuery := "", false
	for _, it := range resp.Items {
		if it.ElementID == fx.pool {
			content, byQuery = it.Content, true
		}
	}
	el, err := fx.eng.ReadContext(ctx, fx.as("reader", "reader"), engine.ContextRequest{ElementID: fx.pool, Channel: channel})
	byElement := err == nil && len(el.Items) == 1
	if err != nil {
		require.ErrorIs(fx.t, err, graph.ErrNotFound)
	}
	return content, byQuery, byElement
}

func ptr(x float64) *float64 { return &x }

// TestEditOps runs each op through the API of the engine (proposed by a
// librarian, approved by another when the policy does not auto-approve it)
// and checks its effect on search, get and read_context.
func TestEditOps(t *testing.T) {
	tests := []struct {
		name  string
		req   engine.EditRequest
		check func(t *testing.T, fx *editFixture)
	}{
		{"retract hides everywhere", engine.EditRequest{Kind: graph.EditRetract}, func(t *testing.T, fx *editFixture) {
			_, ok := fx.found("", false, "reader")
			assert.False(t, ok, "search")
			_, ok = fx.found("team", true, "librarian")
			assert.False(t, ok, "search asking for quarantined, on a channel")
			_, err := fx.eng.Get(context.Background(), fx.as("reader", "reader"), fx.pool)
			assert.ErrorIs(t, err, graph.ErrNotFound, "get")
			_, byQuery, byElement := fx.context("")
			assert.False(t, byQuery, "read_context by query")
			assert.False(t, byElement, "read_context by element")
		}},
		{"amend changes text and importance, not the version", engine.EditRequest{Kind: graph.EditAmend, Content: "postgres pool size is 20", Importance: ptr(0.7)}, func(t *testing.T, fx *editFixture) {
			r, ok := fx.found("", false, "reader")
			require.True(t, ok, "search")
			assert.Contains(t, r.Content, "is 20")
			assert.InDelta(t, 0.7, r.Memory.Importance, 1e-9)
			assert.Equal(t, []string{"amend"}, r.Edits)
			v, err := fx.eng.Get(context.Background(), fx.as("reader", "reader"), fx.pool)
			require.NoError(t, err)
			assert.Equal(t, "postgres pool size is 20", v.Content)
			assert.Equal(t, "postgres pool size is 10", v.Version.Content, "the version is unchanged")
			assert.InDelta(t, 0.7, v.Memory.Importance, 1e-9)
			content, byQuery, byElement := fx.context("")
			assert.True(t, byQuery && byElement, "read_context")
			assert.Equal(t, "postgres pool size is 20", content)
			stored, err := fx.store.GetMemory(context.Background(), graph.Filter{Scope: fx.scope, Reader: graph.System}, fx.pool)
			require.NoError(t, err)
			assert.InDelta(t, 0.9, stored.Importance, 1e-9, "the stored memory is unchanged")
		}},
		{"quarantine hides unless asked for, then flagged", engine.EditRequest{Kind: graph.EditQuarantine}, func(t *testing.T, fx *editFixture) {
			_, ok := fx.found("", false, "reader")
			assert.False(t, ok, "plain search")
			r, ok := fx.found("", true, "librarian")
			require.True(t, ok, "search with include_quarantined by a librarian")
			assert.Contains(t, r.Flags, engine.FlagQuarantined)
			_, err := fx.eng.Search(context.Background(), fx.as("reader", "reader"), engine.SearchRequest{Query: "postgres", IncludeQuarantined: true})
			assert.ErrorIs(t, err, graph.ErrForbidden, "include_quarantined needs read_quarantined")
			_, err = fx.eng.Get(context.Background(), fx.as("reader", "reader"), fx.pool)
			assert.ErrorIs(t, err, graph.ErrNotFound, "get")
			v, err := fx.eng.GetWith(context.Background(), fx.as("lib", "librarian"), fx.pool, engine.GetOptions{IncludeQuarantined: true})
			require.NoError(t, err)
			assert.Equal(t, []string{"quarantine"}, v.Edits)
			_, byQuery, byElement := fx.context("")
			assert.False(t, byQuery || byElement, "read_context")
		}},
		{"attenuate by delta: 0.9 - 0.5 = 0.4", engine.EditRequest{Kind: graph.EditAttenuate, Delta: ptr(-0.5)}, func(t *testing.T, fx *editFixture) {
			r, ok := fx.found("", false, "reader")
			require.True(t, ok)
			assert.InDelta(t, 0.4, r.Memory.Importance, 1e-9)
			v, err := fx.eng.Get(context.Background(), fx.as("reader", "reader"), fx.pool)
			require.NoError(t, err)
			assert.InDelta(t, 0.4, v.Memory.Importance, 1e-9)
			// A later absolute value resets the base.
			_, err = fx.eng.ProposeEdit(context.Background(), fx.as("lib", "librarian"), fx.pool,
				engine.EditRequest{Kind: graph.EditAttenuate, Importance: ptr(0.6), Reason: "reset"})
			require.NoError(t, err)
			r, ok = fx.found("", false, "reader")
			require.True(t, ok)
			assert.InDelta(t, 0.6, r.Memory.Importance, 1e-9)
		}},
		{"block hides on its channel only", engine.EditRequest{Kind: graph.EditBlock, Channel: "public"}, func(t *testing.T, fx *editFixture) {
			_, ok := fx.found("public", false, "reader")
			assert.False(t, ok, "search on public")
			_, ok = fx.found("team", false, "reader")
			assert.True(t, ok, "search on team")
			_, err := fx.eng.GetWith(context.Background(), fx.as("reader", "reader"), fx.pool, engine.GetOptions{Channel: "public"})
			assert.ErrorIs(t, err, graph.ErrNotFound, "get on public")
			_, err = fx.eng.GetWith(context.Background(), fx.as("reader", "reader"), fx.pool, engine.GetOptions{Channel: "team"})
			assert.NoError(t, err, "get on team")
			_, byQuery, byElement := fx.context("public")
			assert.False(t, byQuery || byElement, "read_context on public")
			_, byQuery, byElement = fx.context("team")
			assert.True(t, byQuery && byElement, "read_context on team")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fx := newEditFixture(t)
			ctx := context.Background()
			_, ok := fx.found("", false, "reader")
			require.True(t, ok, "the memory is found before the edit")
			tc.req.Reason = "test " + string(tc.req.Kind)
			res, err := fx.eng.ProposeEdit(ctx, fx.as("lib-1", "librarian"), fx.pool, tc.req)
			require.NoError(t, err)
			if res.Edit.Status == graph.EditPending {
				_, ok := fx.found("", false, "reader")
				require.True(t, ok, "a pending edit changes nothing")
				_, err = fx.eng.DecideEdit(ctx, fx.as("lib-2", "librarian"), res.Edit.ID, true, "")
				require.NoError(t, err)
			}
			tc.check(t, fx)
		})
	}
}

// TestEditApprovalRules checks the default policy's edits section and the
// statuses of proposing and deciding.
func TestEditApprovalRules(t *testing.T) {
	tests := []struct {
		name   string
		roles  []string
		req    engine.EditRequest
		target string // "private": u2's private memory; "missing"; else pool
		err    error
		status graph.EditStatus
	}{
		{"reader may flag for quarantine, pending", []string{"reader"}, engine.EditRequest{Kind: graph.EditQuarantine, Reason: "r"}, "", nil, graph.EditPending},
		{"reader may not amend", []string{"reader"}, engine.EditRequest{Kind: graph.EditAmend, Content: "x", Reason: "r"}, "", graph.ErrForbidden, ""},
		{"writer's amend waits", []string{"writer"}, engine.EditRequest{Kind: graph.EditAmend, Content: "x", Reason: "r"}, "", nil, graph.EditPending},
		{"writer may not block", []string{"writer"}, engine.EditRequest{Kind: graph.EditBlock, Channel: "public", Reason: "r"}, "", graph.ErrForbidden, ""},
		{"librarian's amend is approved at once", []string{"librarian"}, engine.EditRequest{Kind: graph.EditAmend, Content: "x", Reason: "r"}, "", nil, graph.EditApproved},
		{"librarian's retract waits for a second librarian", []string{"librarian"}, engine.EditRequest{Kind: graph.EditRetract, Reason: "r"}, "", nil, graph.EditPending},
		{"admin's retract is approved at once", []string{"admin"}, engine.EditRequest{Kind: graph.EditRetract, Reason: "r"}, "", nil, graph.EditApproved},
		{"reason is required", []string{"librarian"}, engine.EditRequest{Kind: graph.EditRetract}, "", graph.ErrInvalid, ""},
		{"unknown kind", []string{"librarian"}, engine.EditRequest{Kind: "erase", Reason: "r"}, "", graph.ErrInvalid, ""},
		{"amend needs content or importance", []string{"librarian"}, engine.EditRequest{Kind: graph.EditAmend, Reason: "r"}, "", graph.ErrInvalid, ""},
		{"attenuate takes importance or delta, not both", []string{"librarian"}, engine.EditRequest{Kind: graph.EditAttenuate, Importance: ptr(0.1), Delta: ptr(-0.1), Reason: "r"}, "", graph.ErrInvalid, ""},
		{"a delta lowers", []string{"librarian"}, engine.EditRequest{Kind: graph.EditAttenuate, Delta: ptr(0.2), Reason: "r"}, "", graph.ErrInvalid, ""},
		{"block needs a channel", []string{"librarian"}, engine.EditRequest{Kind: graph.EditBlock, Reason: "r"}, "", graph.ErrInvalid, ""},
		{"another user's private memory is not found", []string{"librarian"}, engine.EditRequest{Kind: graph.EditRetract, Reason: "r"}, "private", graph.ErrNotFound, ""},
		{"an unknown memory is not found", []string{"librarian"}, engine.EditRequest{Kind: graph.EditRetract, Reason: "r"}, "missing", graph.ErrNotFound, ""},
		{"a version of another memory is refused", []string{"librarian"}, engine.EditRequest{Kind: graph.EditAmend, Content: "x", Reason: "r", VersionID: "private"}, "", graph.ErrInvalid, ""},
	}
	parent := t
	fx := newEditFixture(parent)
	ctx := context.Background()
	privVersion := func() string {
		m, err := fx.store.GetMemory(ctx, graph.Filter{Scope: fx.scope, Reader: graph.System}, fx.priv)
		require.NoError(t, err)
		return m.CurrentVersionID
	}()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := fx.pool
			switch tc.target {
			case "private":
				target = fx.priv
			case "missing":
				target = graph.NewID()
			}
			if tc.req.VersionID == "private" {
				tc.req.VersionID = privVersion
			}
			res, err := fx.eng.ProposeEdit(ctx, fx.as("p", tc.roles...), target, tc.req)
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.status, res.Edit.Status)
			assert.Equal(t, tc.status == graph.EditApproved, res.AutoApproved)
			if tc.status == graph.EditApproved { // undo what it did for the next cases
				fx = newEditFixture(parent)
			}
		})
	}
}

// TestDecideEdit: who may decide, and what deciding twice answers.
func TestDecideEdit(t *testing.T) {
	fx := newEditFixture(t)
	ctx := context.Background()
	res, err := fx.eng.ProposeEdit(ctx, fx.as("w", "writer"), fx.pool, engine.EditRequest{Kind: graph.EditAmend, Content: "postgres pool size is 30", Reason: "new value"})
	require.NoError(t, err)
	require.Equal(t, graph.EditPending, res.Edit.Status)
	assert.Equal(t, "postgres pool size is 10", res.Preview.Before.Content)
	assert.Equal(t, "postgres pool size is 30", res.Preview.After.Content)
	id := res.Edit.ID

	steps := []struct {
		name    string
		roles   []string
		approve bool
		id      string
		err     error
	}{
		{"a writer may not approve", []string{"writer"}, true, id, graph.ErrForbidden},
		{"an unknown edit is not found", []string{"librarian"}, true, graph.NewID(), graph.ErrNotFound},
		{"a librarian approves", []string{"librarian"}, true, id, nil},
		{"approving again conflicts", []string{"librarian"}, true, id, graph.ErrConflict},
		{"rejecting an approved edit conflicts", []string{"librarian"}, false, id, graph.ErrConflict},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			d, err := fx.eng.DecideEdit(ctx, fx.as("lib", s.roles...), s.id, s.approve, "checked")
			if s.err != nil {
				assert.ErrorIs(t, err, s.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, graph.EditApproved, d.Edit.Status)
			assert.Equal(t, "lib", d.Edit.DecidedBy)
			assert.Equal(t, "postgres pool size is 30", d.Preview.After.Content)
		})
	}
	t.Run("RejectLeavesTheMemory", func(t *testing.T) {
		r, err := fx.eng.ProposeEdit(ctx, fx.as("w", "writer"), fx.pool, engine.EditRequest{Kind: graph.EditRetract, Reason: "wrong"})
		require.NoError(t, err)
		d, err := fx.eng.DecideEdit(ctx, fx.as("lib", "librarian"), r.Edit.ID, false, "it is right")
		require.NoError(t, err)
		assert.Equal(t, graph.EditRejected, d.Edit.Status)
		assert.Equal(t, d.Preview.Before, d.Preview.After)
		_, ok := fx.found("", false, "reader")
		assert.True(t, ok)
	})
	t.Run("ListAndAudit", func(t *testing.T) {
		eds, err := fx.eng.ListMemoryEdits(ctx, fx.as("r", "reader"), fx.pool, "")
		require.NoError(t, err)
		require.Len(t, eds, 2)
		pending, err := fx.eng.ListMemoryEdits(ctx, fx.as("r", "reader"), fx.pool, graph.EditPending)
		require.NoError(t, err)
		assert.Empty(t, pending)
		evs, _, err := fx.eng.ListAudit(ctx, fx.as("lib", "librarian"), engine.AuditRequest{MemoryID: fx.pool})
		require.NoError(t, err)
		var actions []string
		for _, ev := range evs {
			actions = append(actions, ev.Action)
		}
		assert.Equal(t, []string{engine.AuditGateApprove, engine.AuditEditPropose, engine.AuditEditApprove,
			engine.AuditEditPropose, engine.AuditEditReject}, actions)
	})
}

// TestListAudit: the permission, the filters, pages, and the user rule.
func TestListAudit(t *testing.T) {
	fx := newEditFixture(t)
	ctx := context.Background()
	lib := fx.as("lib", "librarian")
	for i := range 3 {
		_, err := fx.eng.ProposeEdit(ctx, lib, fx.pool, engine.EditRequest{Kind: graph.EditAttenuate, Delta: ptr(-0.1), Reason: "step"})
		require.NoError(t, err, i)
	}
	_, err := fx.eng.ProposeEdit(ctx, fx.as("w", "writer"), fx.pool, engine.EditRequest{Kind: graph.EditRetract, Reason: "writer"})
	require.NoError(t, err)

	_, _, err = fx.eng.ListAudit(ctx, fx.as("r", "reader"), engine.AuditRequest{})
	assert.ErrorIs(t, err, graph.ErrForbidden, "audit_read is required")

	count := func(r engine.AuditRequest, p graph.Principal) int {
		t.Helper()
		evs, _, err := fx.eng.ListAudit(ctx, p, r)
		require.NoError(t, err)
		return len(evs)
	}
	tests := []struct {
		name string
		r    engine.AuditRequest
		p    graph.Principal
		want int
	}{
		{"everything the librarian may read: not u2's private memory", engine.AuditRequest{}, lib, 1 + 6 + 1},
		{"an admin reads every user's", engine.AuditRequest{}, fx.as("a", "admin"), 2 + 6 + 1},
		{"by memory", engine.AuditRequest{MemoryID: fx.pool}, lib, 8},
		{"by actor", engine.AuditRequest{ActorID: "w"}, lib, 1},
		{"by action", engine.AuditRequest{Action: engine.AuditEditApprove}, lib, 3},
		{"from (inclusive)", engine.AuditRequest{From: now}, lib, 7},
		{"to (exclusive)", engine.AuditRequest{To: now}, lib, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, count(tc.r, tc.p)) })
	}
	t.Run("AnotherUsersPrivateMemoryIsNotFound", func(t *testing.T) {
		_, _, err := fx.eng.ListAudit(ctx, lib, engine.AuditRequest{MemoryID: fx.priv})
		assert.ErrorIs(t, err, graph.ErrNotFound)
	})
	t.Run("ToBeforeFrom", func(t *testing.T) {
		_, _, err := fx.eng.ListAudit(ctx, lib, engine.AuditRequest{From: now, To: now.Add(-time.Hour)})
		assert.ErrorIs(t, err, graph.ErrInvalid)
	})
	t.Run("Pages", func(t *testing.T) {
		var all []string
		r := engine.AuditRequest{MemoryID: fx.pool, Limit: 3}
		for range 10 {
			evs, next, err := fx.eng.ListAudit(ctx, lib, r)
			require.NoError(t, err)
			for _, ev := range evs {
				all = append(all, ev.ID)
			}
			if next == "" {
				break
			}
			r.Cursor = next
		}
		assert.Len(t, all, 8)
		seen := map[string]bool{}
		for _, id := range all {
			assert.False(t, seen[id], "repeated %s", id)
			seen[id] = true
		}
	})
	t.Run("RetractedMemoryKeepsItsTrail", func(t *testing.T) {
		_, err := fx.eng.ProposeEdit(ctx, fx.as("a", "admin"), fx.pool, engine.EditRequest{Kind: graph.EditRetract, Reason: "gone"})
		require.NoError(t, err)
		assert.Equal(t, 10, count(engine.AuditRequest{MemoryID: fx.pool}, lib))
	})
}
