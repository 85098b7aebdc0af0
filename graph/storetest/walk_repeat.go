package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// testWalkRepeated: walks repeated on an unchanged graph (which a store may
// answer from a cache) answer as a first walk would: at each ValidAt what
// is valid then, after a write what the write changed, and for each reader
// what that reader may read.
func testWalkRepeated(t *testing.T, x *suite) {
	s := newScope(t)
	end := base.Add(48 * time.Hour)
	expiring := memIn(s, "expiring", "valid until end", "Epoch")
	expiring.Memory.ValidTo = end
	lasting := memIn(s, "lasting", "always valid", "Epoch")
	private := memIn(s, "private", "u2's own", "Epoch")
	private.Memory.UserID, private.Memory.Visibility = "u2", graph.VisibilityUser
	fx := fixture{scope: s, ids: map[string]string{}}
	for name, in := range map[string]graph.MemoryInput{"expiring": expiring, "lasting": lasting, "private": private} {
		fx.ids[name] = x.create(t, in).Memory.ID
	}
	req := graph.WalkRequest{Entities: seedEntities("epoch"), Limit: 10}
	walk := func(reader string, at time.Time) []string {
		names, _ := x.walkNames(t, fx, graph.Filter{Scope: s, Reader: graph.Reader{UserID: reader}, ValidAt: at}, req)
		return names
	}
	before, after := end.Add(-time.Hour), end.Add(time.Hour)
	for range 2 {
		assert.ElementsMatch(t, []string{"expiring", "lasting"}, walk("u1", before), "valid before the end")
		assert.ElementsMatch(t, []string{"lasting"}, walk("u1", after), "expired after it")
		assert.ElementsMatch(t, []string{"expiring", "lasting", "private"}, walk("u2", before), "u2 reads its own")
		assert.ElementsMatch(t, []string{"expiring", "lasting"}, walk("u1", before), "u1 never reads u2's")
	}
	fx.ids["new"] = x.create(t, memIn(s, "new", "written after the walks", "Epoch")).Memory.ID
	assert.ElementsMatch(t, []string{"expiring", "lasting", "new"}, walk("u1", before), "a write is seen by the next walk")
	assert.ElementsMatch(t, []string{"lasting", "new"}, walk("u1", after))

	// A memory row read again after a write that changed it (a read
	// counted) is the new row, from Walk and from Neighbours alike.
	u1 := graph.Filter{Scope: s, Reader: graph.Reader{UserID: "u1"}, ValidAt: before}
	current := func() (walked, neighbour graph.Memory) {
		_, ws := x.walkNames(t, fx, u1, req)
		ns, err := x.s.Neighbours(ctx(t), u1, []string{fx.ids["new"]}, 10)
		require.NoError(t, err)
		for _, w := range ws {
			if w.Memory.ID == fx.ids["lasting"] {
				walked = w.Memory
			}
		}
		for _, n := range ns {
			if n.Memory.ID == fx.ids["lasting"] {
				neighbour = n.Memory
			}
		}
		return walked, neighbour
	}
	w0, n0 := current()
	require.Equal(t, fx.ids["lasting"], w0.ID)
	require.Equal(t, fx.ids["lasting"], n0.ID)
	require.NoError(t, x.s.Touch(ctx(t), s, []string{fx.ids["lasting"]}, base.Add(time.Hour)))
	w1, n1 := current()
	assert.Equal(t, w0.AccessCount+1, w1.AccessCount, "the walk's row after the write")
	assert.Equal(t, n0.AccessCount+1, n1.AccessCount, "the neighbour's row after the write")
}

// testWalkSecondClient: a write through another client of the same data
// (another process, in effect) is seen by this client's next walk, however
// the store caches walks.
func testWalkSecondClient(t *testing.T, x *suite) {
	if x.cfg.OpenSecond == nil {
		t.Skip("backend has no Config.OpenSecond")
	}
	second := x.cfg.OpenSecond(t, x.s)
	s := newScope(t)
	fx := fixture{scope: s, ids: map[string]string{}}
	fx.ids["first"] = x.create(t, memIn(s, "first", "written here", "Epoch")).Memory.ID
	req := graph.WalkRequest{Entities: seedEntities("epoch"), Limit: 10}
	walk := func() []string {
		names, _ := x.walkNames(t, fx, graph.Filter{Scope: s, Reader: graph.Reader{UserID: "u1"}}, req)
		return names
	}
	for range 2 {
		assert.ElementsMatch(t, []string{"first"}, walk())
	}
	c, err := createOne(ctx(t), second, memIn(s, "other", "written by the other client", "Epoch"))
	require.NoError(t, err)
	fx.ids["other"] = c.Memory.ID
	assert.ElementsMatch(t, []string{"first", "other"}, walk(), "the other client's write is seen by the next walk")
}

// testWalkWarm: on a store that warms walks (graph.WalkWarmer), a walk
// after a warm answers exactly as one without: whichever seeds warmed it
// (some of the walk's, others, none of the walk's) and whichever reader
// did. A store without the capability says so and skips.
func testWalkWarm(t *testing.T, x *suite) {
	ww, ok := x.s.(graph.WalkWarmer)
	if !ok {
		t.Skipf("%T does not warm walks (graph.WalkWarmer is optional)", x.s)
	}
	fx := x.buildWalkFixture(t, newScope(t))
	// bump writes in the tenant, in an org beneath its scope that no
	// reader here sees: the next walk starts from an empty cache (a write
	// in another tenant would leave it warm) and answers as before.
	bump := func() {
		x.create(t, memIn(graph.Scope{TenantID: fx.scope.TenantID, OrgID: "elsewhere"}, "bump", "a write beneath the scope", "Elsewhere"))
	}
	full := graph.WalkRequest{Entities: seedEntities("alpha"), Memories: map[string]float64{fx.ids["w4"]: 1}, Limit: 20}
	for _, c := range []struct {
		name         string
		reader, warm graph.Filter
		r            graph.WalkRequest
	}{
		{"SomeSeeds", graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u1"}},
			graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u1"}}, graph.WalkRequest{Entities: seedEntities("alpha"), Limit: 20}},
		{"AllSeeds", graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u1"}},
			graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u1"}}, full},
		{"OtherSeeds", graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u1"}},
			graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u1"}}, graph.WalkRequest{Entities: seedEntities("gamma"), Limit: 20}},
		{"OtherReader", graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u2"}},
			graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u1"}}, full},
		{"ByOtherReader", graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u1"}},
			graph.Filter{Scope: fx.scope, Reader: graph.Reader{UserID: "u2"}}, full},
	} {
		t.Run(c.name, func(t *testing.T) {
			bump()
			want, err := x.s.Walk(ctx(t), c.reader, full)
			require.NoError(t, err)
			bump()
			require.NoError(t, ww.WarmWalk(ctx(t), c.warm, c.r))
			got, err := x.s.Walk(ctx(t), c.reader, full)
			require.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	t.Run("Invalid", func(t *testing.T) {
		err := ww.WarmWalk(ctx(t), graph.Filter{Scope: fx.scope}, full)
		assert.ErrorIs(t, err, graph.ErrInvalid, "a read names its reader")
	})
}
