package storetest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// testCounts checks graph.Counter, for a store that has it: totals across
// tenants move by what two tenants write (deltas, so data other cases
// left behind does not matter).
func testCounts(t *testing.T, x *suite) {
	c, ok := x.s.(graph.Counter)
	if !ok {
		t.Skip("the store does not implement graph.Counter")
	}
	before, err := c.Counts(ctx(t))
	require.NoError(t, err)
	s1, s2 := newScope(t), newScope(t)
	a := x.create(t, memIn(s1, "a", "alpha one")).Memory.ID
	bIn := memIn(s1, "b", "beta two")
	bIn.Supersedes = a
	x.create(t, bIn)
	x.create(t, memIn(s2, "c", "gamma three"))
	d := x.create(t, memIn(s2, "d", "delta four")).Memory.ID
	require.NoError(t, x.s.Archive(ctx(t), s2, d))
	var gates []string
	for _, s := range []graph.Scope{s1, s2, s2} {
		g, err := x.s.CreateGateRequest(ctx(t), graph.GateRequest{Scope: s, Title: "queued", Payload: json.RawMessage(`{}`),
			RequestedBy: "agent", CreatedAt: base}, graph.AuditEvent{Scope: s, Action: "gate.queue", SubjectKind: "GateRequest", ActorID: "gate"})
		require.NoError(t, err)
		gates = append(gates, g.ID)
	}
	_, err = x.s.DecideGateRequest(ctx(t), s2, gates[2], graph.GateDecision{Status: graph.GateRejected, DecidedBy: "lib", At: base},
		graph.AuditEvent{Scope: s2, Action: "gate.rejected", SubjectKind: "GateRequest", SubjectID: gates[2], ActorID: "lib"})
	require.NoError(t, err)

	after, err := c.Counts(ctx(t))
	require.NoError(t, err)
	for status, want := range map[graph.Status]int{
		graph.StatusActive: 2, graph.StatusSuperseded: 1, graph.StatusArchived: 1, graph.StatusRetracted: 0,
	} {
		assert.Equal(t, want, after.Memories[status]-before.Memories[status], string(status))
	}
	assert.Equal(t, 2, after.GatePending-before.GatePending, "pending gate requests in both tenants")
}
