package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// reads collects what every read-list method returns for the fixture, as
// fixture names.
type reads struct {
	list, candidates, neighbours, keyword []string
}

func (x *suite) readAll(t *testing.T, fx fixture, f graph.Filter) reads {
	t.Helper()
	var r reads
	r.list = fx.names(x.listAll(t, f, 50))
	cs, err := x.s.Candidates(ctx(t), f, []string{"go", "postgres", "redis", "kubernetes", "alice"}, 50)
	require.NoError(t, err)
	r.candidates = fx.names(candIDs(cs))
	// m6 mentions nothing; as a seed it finds nothing, so seed with m1 and m5.
	ns, err := x.s.Neighbours(ctx(t), f, fx.id("m1", "m5"), 50)
	require.NoError(t, err)
	for _, n := range ns {
		r.neighbours = append(r.neighbours, fx.names([]string{n.Memory.ID})[0])
	}
	ks, err := x.s.KeywordSearch(ctx(t), f, "postgres kubernetes go redis lunch alice", 50)
	require.NoError(t, err)
	r.keyword = fx.names(scoredIDs(ks))
	return r
}

// assertHidden checks that name is absent from (hidden) or present in every
// read-list method.
func assertHidden(t *testing.T, r reads, name string, hidden bool) {
	t.Helper()
	for method, got := range map[string][]string{"ListMemories": r.list, "Candidates": r.candidates,
		"Neighbours": r.neighbours, "KeywordSearch": r.keyword} {
		if hidden {
			assert.NotContains(t, got, name, method)
		} else {
			assert.Contains(t, got, name, method)
		}
	}
}

// testEditAudit: the audit events given to CreateEdit and DecideEdit are
// written with the edit, and not at all when the write fails.
func testEditAudit(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	c, err := x.s.CreateMemory(ctx(t), memIn(s, "edited", "a memory to edit"))
	require.NoError(t, err)
	mem := c.Memory.ID
	ev := func(action string) graph.AuditEvent {
		return graph.AuditEvent{ID: "a-" + graph.NewID(), Scope: s, Action: action, SubjectKind: "Memory", SubjectID: mem,
			ActorID: "lib", CreatedAt: base}
	}
	actions := func() []string {
		t.Helper()
		evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{SubjectID: mem}, graph.Page{})
		require.NoError(t, err)
		var out []string
		for _, e := range evs {
			out = append(out, e.Action)
		}
		return out
	}
	e, err := x.ed.CreateEdit(ctx(t), graph.Edit{Scope: s, Kind: graph.EditRetract, TargetMemoryID: mem, CreatedBy: "lib"}, ev("edit.propose"))
	require.NoError(t, err)
	_, err = x.ed.DecideEdit(ctx(t), s, e.ID, graph.EditRejected, "lib", base, ev("edit.reject"))
	require.NoError(t, err)
	assert.Equal(t, []string{"edit.propose", "edit.reject"}, actions())

	_, err = x.ed.DecideEdit(ctx(t), s, e.ID, graph.EditApproved, "lib", base, ev("edit.approve"))
	assert.ErrorIs(t, err, graph.ErrConflict)
	_, err = x.ed.CreateEdit(ctx(t), graph.Edit{Scope: newScope(t), Kind: graph.EditRetract, TargetMemoryID: mem, CreatedBy: "x"}, ev("edit.propose"))
	assert.ErrorIs(t, err, graph.ErrNotFound)
	assert.Equal(t, []string{"edit.propose", "edit.reject"}, actions(), "a failed edit write leaves no event")
}

func testEdits(t *testing.T, x *suite) {
	fx := x.buildFixture(t, newScope(t))
	s := fx.scope
	f := in(s)
	edit := func(kind graph.EditKind, target, channel string, decide graph.EditStatus) graph.Edit {
		t.Helper()
		low := 0.1
		e, err := x.ed.CreateEdit(ctx(t), graph.Edit{Scope: s, Kind: kind, TargetMemoryID: fx.ids[target],
			Channel: channel, Importance: &low, Reason: "test", CreatedBy: "lib-1"})
		require.NoError(t, err)
		if decide == graph.EditApproved || decide == graph.EditRejected {
			e, err = x.ed.DecideEdit(ctx(t), s, e.ID, decide, "lib-2", base)
			require.NoError(t, err)
		}
		return e
	}
	// Every fixture memory except m6 (no entities) shows up in every method
	// before any edit; m3 and m2 are the neighbours of the seeds m1 and m5.
	before := x.readAll(t, fx, f)
	for _, n := range []string{"m2", "m3", "m4", "m7"} {
		assertHidden(t, before, n, false)
	}

	edit(graph.EditRetract, "m7", "", graph.EditPending)
	edit(graph.EditRetract, "m3", "", graph.EditRejected)
	edit(graph.EditQuarantine, "m2", "", graph.EditPending)
	t.Run("PendingAndRejectedChangeNothing", func(t *testing.T) {
		after := x.readAll(t, fx, f)
		assert.ElementsMatch(t, before.list, after.list, "ListMemories")
		assert.ElementsMatch(t, before.candidates, after.candidates, "Candidates")
		assert.ElementsMatch(t, before.neighbours, after.neighbours, "Neighbours")
		assert.ElementsMatch(t, before.keyword, after.keyword, "KeywordSearch")
	})

	edit(graph.EditRetract, "m4", "", graph.EditApproved)
	edit(graph.EditQuarantine, "m2", "", graph.EditApproved)
	edit(graph.EditBlock, "m3", "slack", graph.EditApproved)
	edit(graph.EditAttenuate, "m7", "", "") // pending, never decided
	t.Run("RetractHides", func(t *testing.T) {
		assertHidden(t, x.readAll(t, fx, f), "m4", true)
		g := f
		g.IncludeQuarantined, g.Channel = true, "email"
		assertHidden(t, x.readAll(t, fx, g), "m4", true)
	})
	t.Run("QuarantineHidesUnlessIncluded", func(t *testing.T) {
		assertHidden(t, x.readAll(t, fx, f), "m2", true)
		g := f
		g.IncludeQuarantined = true
		assertHidden(t, x.readAll(t, fx, g), "m2", false)
	})
	t.Run("BlockHidesOnItsChannelOnly", func(t *testing.T) {
		assertHidden(t, x.readAll(t, fx, f), "m3", false)
		g := f
		g.Channel = "slack"
		assertHidden(t, x.readAll(t, fx, g), "m3", true)
		g.Channel = "email"
		assertHidden(t, x.readAll(t, fx, g), "m3", false)
	})
	t.Run("RetractedShownWhenAdmitted", func(t *testing.T) {
		// A filter that admits retracted memories sees those a retract
		// edit hides, on every backend (graph.Store.GetMemory).
		g := f
		g.Statuses = []graph.Status{graph.StatusActive, graph.StatusRetracted}
		_, err := x.s.GetMemory(ctx(t), f, fx.ids["m4"])
		assert.ErrorIs(t, err, graph.ErrNotFound, "hidden from a plain fetch")
		m, err := x.s.GetMemory(ctx(t), g, fx.ids["m4"])
		require.NoError(t, err)
		assert.Equal(t, fx.ids["m4"], m.ID)
		assert.Contains(t, fx.names(x.listAll(t, g, 50)), "m4", "ListMemories")
	})
	t.Run("OthersUntouched", func(t *testing.T) {
		assertHidden(t, x.readAll(t, fx, f), "m7", false)
	})
	t.Run("EditOutsideScope", func(t *testing.T) {
		other := newScope(t)
		_, err := x.ed.CreateEdit(ctx(t), graph.Edit{Scope: other, Kind: graph.EditRetract,
			TargetMemoryID: fx.ids["m1"], CreatedBy: "intruder"})
		assert.ErrorIs(t, err, graph.ErrNotFound)
		e := edit(graph.EditRetract, "m7", "", "")
		_, err = x.ed.DecideEdit(ctx(t), other, e.ID, graph.EditApproved, "intruder", base)
		assert.ErrorIs(t, err, graph.ErrNotFound)
		assertHidden(t, x.readAll(t, fx, f), "m7", false)
	})
}
