package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// fullMemory is a memory input with every field set.
func fullMemory(s graph.Scope) graph.MemoryInput {
	content := "# Setup\nInstall Postgres.\n# Usage\nConnect with psql."
	return graph.MemoryInput{
		Memory: graph.Memory{
			ID: "m-" + graph.NewID(), Scope: s, UserID: "u1", Type: "note", Layer: "World", Sublayer: "Fact",
			Title: "Postgres setup", CanonicalKey: "Postgres-Setup-Local", Status: graph.StatusActive,
			SourceKind: graph.SourceIngestedEvidence, Importance: 0.75, AccessCount: 3,
			LastAccessed: base.Add(123456789), ValidFrom: base.Add(-time.Hour), ValidTo: base.Add(48 * time.Hour),
			Visibility: graph.VisibilityProject, SubjectType: "service", SubjectID: "svc-1", ProjectID: "p1",
			SessionID: "s1", Channel: "slack", Tags: []string{"db", "setup"}, CreatedAt: base.Add(987654321),
		},
		Version: graph.VersionInput{
			ID: "v-" + graph.NewID(), Content: content, Summary: "how to set up postgres",
			IndexText: "postgres setup psql",
			Provenance: graph.Provenance{ActorType: "agent", ActorID: "a1", ToolID: "ingest",
				SourceRepo: "github.com/x/y", CommitSHA: "abc123", Path: "docs/setup.md"},
			Entities: []graph.EntityRef{
				{Name: "PostgreSQL", NormName: "postgres", Type: "database", Aliases: []string{"PG", "psql"}},
				{Name: "Linux", Type: "os"},
			},
			Chunks: []graph.ChunkInput{
				{Key: "Setup", Start: 0, End: 26, Entities: []graph.EntityRef{{Name: "PostgreSQL", NormName: "postgres"}}},
				{Key: "Usage", Start: 26, End: len(content), Entities: []graph.EntityRef{{Name: "psql tool", Type: "tool"}}},
			},
			Index: true,
		},
	}
}

func testRoundTrip(t *testing.T, x *suite) {
	s := newScope(t)
	s.OrgID, s.RepoID = "o1", "r1"
	f := in(s)
	want := fullMemory(s)
	got := x.create(t, want)

	t.Run("Memory", func(t *testing.T) {
		for name, m := range map[string]graph.Memory{"Created": got.Memory, "GetMemory": x.getMemory(t, f, want.Memory.ID)} {
			t.Run(name, func(t *testing.T) { x.assertMemory(t, want.Memory, m) })
		}
		m := x.getMemory(t, f, want.Memory.ID)
		assert.Equal(t, want.Version.ID, m.CurrentVersionID)
		assert.Equal(t, 1, m.VersionCount)
		assert.Empty(t, m.SupersededBy)
	})

	t.Run("Version", func(t *testing.T) {
		v, err := x.s.GetVersion(ctx(t), f, want.Version.ID)
		require.NoError(t, err)
		assert.Equal(t, want.Version.ID, v.ID)
		assert.Equal(t, want.Memory.ID, v.MemoryID)
		assert.Equal(t, 1, v.Number)
		assert.Equal(t, want.Version.Content, v.Content)
		assert.Equal(t, want.Version.Summary, v.Summary)
		assert.Equal(t, want.Version.IndexText, v.IndexText)
		assert.Equal(t, graph.ContentHash(want.Version.Content), v.ContentHash)
		assert.Equal(t, want.Version.Provenance, v.Provenance)
		assert.False(t, v.CreatedAt.IsZero(), "version created_at set")
		assert.Equal(t, v.ID, got.Version.ID, "CreateMemory returns the stored version")
		assert.Equal(t, 1, got.Version.Number)
	})

	t.Run("Chunks", func(t *testing.T) {
		cs, err := x.s.GetChunks(ctx(t), f, want.Version.ID)
		require.NoError(t, err)
		require.Len(t, cs, 2)
		for i, wc := range want.Version.Chunks {
			assert.NotEmpty(t, cs[i].ID)
			assert.Equal(t, want.Version.ID, cs[i].VersionID)
			assert.Equal(t, wc.Key, cs[i].Key)
			assert.Equal(t, wc.Start, cs[i].Start)
			assert.Equal(t, wc.End, cs[i].End)
		}
		assert.Equal(t, []string{"postgres"}, cs[0].Entities, "chunk MENTIONS")
		assert.Equal(t, []string{"psql tool"}, cs[1].Entities, "chunk MENTIONS")
	})

	t.Run("Entities", func(t *testing.T) {
		es, err := x.s.EntitiesOf(ctx(t), f, []string{want.Memory.ID})
		require.NoError(t, err)
		byNorm := map[string]graph.Entity{}
		for _, e := range es[want.Memory.ID] {
			byNorm[e.NormName] = e
		}
		require.Len(t, byNorm, 2, "memory MENTIONS the version's entities: %v", es)
		pg := byNorm["postgres"]
		assert.NotEmpty(t, pg.ID)
		assert.Equal(t, s.TenantID, pg.TenantID)
		assert.Equal(t, "PostgreSQL", pg.Name)
		assert.Equal(t, "database", pg.Type)
		assert.ElementsMatch(t, []string{"PG", "psql"}, pg.Aliases)
		assert.Equal(t, "Linux", byNorm["linux"].Name)
		assert.Equal(t, "os", byNorm["linux"].Type)

		// A later mention with new aliases merges them into the same entity.
		in2 := memIn(s, "Postgres again", "more on postgres")
		in2.Version.Entities = []graph.EntityRef{{Name: "postgres", Aliases: []string{"Postgres DB"}}}
		c2 := x.create(t, in2)
		es, err = x.s.EntitiesOf(ctx(t), f, []string{c2.Memory.ID})
		require.NoError(t, err)
		require.Len(t, es[c2.Memory.ID], 1)
		assert.Equal(t, pg.ID, es[c2.Memory.ID][0].ID, "entities are unique by norm name in a tenant")
		assert.ElementsMatch(t, []string{"PG", "psql", "Postgres DB"}, es[c2.Memory.ID][0].Aliases)
	})

	t.Run("Supersedes", func(t *testing.T) {
		next := memIn(s, "Postgres setup v2", "install postgres 17", "postgres")
		next.Supersedes = want.Memory.ID
		c := x.create(t, next)
		old := x.getMemory(t, f, want.Memory.ID)
		assert.Equal(t, graph.StatusSuperseded, old.Status)
		assert.Equal(t, c.Memory.ID, old.SupersededBy)
		r, err := x.s.Resolve(ctx(t), f, want.Memory.ID)
		require.NoError(t, err)
		assert.Equal(t, c.Memory.ID, r.ID)
	})

	t.Run("AuditFromCreate", func(t *testing.T) {
		in3 := memIn(s, "audited", "audited content")
		in3.Audit = []graph.AuditEvent{{Scope: s, Action: "gate.approve", SubjectKind: "Memory", ActorID: "a1",
			Rule: "r1", Outcome: "approve", Reason: "ok"}}
		c := x.create(t, in3)
		evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{SubjectID: c.Memory.ID}, graph.Page{})
		require.NoError(t, err)
		require.Len(t, evs, 1, "audit event DECIDED the new memory")
		e := evs[0]
		assert.NotEmpty(t, e.ID)
		assert.Equal(t, s, e.Scope)
		assert.Equal(t, "gate.approve", e.Action)
		assert.Equal(t, "Memory", e.SubjectKind)
		assert.Equal(t, "a1", e.ActorID)
		assert.Equal(t, "r1", e.Rule)
		assert.Equal(t, "approve", e.Outcome)
		assert.Equal(t, "ok", e.Reason)
		assert.False(t, e.CreatedAt.IsZero())
	})

	t.Run("GateRequest", func(t *testing.T) {
		g := graph.GateRequest{ID: "g-" + graph.NewID(), Scope: s, Title: "queued", Rule: "needs-review",
			Reason: "new type", Payload: json.RawMessage(`{"title":"x"}`), RequestedBy: "agent-1", CreatedAt: base}
		_, err := x.s.CreateGateRequest(ctx(t), g, graph.AuditEvent{Scope: s, Action: "gate.queue",
			SubjectKind: "GateRequest", SubjectID: g.ID, ActorID: "gate"})
		require.NoError(t, err)
		gg, err := x.s.GetGateRequest(ctx(t), f, g.ID)
		require.NoError(t, err)
		assert.Equal(t, g.ID, gg.ID)
		assert.Equal(t, s, gg.Scope)
		assert.Equal(t, graph.GatePending, gg.Status)
		assert.Equal(t, g.Title, gg.Title)
		assert.Equal(t, g.Rule, gg.Rule)
		assert.Equal(t, g.Reason, gg.Reason)
		assert.JSONEq(t, string(g.Payload), string(gg.Payload))
		assert.Equal(t, g.RequestedBy, gg.RequestedBy)
		x.sameTime(t, base, gg.CreatedAt, "created_at")
		assert.True(t, gg.DecidedAt.IsZero())
	})

	t.Run("ContextReceipt", func(t *testing.T) {
		start, end := 0, 26
		r := graph.ContextReceipt{Scope: s, PrincipalID: "agent-1", Query: "how to set up postgres",
			Citations: []graph.Citation{
				{RepositoryID: "r1", ElementID: want.Memory.ID, VersionID: want.Version.ID, ChunkKey: "Setup", Start: &start, End: &end},
				{ElementID: want.Memory.ID, VersionID: want.Version.ID},
			}, CreatedAt: base}
		cr, err := x.s.CreateContextReceipt(ctx(t), r)
		require.NoError(t, err)
		require.NotEmpty(t, cr.ID, "receipt id assigned")
		got, err := x.s.GetContextReceipt(ctx(t), f, cr.ID)
		require.NoError(t, err)
		assert.Equal(t, r.PrincipalID, got.PrincipalID)
		assert.Equal(t, r.Query, got.Query)
		assert.Equal(t, s, got.Scope)
		assert.Equal(t, r.Citations, got.Citations)
		x.sameTime(t, base, got.CreatedAt, "created_at")
	})

	t.Run("Outbox", func(t *testing.T) {
		items := x.outboxFor(t, want.Memory.ID)
		require.Len(t, items, 1)
		assert.Equal(t, want.Version.ID, items[0].VersionID)
		assert.Equal(t, s, items[0].Scope)
		assert.Equal(t, "upsert", items[0].Op)
	})
}

func (x *suite) getMemory(t *testing.T, f graph.Filter, id string) graph.Memory {
	t.Helper()
	m, err := x.s.GetMemory(ctx(t), f, id)
	require.NoError(t, err, "get %s", id)
	return m
}

func (x *suite) assertMemory(t *testing.T, want, got graph.Memory) {
	t.Helper()
	assert.Equal(t, want.ID, got.ID)
	assert.Equal(t, want.Scope, got.Scope)
	for _, c := range []struct{ field, want, got string }{
		{"user_id", want.UserID, got.UserID}, {"type", want.Type, got.Type}, {"layer", want.Layer, got.Layer},
		{"sublayer", want.Sublayer, got.Sublayer}, {"title", want.Title, got.Title},
		{"canonical_key", want.CanonicalKey, got.CanonicalKey}, {"status", string(want.Status), string(got.Status)},
		{"source_kind", string(want.SourceKind), string(got.SourceKind)},
		{"visibility", string(want.Visibility), string(got.Visibility)}, {"subject_type", want.SubjectType, got.SubjectType},
		{"subject_id", want.SubjectID, got.SubjectID}, {"project_id", want.ProjectID, got.ProjectID},
		{"session_id", want.SessionID, got.SessionID}, {"channel", want.Channel, got.Channel},
	} {
		assert.Equal(t, c.want, c.got, c.field)
	}
	assert.InDelta(t, want.Importance, got.Importance, 1e-9, "importance")
	assert.Equal(t, want.AccessCount, got.AccessCount, "access_count")
	assert.Equal(t, want.Tags, got.Tags, "tags")
	x.sameTime(t, want.LastAccessed, got.LastAccessed, "last_accessed")
	x.sameTime(t, want.ValidFrom, got.ValidFrom, "valid_from")
	x.sameTime(t, want.ValidTo, got.ValidTo, "valid_to")
	x.sameTime(t, want.CreatedAt, got.CreatedAt, "created_at")
}

// activeCopy creates a fresh active memory in s and returns its id.
func (x *suite) activeCopy(t *testing.T, s graph.Scope) string {
	t.Helper()
	return x.create(t, memIn(s, "copy", "first")).Memory.ID
}
