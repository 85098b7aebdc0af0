package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// testLifecycleAudit: the audit events given to Archive and Restore are
// written with the change, and not at all when it is refused.
func testLifecycleAudit(t *testing.T, x *suite) {
	s := newScope(t)
	mem := x.create(t, memIn(s, "kept", "a memory to archive")).Memory.ID
	ev := func(action string) graph.AuditEvent {
		return graph.AuditEvent{ID: "a-" + graph.NewID(), Scope: s, Action: action, SubjectKind: "Memory", SubjectID: mem,
			ActorID: "lead", CreatedAt: base}
	}
	actions := func() []string {
		t.Helper()
		evs, _, err := x.s.ListAudit(ctx(t), in(s), graph.AuditQuery{SubjectID: mem}, graph.Page{})
		require.NoError(t, err)
		var out []string
		for _, e := range evs {
			out = append(out, e.Action)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		change func() error
		want   error    // nil: done
		after  []string // the events then
	}{
		{"RestoreActiveRefused", func() error { return x.s.Restore(ctx(t), s, mem, ev("memory.restore")) }, graph.ErrConflict, nil},
		{"Archive", func() error { return x.s.Archive(ctx(t), s, mem, ev("memory.archive")) }, nil, []string{"memory.archive"}},
		{"ArchiveAgainRefused", func() error { return x.s.Archive(ctx(t), s, mem, ev("memory.archive")) }, graph.ErrConflict, []string{"memory.archive"}},
		{"OtherScopeRefused", func() error { return x.s.Restore(ctx(t), newScope(t), mem, ev("memory.restore")) }, graph.ErrNotFound, []string{"memory.archive"}},
		{"Restore", func() error { return x.s.Restore(ctx(t), s, mem, ev("memory.restore")) }, nil, []string{"memory.archive", "memory.restore"}},
		{"InvalidEventRefused", func() error { return x.s.Archive(ctx(t), s, mem, graph.AuditEvent{Scope: s}) }, graph.ErrInvalid,
			[]string{"memory.archive", "memory.restore"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.change()
			if c.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, c.want)
			}
			assert.Equal(t, c.after, actions())
		})
	}
	m, err := x.s.GetMemory(ctx(t), in(s), mem)
	require.NoError(t, err)
	assert.Equal(t, graph.StatusActive, m.Status, "the refused archive changed nothing")
}
