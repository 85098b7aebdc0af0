package storetest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// testEditsListed: ListEdits by memory ids — what every search asks, and
// what a store may cache — answers each write at once, whether it came
// through this client or another one (another process, in effect), and
// never answers another scope's edits or another status.
func testEditsListed(t *testing.T, x *suite) {
	s := newScope(t)
	a := x.create(t, memIn(s, "a", "first memory", "go")).Memory.ID
	b := x.create(t, memIn(s, "b", "second memory", "go")).Memory.ID
	other := newScope(t)
	o := x.create(t, memIn(other, "o", "other tenant's memory", "go")).Memory.ID
	ids := []string{a, b, o}
	approved := graph.EditQuery{MemoryIDs: ids, Statuses: []graph.EditStatus{graph.EditApproved}}
	list := func(q graph.EditQuery) []string {
		t.Helper()
		var got []string
		for range 2 { // the second read may be served from a cache: the same answer
			es, err := x.ed.ListEdits(ctx(t), in(s), q)
			require.NoError(t, err)
			got = got[:0]
			for _, e := range es {
				got = append(got, string(e.Kind)+":"+e.TargetMemoryID)
			}
		}
		return got
	}
	assert.Empty(t, list(approved), "no edit yet")

	second, ok := x.otherClient(t).(graph.Edits)
	require.True(t, ok, "the second client has the capability")
	for _, c := range []struct {
		name   string
		writer graph.Edits
		kind   graph.EditKind
		target string
	}{
		{"ThisClient", x.ed, graph.EditQuarantine, a},
		{"SecondClient", second, graph.EditRetract, b},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := list(approved)
			e, err := c.writer.CreateEdit(ctx(t), graph.Edit{Scope: s, Kind: c.kind, TargetMemoryID: c.target, CreatedBy: "lib-1"})
			require.NoError(t, err)
			assert.Equal(t, before, list(approved), "a pending edit is not approved")
			_, err = c.writer.DecideEdit(ctx(t), s, e.ID, graph.EditApproved, "lib-2", base)
			require.NoError(t, err)
			assert.Equal(t, append(before, string(c.kind)+":"+c.target), list(approved), "approved, oldest first")
			assert.Contains(t, list(graph.EditQuery{MemoryIDs: ids}), string(c.kind)+":"+c.target, "any status")
		})
	}
	_, err := x.ed.CreateEdit(ctx(t), graph.Edit{Scope: other, Kind: graph.EditRetract, TargetMemoryID: o, CreatedBy: "lib-1"})
	require.NoError(t, err)
	assert.NotContains(t, list(graph.EditQuery{MemoryIDs: ids}), "retract:"+o, "another tenant's edit")
}
