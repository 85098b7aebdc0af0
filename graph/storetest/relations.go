package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// RunRelations runs the conformance cases of the graph.Relations
// capability against the stores open returns (which must implement it).
//
// The fixture of every case, in a fresh tenant (a, b, c active, tenant-wide
// and unowned unless a case says otherwise; x mentions no entity a, b or c
// mentions):
//
//	a ──DEPENDS_ON──▶ b        c        x
//	(alpha)          (beta)  (gamma)  (omega)
func RunRelations(t *testing.T, open func(t *testing.T) graph.Store, cfg Config) {
	cases := []struct {
		name string
		fn   func(t *testing.T, x *relSuite)
	}{
		{"CreateGetDelete", testRelationLifecycle},
		{"Invalid", testRelationInvalid},
		{"Visibility", testRelationVisibility},
		{"ArchiveHidesEraseRemoves", testRelationForgetting},
		{"RelationsOfBound", testRelationsOfBound},
		{"Walk", testRelationWalk},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			r, ok := s.(graph.Relations)
			require.True(t, ok, "%T does not implement graph.Relations", s)
			x := &relSuite{suite: suite{s: s, cfg: cfg}, r: r, scope: newScope(t)}
			x.ids = map[string]string{}
			for _, m := range []struct{ name, ent string }{{"a", "Alpha"}, {"b", "Beta"}, {"c", "Gamma"}, {"x", "Omega"}} {
				x.ids[m.name] = x.create(t, memIn(x.scope, "rel "+m.name, "content of "+m.name, m.ent)).Memory.ID
			}
			c.fn(t, x)
		})
	}
}

type relSuite struct {
	suite
	r     graph.Relations
	scope graph.Scope
	ids   map[string]string
}

// relate creates a relation in the fixture's scope and fails on error.
func (x *relSuite) relate(t *testing.T, from, to string, typ graph.RelationType) (graph.Relation, bool) {
	t.Helper()
	r, created, err := x.r.CreateRelation(ctx(t), graph.Relation{Scope: x.scope, FromID: from, ToID: to, Type: typ,
		Reason: "because", CreatedBy: "tester"}, relAudit(x.scope, from, "relation.create"))
	require.NoError(t, err)
	return r, created
}

func relAudit(s graph.Scope, subject, action string) graph.AuditEvent {
	return graph.AuditEvent{ID: graph.NewID(), Scope: s, Action: action, SubjectKind: "Memory", SubjectID: subject,
		ActorID: "tester", Reason: "because", CreatedAt: base}
}

func relIDs(rs []graph.Relation) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	slices.Sort(out)
	return out
}

func testRelationLifecycle(t *testing.T, x *relSuite) {
	a, b, c := x.ids["a"], x.ids["b"], x.ids["c"]
	r, created := x.relate(t, a, b, graph.DependsOn)
	require.True(t, created)
	assert.NotEmpty(t, r.ID)
	assert.Equal(t, graph.Relation{ID: r.ID, Scope: x.scope, FromID: a, ToID: b, Type: graph.DependsOn,
		Reason: "because", CreatedBy: "tester", CreatedAt: r.CreatedAt}, r)

	got, err := x.r.GetRelation(ctx(t), in(x.scope), r.ID)
	require.NoError(t, err)
	assert.Equal(t, r.ID, got.ID)
	assert.Equal(t, a, got.FromID)
	assert.Equal(t, b, got.ToID)
	assert.Equal(t, graph.DependsOn, got.Type)
	x.sameTime(t, r.CreatedAt, got.CreatedAt, "created_at")

	// The same (from, to, type) again: the same relation, nothing written.
	again, created := x.relate(t, a, b, graph.DependsOn)
	assert.False(t, created, "a duplicate is not created")
	assert.Equal(t, r.ID, again.ID)
	evs, _, err := x.s.ListAudit(ctx(t), in(x.scope), graph.AuditQuery{SubjectID: a, Action: "relation.create"}, graph.Page{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, evs, 1, "the duplicate wrote no audit event")

	// Another type, or the other direction, is another relation.
	r2, created := x.relate(t, a, b, graph.RelatesTo)
	require.True(t, created)
	r3, created := x.relate(t, c, a, graph.DerivedFrom)
	require.True(t, created)

	rs, err := x.r.RelationsOf(ctx(t), in(x.scope), []string{a}, 10)
	require.NoError(t, err)
	want := []string{r.ID, r2.ID, r3.ID}
	slices.Sort(want)
	assert.Equal(t, want, relIDs(rs), "from and to a")
	rs, err = x.r.RelationsOf(ctx(t), in(x.scope), []string{b}, 10)
	require.NoError(t, err)
	want = []string{r.ID, r2.ID}
	slices.Sort(want)
	assert.Equal(t, want, relIDs(rs), "to b")

	del, err := x.r.DeleteRelation(ctx(t), x.scope, r.ID, relAudit(x.scope, a, "relation.delete"))
	require.NoError(t, err)
	assert.Equal(t, r.ID, del.ID)
	_, err = x.r.GetRelation(ctx(t), in(x.scope), r.ID)
	assert.ErrorIs(t, err, graph.ErrNotFound)
	_, err = x.r.DeleteRelation(ctx(t), x.scope, r.ID)
	assert.ErrorIs(t, err, graph.ErrNotFound, "deleted twice")
	rs, err = x.r.RelationsOf(ctx(t), in(x.scope), []string{b}, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{r2.ID}, relIDs(rs))
	evs, _, err = x.s.ListAudit(ctx(t), in(x.scope), graph.AuditQuery{SubjectID: a, Action: "relation.delete"}, graph.Page{Limit: 10})
	require.NoError(t, err)
	assert.Len(t, evs, 1, "the delete is audited in its transaction")
}

func testRelationInvalid(t *testing.T, x *relSuite) {
	a, b := x.ids["a"], x.ids["b"]
	other := newScope(t)
	foreign := x.create(t, memIn(other, "foreign", "content", "Alpha")).Memory.ID
	cases := []struct {
		name string
		r    graph.Relation
		want error
	}{
		{"self", graph.Relation{Scope: x.scope, FromID: a, ToID: a, Type: graph.RelatesTo, CreatedBy: "t"}, graph.ErrInvalid},
		{"unknown type", graph.Relation{Scope: x.scope, FromID: a, ToID: b, Type: "LIKES", CreatedBy: "t"}, graph.ErrInvalid},
		{"lower-case type", graph.Relation{Scope: x.scope, FromID: a, ToID: b, Type: "depends_on", CreatedBy: "t"}, graph.ErrInvalid},
		{"no creator", graph.Relation{Scope: x.scope, FromID: a, ToID: b, Type: graph.RelatesTo}, graph.ErrInvalid},
		{"missing end", graph.Relation{Scope: x.scope, FromID: a, ToID: "nope", Type: graph.RelatesTo, CreatedBy: "t"}, graph.ErrNotFound},
		{"other tenant's end", graph.Relation{Scope: x.scope, FromID: a, ToID: foreign, Type: graph.RelatesTo, CreatedBy: "t"}, graph.ErrNotFound},
		{"other tenant's writer", graph.Relation{Scope: other, FromID: a, ToID: foreign, Type: graph.RelatesTo, CreatedBy: "t"}, graph.ErrNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := x.r.CreateRelation(ctx(t), c.r)
			assert.ErrorIs(t, err, c.want)
		})
	}
	rs, err := x.r.RelationsOf(ctx(t), in(x.scope), []string{a, b}, 10)
	require.NoError(t, err)
	assert.Empty(t, rs, "nothing was written")
	big := make([]string, graph.MaxRelationSeeds+1)
	for i := range big {
		big[i] = graph.NewID()
	}
	_, err = x.r.RelationsOf(ctx(t), in(x.scope), big, 1)
	assert.ErrorIs(t, err, graph.ErrInvalid)
}

func testRelationVisibility(t *testing.T, x *relSuite) {
	a := x.ids["a"]
	priv := memIn(x.scope, "private", "u1's note", "Beta")
	priv.Memory.UserID, priv.Memory.Visibility = "u1", graph.VisibilityUser
	p := x.create(t, priv).Memory.ID
	r, _ := x.relate(t, a, p, graph.RelatesTo)
	// A relation made in repo r1 between two tenant-wide memories.
	r1 := graph.Scope{TenantID: x.scope.TenantID, OrgID: "o", RepoID: "r1"}
	inRepo, created, err := x.r.CreateRelation(ctx(t), graph.Relation{Scope: r1, FromID: a, ToID: x.ids["c"],
		Type: graph.Contradicts, CreatedBy: "t"})
	require.NoError(t, err)
	require.True(t, created)

	reader := func(s graph.Scope, user string) graph.Filter {
		return graph.Filter{Scope: s, Reader: graph.Reader{UserID: user}}
	}
	r2 := graph.Scope{TenantID: x.scope.TenantID, OrgID: "o", RepoID: "r2"}
	cases := []struct {
		name string
		f    graph.Filter
		want []string
	}{
		{"owner", reader(x.scope, "u1"), []string{r.ID}},
		{"another user", reader(x.scope, "u2"), nil},
		{"all users", in(x.scope), []string{r.ID}},
		{"the relation's repo", reader(r1, "u1"), []string{r.ID, inRepo.ID}},
		{"another repo", reader(r2, "u1"), []string{r.ID}},
		{"another tenant", reader(newScope(t), "u1"), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs, err := x.r.RelationsOf(ctx(t), c.f, []string{a}, 10)
			require.NoError(t, err)
			want := slices.Clone(c.want)
			slices.Sort(want)
			if want == nil {
				want = []string{}
			}
			assert.Equal(t, want, relIDs(rs))
			for _, id := range []string{r.ID, inRepo.ID} {
				_, err := x.r.GetRelation(ctx(t), c.f, id)
				if slices.Contains(c.want, id) {
					assert.NoError(t, err, id)
				} else {
					assert.ErrorIs(t, err, graph.ErrNotFound, id)
				}
			}
		})
	}
	// A writer in r2 cannot delete r1's relation; one in r1 can.
	_, err = x.r.DeleteRelation(ctx(t), r2, inRepo.ID)
	assert.ErrorIs(t, err, graph.ErrNotFound)
	_, err = x.r.DeleteRelation(ctx(t), r1, inRepo.ID)
	assert.NoError(t, err)
}

func testRelationForgetting(t *testing.T, x *relSuite) {
	a, b, c := x.ids["a"], x.ids["b"], x.ids["c"]
	r, _ := x.relate(t, a, b, graph.DependsOn)
	kept, _ := x.relate(t, a, c, graph.RelatesTo)
	require.NoError(t, x.s.Archive(ctx(t), x.scope, b))
	rs, err := x.r.RelationsOf(ctx(t), in(x.scope), []string{a}, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{kept.ID}, relIDs(rs), "an archived end hides the relation")
	_, err = x.r.GetRelation(ctx(t), in(x.scope), r.ID)
	assert.NoError(t, err, "a direct fetch reads an archived end")
	require.NoError(t, x.s.Restore(ctx(t), x.scope, b))
	rs, err = x.r.RelationsOf(ctx(t), in(x.scope), []string{a}, 10)
	require.NoError(t, err)
	assert.Len(t, rs, 2, "restored")

	_, err = x.s.Erase(ctx(t), x.scope, graph.EraseInput{IDs: []string{b}})
	require.NoError(t, err)
	all := in(x.scope)
	all.Statuses = []graph.Status{graph.StatusActive, graph.StatusArchived, graph.StatusErased}
	rs, err = x.r.RelationsOf(ctx(t), all, []string{a, b}, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{kept.ID}, relIDs(rs), "erase removes the relation")
	_, err = x.r.GetRelation(ctx(t), all, r.ID)
	assert.ErrorIs(t, err, graph.ErrNotFound)
	_, _, err = x.r.CreateRelation(ctx(t), graph.Relation{Scope: x.scope, FromID: a, ToID: b, Type: graph.DependsOn, CreatedBy: "t"})
	assert.ErrorIs(t, err, graph.ErrNotFound, "an erased memory takes no new relation")
}

func testRelationsOfBound(t *testing.T, x *relSuite) {
	a := x.ids["a"]
	var want []string
	for i := range 4 {
		m := x.create(t, memIn(x.scope, "extra", "extra content", "Extra")).Memory.ID
		r, _, err := x.r.CreateRelation(ctx(t), graph.Relation{Scope: x.scope, FromID: a, ToID: m, Type: graph.RelatesTo,
			CreatedBy: "t", CreatedAt: base.Add(time.Duration(i) * time.Minute)})
		require.NoError(t, err)
		if i >= 2 {
			want = append(want, r.ID)
		}
	}
	rs, err := x.r.RelationsOf(ctx(t), in(x.scope), []string{a}, 2)
	require.NoError(t, err)
	slices.Sort(want)
	assert.Equal(t, want, relIDs(rs), "the 2 newest")
}

// testRelationWalk: a relation carries the walk to a memory no entity
// reaches (x mentions only omega), and only while x is readable.
func testRelationWalk(t *testing.T, x *relSuite) {
	a, xid := x.ids["a"], x.ids["x"]
	walkIDs := func(f graph.Filter) []string {
		t.Helper()
		ws, err := x.s.Walk(ctx(t), f, graph.WalkRequest{Entities: map[string]float64{"alpha": 1}, Limit: 10})
		require.NoError(t, err)
		var out []string
		for _, w := range ws {
			out = append(out, w.Memory.ID)
		}
		return out
	}
	assert.NotContains(t, walkIDs(in(x.scope)), xid, "no relation yet: nothing reaches x")
	r, _ := x.relate(t, xid, a, graph.DerivedFrom)
	got := walkIDs(in(x.scope))
	require.Contains(t, got, xid, "the relation carries the walk to x")
	assert.Equal(t, a, got[0], "the seed's memory first")
	require.NoError(t, x.s.Archive(ctx(t), x.scope, xid))
	assert.NotContains(t, walkIDs(in(x.scope)), xid, "an archived memory is not walked to")
	require.NoError(t, x.s.Restore(ctx(t), x.scope, xid))
	other := graph.Scope{TenantID: x.scope.TenantID, OrgID: "o", RepoID: "r2"}
	_, err := x.r.DeleteRelation(ctx(t), x.scope, r.ID)
	require.NoError(t, err)
	// Made in repo r1, the relation carries r1's readers only.
	_, _, err = x.r.CreateRelation(ctx(t), graph.Relation{Scope: graph.Scope{TenantID: x.scope.TenantID, OrgID: "o", RepoID: "r1"},
		FromID: a, ToID: xid, Type: graph.RelatesTo, CreatedBy: "t"})
	require.NoError(t, err)
	assert.NotContains(t, walkIDs(graph.Filter{Scope: other, Reader: graph.Reader{AllUsers: true}}), xid, "another repo's relation")
	assert.Contains(t, walkIDs(graph.Filter{Scope: graph.Scope{TenantID: x.scope.TenantID, OrgID: "o", RepoID: "r1"},
		Reader: graph.Reader{AllUsers: true}}), xid, "its own repo's")
}
