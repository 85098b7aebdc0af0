package storetest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// testGateSettlement: a write that carries out a queued request
// (MemoryInput.Settles, VersionInput.Settles) settles it in its own
// transaction. When the request cannot be settled (already decided, out
// of scope) nothing at all is written: no memory, no version, no audit
// event, no outbox item, no decision.
func testGateSettlement(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	f.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}
	queue := func(t *testing.T, sc graph.Scope) string {
		t.Helper()
		g, err := x.s.CreateGateRequest(ctx(t), graph.GateRequest{Scope: sc, Title: "queued", Payload: json.RawMessage(`{}`),
			RequestedBy: "agent"}, graph.AuditEvent{Scope: sc, Action: "gate.queue", ActorID: "gate"})
		require.NoError(t, err)
		return g.ID
	}
	settles := func(id string) *graph.GateSettlement {
		return &graph.GateSettlement{RequestID: id, Scope: s,
			Decision: graph.GateDecision{Status: graph.GateApproved, DecidedBy: "lib", Reason: "ok"},
			Audit:    graph.AuditEvent{Scope: s, Action: "librarian.approve", ActorID: "lib"}}
	}
	status := func(t *testing.T, id string) graph.GateRequest {
		t.Helper()
		g, err := x.s.GetGateRequest(ctx(t), f, id)
		require.NoError(t, err)
		return g
	}
	audits := func(t *testing.T, subject string) []string {
		t.Helper()
		evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{SubjectID: subject}, graph.Page{})
		require.NoError(t, err)
		var out []string
		for _, e := range evs {
			out = append(out, e.Action)
		}
		return out
	}
	absent := func(t *testing.T, memoryID string) {
		t.Helper()
		_, err := x.s.GetMemory(ctx(t), f, memoryID)
		assert.ErrorIs(t, err, graph.ErrNotFound, "memory %s written", memoryID)
		assert.Empty(t, audits(t, memoryID), "its audit written")
		assert.Empty(t, x.outboxFor(t, memoryID), "its outbox item written")
	}
	newInput := func(title string, settle *graph.GateSettlement) graph.MemoryInput {
		in := memIn(s, title, "content of "+title)
		in.Memory.ID = graph.NewID()
		in.Version.Index = true
		in.Audit = []graph.AuditEvent{{Scope: s, Action: "gate.approve", ActorID: "lib"}}
		in.Settles = settle
		return in
	}

	t.Run("CreateSettles", func(t *testing.T) {
		req := queue(t, s)
		c := x.create(t, newInput("approved", settles(req)))
		g := status(t, req)
		assert.Equal(t, graph.GateApproved, g.Status)
		assert.Equal(t, c.Memory.ID, g.MemoryID, "the memory written, by default")
		assert.Equal(t, "lib", g.DecidedBy)
		assert.Equal(t, []string{"gate.queue", "librarian.approve"}, audits(t, req))
		assert.Equal(t, []string{"gate.approve"}, audits(t, c.Memory.ID))
	})
	t.Run("CreateConflictWritesNothing", func(t *testing.T) {
		req := queue(t, s)
		_, err := x.s.DecideGateRequest(ctx(t), s, req, graph.GateDecision{Status: graph.GateRejected, DecidedBy: "other"},
			graph.AuditEvent{Scope: s, Action: "librarian.reject", ActorID: "other"})
		require.NoError(t, err)
		ok, late := newInput("batch mate", nil), newInput("late approval", settles(req))
		_, err = x.s.CreateMemories(ctx(t), []graph.MemoryInput{ok, late})
		require.ErrorIs(t, err, graph.ErrConflict)
		absent(t, ok.Memory.ID)
		absent(t, late.Memory.ID)
		g := status(t, req)
		assert.Equal(t, graph.GateRejected, g.Status, "the other decision stands")
		assert.Empty(t, g.MemoryID)
		assert.Equal(t, []string{"gate.queue", "librarian.reject"}, audits(t, req))
	})
	t.Run("CreateOutOfScopeWritesNothing", func(t *testing.T) {
		other := newScope(t)
		req := queue(t, other)
		foreign := newInput("foreign approval", settles(req))
		_, err := createOne(ctx(t), x.s, foreign)
		require.ErrorIs(t, err, graph.ErrNotFound)
		absent(t, foreign.Memory.ID)
		g, err := x.s.GetGateRequest(ctx(t), in(other), req)
		require.NoError(t, err)
		assert.Equal(t, graph.GatePending, g.Status)
	})
	t.Run("VersionSettles", func(t *testing.T) {
		m := x.create(t, memIn(s, "document", "v1")).Memory
		req := queue(t, s)
		_, err := x.s.AddVersion(ctx(t), s, m.ID, graph.VersionInput{Content: "v2", Settles: settles(req)})
		require.NoError(t, err)
		g := status(t, req)
		assert.Equal(t, graph.GateApproved, g.Status)
		assert.Equal(t, m.ID, g.MemoryID)

		taken := queue(t, s)
		_, err = x.s.DecideGateRequest(ctx(t), s, taken, graph.GateDecision{Status: graph.GateRejected, DecidedBy: "other"},
			graph.AuditEvent{Scope: s, Action: "librarian.reject", ActorID: "other"})
		require.NoError(t, err)
		_, err = x.s.AddVersion(ctx(t), s, m.ID, graph.VersionInput{Content: "v3", Index: true, Settles: settles(taken),
			Audit: []graph.AuditEvent{{Scope: s, Action: "gate.approve_version", ActorID: "lib"}}})
		require.ErrorIs(t, err, graph.ErrConflict)
		got, err := x.s.GetMemory(ctx(t), f, m.ID)
		require.NoError(t, err)
		assert.Equal(t, 2, got.VersionCount, "no third version")
		assert.NotContains(t, audits(t, m.ID), "gate.approve_version")
		assert.Empty(t, x.outboxFor(t, m.ID))
	})
	t.Run("Invalid", func(t *testing.T) {
		req := queue(t, s)
		bad := settles(req)
		bad.Decision.Status = graph.GateRejected
		in := newInput("rejecting write", bad)
		_, err := createOne(ctx(t), x.s, in)
		require.ErrorIs(t, err, graph.ErrInvalid, "a write approves its request, never rejects it")
		absent(t, in.Memory.ID)
		in = newInput("settles in the version", nil)
		in.Version.Settles = settles(req)
		_, err = createOne(ctx(t), x.s, in)
		require.ErrorIs(t, err, graph.ErrInvalid)
		assert.Equal(t, graph.GatePending, status(t, req).Status)
	})
}
