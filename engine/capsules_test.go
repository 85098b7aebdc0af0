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

// capsuleFixture is a real store (SQLite, or Neo4j with MNEMO_TEST_STORE)
// and an engine with the default policy and a clock the test moves,
// holding, in tenant t1:
//
//	pool     u1's shared note (visibility project)
//	mine     u1's private note (visibility user)
//	theirs   u2's private note
//	extra    u1's shared note with two versions
//
// and the agents: lead (user u1, writer) hands capsules to bot (user u2,
// reader); stranger (user u3, reader) is in no audience.
type capsuleFixture struct {
	t                        *testing.T
	store                    graph.Store
	eng                      *engine.Engine
	scope                    graph.Scope
	clock                    time.Time
	pool, mine, theirs       string
	theirsV                  string
	extra, extraV1, extraV2  string
	lead, bot, stranger, adm graph.Principal
}

func newCapsuleFixture(t *testing.T) *capsuleFixture {
	t.Helper()
	st := graphtest.Open(t)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	fx := &capsuleFixture{t: t, store: st, scope: graph.Scope{TenantID: "t1"}, clock: now}
	fx.eng, err = engine.New(engine.Options{Store: st, Policy: holder, Now: func() time.Time { return fx.clock }})
	require.NoError(t, err)
	fx.pool = fx.add("u1", "note", graph.VisibilityProject, "", "postgres pool size is 10")
	fx.mine = fx.add("u1", "note", graph.VisibilityUser, "", "my private runbook step")
	fx.theirs = fx.add("u2", "note", graph.VisibilityUser, "", "u2 keeps this to itself")
	theirs, err := st.GetMemory(context.Background(), graph.Filter{Scope: fx.scope, Reader: graph.System}, fx.theirs)
	require.NoError(t, err)
	fx.theirsV = theirs.CurrentVersionID
	c, err := graphtest.CreateMemory(context.Background(), st, graph.MemoryInput{
		Memory:  graph.Memory{Scope: fx.scope, UserID: "u1", Type: "note", Title: "extra", Visibility: graph.VisibilityProject, CreatedAt: now.Add(-time.Hour)},
		Version: graph.VersionInput{Content: "extra first"}})
	require.NoError(t, err)
	fx.extra, fx.extraV1 = c.Memory.ID, c.Version.ID
	v2, err := st.AddVersion(context.Background(), fx.scope, fx.extra, graph.VersionInput{Content: "extra second"})
	require.NoError(t, err)
	fx.extraV2 = v2.ID
	fx.lead = graph.Principal{ID: "lead", UserID: "u1", Roles: []string{"writer"}, Scope: fx.scope}
	fx.bot = graph.Principal{ID: "bot", UserID: "u2", Roles: []string{"reader"}, Scope: fx.scope}
	fx.stranger = graph.Principal{ID: "stranger", UserID: "u3", Roles: []string{"reader"}, Scope: fx.scope}
	fx.adm = graph.Principal{ID: "adm", UserID: "u1", Roles: []string{"admin"}, Scope: fx.scope}
	return fx
}

// add writes an active memory and returns its id.
func (fx *capsuleFixture) add(user, typ string, vis graph.Visibility, session, content string) string {
	fx.t.Helper()
	fx.clock = fx.clock.Add(time.Millisecond) // distinct creation times: a stable newest-first order
	c, err := graphtest.CreateMemory(context.Background(), fx.store, graph.MemoryInput{
		Memory: graph.Memory{Scope: fx.scope, UserID: user, Type: typ, Title: content, Visibility: vis,
			SessionID: session, CreatedAt: fx.clock.Add(-time.Hour)},
		Version: graph.VersionInput{Content: content}})
	require.NoError(fx.t, err)
	return c.Memory.ID
}

// create makes a capsule from lead to bot and fails the test on error.
func (fx *capsuleFixture) create(r engine.CapsuleRequest) graph.Capsule {
	fx.t.Helper()
	if r.Subject == "" {
		r.Subject = "handover"
	}
	if r.Audience == nil {
		r.Audience = []string{"bot"}
	}
	c, err := fx.eng.CreateCapsule(context.Background(), fx.lead, r)
	require.NoError(fx.t, err)
	return c
}

func itemIDs(items []engine.ItemView) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func TestCapsuleAudience(t *testing.T) {
	fx := newCapsuleFixture(t)
	ctx := context.Background()
	c := fx.create(engine.CapsuleRequest{MemoryIDs: []string{fx.mine, fx.pool}, VersionIDs: []string{fx.extraV1}})
	assert.Equal(t, fx.clock.Add(engine.DefaultCapsuleTTL), c.ExpiresAt, "7 days by default")

	v, err := fx.eng.GetCapsule(ctx, fx.bot, c.ID)
	require.NoError(t, err, "the audience reads it")
	assert.Equal(t, []string{fx.mine, fx.pool, fx.extraV1}, itemIDs(v.Items))
	assert.Equal(t, "my private runbook step", v.Items[0].Content,
		"a capsule hands on what its creator could read, u1's private note included")
	assert.Equal(t, "extra first", v.Items[2].Content, "a version item shows that version")
	assert.Equal(t, fx.extraV1, v.Items[2].Citation.VersionID)

	_, err = fx.eng.GetCapsule(ctx, fx.lead, c.ID)
	require.NoError(t, err, "its creator reads it")
	_, err = fx.eng.GetCapsule(ctx, fx.stranger, c.ID)
	assert.ErrorIs(t, err, graph.ErrNotFound, "anyone else: 404, as if it did not exist")
	_, err = fx.eng.GetCapsule(ctx, graph.Principal{ID: "bot", UserID: "u2", Roles: []string{"reader"}, Scope: graph.Scope{TenantID: "t2"}}, c.ID)
	assert.ErrorIs(t, err, graph.ErrNotFound, "the same agent id in another tenant")

	got, next, err := fx.eng.ListCapsules(ctx, fx.bot, engine.CapsuleListRequest{})
	require.NoError(t, err)
	assert.Empty(t, next)
	require.Len(t, got, 1)
	assert.Equal(t, c.ID, got[0].ID)
	got, _, err = fx.eng.ListCapsules(ctx, fx.stranger, engine.CapsuleListRequest{})
	require.NoError(t, err)
	assert.Empty(t, got)
	got, _, err = fx.eng.ListCapsules(ctx, fx.lead, engine.CapsuleListRequest{Sent: true})
	require.NoError(t, err)
	assert.Len(t, got, 1, "the capsules lead sent")

	evs, _, err := fx.store.ListAudit(ctx, graph.Filter{Scope: fx.scope, Reader: graph.System}, graph.AuditQuery{SubjectID: c.ID}, graph.Page{})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, engine.AuditCapsuleCreate, evs[0].Action)
	assert.NotContains(t, evs[0].Outcome+evs[0].Reason, "handover", "the audit carries no text")
}

func TestCapsuleCreateRefuses(t *testing.T) {
	fx := newCapsuleFixture(t)
	ctx := context.Background()
	require.NoError(t, fx.store.Archive(ctx, fx.scope, fx.extra))
	for _, tt := range []struct {
		name  string
		p     graph.Principal
		r     engine.CapsuleRequest
		want  error
		field string
	}{
		{"an item its creator cannot read", fx.lead, engine.CapsuleRequest{MemoryIDs: []string{fx.pool, fx.theirs}}, graph.ErrNotFound, ""},
		{"a missing version", fx.lead, engine.CapsuleRequest{VersionIDs: []string{"nope"}}, graph.ErrNotFound, ""},
		{"an archived memory", fx.lead, engine.CapsuleRequest{MemoryIDs: []string{fx.extra}}, graph.ErrNotFound, ""},
		{"a version of an archived memory", fx.lead, engine.CapsuleRequest{VersionIDs: []string{fx.extraV2}}, graph.ErrNotFound, ""},
		{"a version of a memory its creator cannot read", fx.lead, engine.CapsuleRequest{VersionIDs: []string{fx.theirsV}}, graph.ErrNotFound, ""},
		{"a missing decision", fx.lead, engine.CapsuleRequest{DecisionIDs: []string{"nope"}}, graph.ErrNotFound, ""},
		{"a reader", fx.bot, engine.CapsuleRequest{MemoryIDs: []string{fx.theirs}}, graph.ErrForbidden, ""},
		{"a TTL past the maximum", fx.lead, engine.CapsuleRequest{MemoryIDs: []string{fx.pool},
			TTLSeconds: int64(engine.MaxCapsuleTTL/time.Second) + 1}, graph.ErrInvalid, "ttl_seconds"},
		{"a negative TTL", fx.lead, engine.CapsuleRequest{MemoryIDs: []string{fx.pool}, TTLSeconds: -1}, graph.ErrInvalid, "ttl_seconds"},
		{"no audience", fx.lead, engine.CapsuleRequest{MemoryIDs: []string{fx.pool}, Audience: []string{}}, graph.ErrInvalid, "audience"},
		{"no items", fx.lead, engine.CapsuleRequest{}, graph.ErrInvalid, "items"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.Subject = "s"
			if r.Audience == nil {
				r.Audience = []string{"bot"}
			}
			_, err := fx.eng.CreateCapsule(ctx, tt.p, r)
			require.ErrorIs(t, err, tt.want)
			if tt.field != "" {
				var fe *graph.FieldError
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tt.field, fe.Field)
			}
		})
	}
	got, _, err := fx.eng.ListCapsules(ctx, fx.bot, engine.CapsuleListRequest{})
	require.NoError(t, err)
	assert.Empty(t, got, "nothing was written")
}

func TestCapsuleExpiryAndRevoke(t *testing.T) {
	fx := newCapsuleFixture(t)
	ctx := context.Background()
	short := fx.create(engine.CapsuleRequest{MemoryIDs: []string{fx.pool}, TTLSeconds: 3600})
	long := fx.create(engine.CapsuleRequest{MemoryIDs: []string{fx.pool}})

	_, err := fx.eng.RevokeCapsule(ctx, fx.bot, long.ID, "")
	assert.ErrorIs(t, err, graph.ErrForbidden, "the audience may not revoke")
	_, err = fx.eng.RevokeCapsule(ctx, fx.stranger, long.ID, "")
	assert.ErrorIs(t, err, graph.ErrNotFound, "nor may anyone else, who does not see it")
	r, err := fx.eng.RevokeCapsule(ctx, fx.lead, long.ID, "plans changed")
	require.NoError(t, err)
	assert.Equal(t, "lead", r.RevokedBy)
	_, err = fx.eng.GetCapsule(ctx, fx.bot, long.ID)
	assert.ErrorIs(t, err, graph.ErrNotFound, "revoked: gone for its audience")
	_, err = fx.eng.RevokeCapsule(ctx, fx.lead, long.ID, "")
	assert.ErrorIs(t, err, graph.ErrNotFound, "and for its creator")

	fx.clock = fx.clock.Add(time.Hour - time.Nanosecond)
	_, err = fx.eng.GetCapsule(ctx, fx.bot, short.ID)
	require.NoError(t, err, "live until its expiry")
	fx.clock = fx.clock.Add(time.Nanosecond)
	_, err = fx.eng.GetCapsule(ctx, fx.bot, short.ID)
	assert.ErrorIs(t, err, graph.ErrNotFound, "expired at expires_at")
	got, _, err := fx.eng.ListCapsules(ctx, fx.bot, engine.CapsuleListRequest{})
	require.NoError(t, err)
	assert.Empty(t, got, "neither expired nor revoked capsules are listed")
	b, err := fx.eng.ContextBundle(ctx, fx.bot, engine.BundleRequest{})
	require.NoError(t, err)
	assert.Empty(t, b.Capsules, "nor bundled")
}

func TestCapsuleItemsFollowTheGraph(t *testing.T) {
	fx := newCapsuleFixture(t)
	ctx := context.Background()
	c := fx.create(engine.CapsuleRequest{MemoryIDs: []string{fx.pool, fx.mine, fx.extra}, VersionIDs: []string{fx.extraV1, fx.extraV2}})

	_, err := fx.eng.ProposeEdit(ctx, fx.adm, fx.extra, engine.EditRequest{Kind: graph.EditAmend, Content: "extra amended", Reason: "fix"})
	require.NoError(t, err)
	v, err := fx.eng.GetCapsule(ctx, fx.bot, c.ID)
	require.NoError(t, err)
	byID := map[string]engine.ItemView{}
	for _, it := range v.Items {
		byID[it.ID] = it
	}
	assert.Equal(t, "extra amended", byID[fx.extra].Content, "an approved amend applies")
	assert.Equal(t, []string{"amend"}, byID[fx.extra].Edits)
	assert.Equal(t, "extra amended", byID[fx.extraV2].Content, "to the current version")
	assert.Equal(t, "extra first", byID[fx.extraV1].Content, "not to an older one")

	_, err = fx.eng.Archive(ctx, fx.adm, fx.mine, "done")
	require.NoError(t, err)
	_, err = fx.eng.ProposeEdit(ctx, fx.adm, fx.pool, engine.EditRequest{Kind: graph.EditRetract, Reason: "wrong"})
	require.NoError(t, err)
	v, err = fx.eng.GetCapsule(ctx, fx.bot, c.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{fx.extra, fx.extraV1, fx.extraV2}, itemIDs(v.Items), "archived and retracted items vanish")
	assert.Equal(t, []string{fx.extra}, v.MemoryIDs, "and so do their ids")

	_, err = fx.eng.Restore(ctx, fx.adm, fx.mine, "back")
	require.NoError(t, err)
	_, err = fx.eng.Erase(ctx, fx.adm, fx.extra, "erasure request")
	require.NoError(t, err)
	v, err = fx.eng.GetCapsule(ctx, fx.bot, c.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{fx.mine}, itemIDs(v.Items), "a restored item is back; an erased one and its versions are gone")
	raw, err := fx.store.(graph.Capsules).GetCapsule(ctx, graph.Filter{Scope: fx.scope, Reader: graph.System},
		graph.CapsuleQuery{Agent: "bot", At: fx.clock}, c.ID)
	require.NoError(t, err)
	assert.Equal(t, []string{fx.pool, fx.mine}, raw.MemoryIDs, "erasure took the memory out of the stored capsule")
	assert.Empty(t, raw.VersionIDs, "with its versions")
}

func TestContextBundle(t *testing.T) {
	fx := newCapsuleFixture(t)
	ctx := context.Background()
	// Written oldest first; within a visibility the newest comes first.
	sessDec := fx.add("u2", engine.TypeDecision, graph.VisibilitySession, "s1", "session decision")
	otherSessDec := fx.add("u2", engine.TypeDecision, graph.VisibilitySession, "s2", "another session's decision")
	userDec := fx.add("u2", engine.TypeDecision, graph.VisibilityUser, "", "user decision")
	projDec := fx.add("u1", engine.TypeDecision, graph.VisibilityProject, "", "project decision")
	polOld := fx.add("u1", engine.TypeDecision, graph.VisibilityPolicy, "", "old policy decision")
	polNew := fx.add("u1", engine.TypeDecision, graph.VisibilityPolicy, "", "new policy decision")
	privDec := fx.add("u1", engine.TypeDecision, graph.VisibilityUser, "", "u1's own decision")
	task := fx.add("u2", engine.TypeTask, graph.VisibilityUser, "", "open task")
	doneTask := fx.add("u2", engine.TypeTask, graph.VisibilityUser, "", "archived task")
	turn1 := fx.add("u2", "note", graph.VisibilitySession, "s1", "first turn")
	turn2 := fx.add("u2", "note", graph.VisibilitySession, "s1", "second turn")
	otherTurn := fx.add("u2", "note", graph.VisibilitySession, "s2", "other session turn")
	_, err := fx.eng.Archive(ctx, fx.adm, doneTask, "done")
	require.NoError(t, err)
	_, err = fx.eng.ProposeEdit(ctx, fx.adm, task, engine.EditRequest{Kind: graph.EditAmend, Content: "open task, amended", Reason: "r"})
	require.NoError(t, err)
	_, err = fx.eng.ProposeEdit(ctx, fx.adm, projDec, engine.EditRequest{Kind: graph.EditBlock, Channel: "public", Reason: "r"})
	require.NoError(t, err)
	c := fx.create(engine.CapsuleRequest{MemoryIDs: []string{fx.mine}})
	fx.create(engine.CapsuleRequest{MemoryIDs: []string{fx.pool}, Audience: []string{"someone-else"}})

	b, err := fx.eng.ContextBundle(ctx, fx.bot, engine.BundleRequest{SessionID: "s1", TokenBudget: 10000})
	require.NoError(t, err)
	assert.Equal(t, []string{polNew, polOld, projDec, userDec, sessDec}, itemIDs(b.Decisions),
		"policy > project > user > session, newest first within each; never another user's private one, nor another session's")
	assert.NotContains(t, itemIDs(b.Decisions), otherSessDec)
	assert.NotContains(t, itemIDs(b.Decisions), privDec)
	assert.Equal(t, []string{task}, itemIDs(b.Tasks), "active tasks only")
	assert.Equal(t, "open task, amended", b.Tasks[0].Content, "edits applied")
	assert.Equal(t, []string{turn2, turn1}, itemIDs(b.Session),
		"the session's memories, newest first; its decision is shown once, among the decisions")
	assert.NotContains(t, itemIDs(b.Session), otherTurn)
	require.Len(t, b.Capsules, 1, "capsules addressed to bot only")
	assert.Equal(t, c.ID, b.Capsules[0].ID)
	assert.Equal(t, []string{fx.mine}, itemIDs(b.Capsules[0].Items))
	assert.Nil(t, b.Budget.Omitted)
	assert.Positive(t, b.Budget.Used)

	pub, err := fx.eng.ContextBundle(ctx, fx.bot, engine.BundleRequest{SessionID: "s1", Channel: "public", TokenBudget: 10000})
	require.NoError(t, err)
	assert.NotContains(t, itemIDs(pub.Decisions), projDec, "a block on the channel hides it")

	// A budget that holds the decisions and little else: the rest is counted.
	var decisionTokens int
	for _, it := range b.Decisions {
		decisionTokens += tokensOf(it)
	}
	small, err := fx.eng.ContextBundle(ctx, fx.bot, engine.BundleRequest{SessionID: "s1", TokenBudget: decisionTokens})
	require.NoError(t, err)
	assert.Equal(t, itemIDs(b.Decisions), itemIDs(small.Decisions), "decisions are spent on first")
	assert.Empty(t, small.Tasks)
	assert.Empty(t, small.Session)
	assert.Equal(t, map[string]int{engine.SectionCapsules: 1, engine.SectionTasks: 1, engine.SectionSession: 2}, small.Budget.Omitted)
	assert.Equal(t, decisionTokens, small.Budget.Used)

	_, err = fx.eng.ContextBundle(ctx, fx.bot, engine.BundleRequest{TokenBudget: -1})
	assert.ErrorIs(t, err, graph.ErrInvalid)
}

// tokensOf is what an item costs a bundle's budget (4 characters a token,
// rounded up, for the title and the content).
func tokensOf(it engine.ItemView) int {
	n := func(s string) int { return (len([]rune(s)) + 3) / 4 }
	return n(it.Title) + n(it.Content)
}
