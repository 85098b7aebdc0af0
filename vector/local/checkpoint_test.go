package local_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// TestCheckpointDue checks the rule itself: a snapshot is due once the
// graph nodes it lacks reach the floor and 1/ratio of the graph, so a
// small index is not rewritten for a short replay and a large one not for
// every few thousand points.
func TestCheckpointDue(t *testing.T) {
	floor, ratio := local.CheckpointFloor, local.CheckpointRatio
	tests := []struct {
		name           string
		backlog, nodes int
		want           bool
	}{
		{"no graph", 0, 0, false},
		{"below the floor", floor - 1, floor - 1, false},
		{"a graph just built past the floor", floor, floor, true},
		{"at the floor, at the ratio", floor, floor * ratio, true},
		{"at the floor, past the ratio", floor, floor*ratio + 1, false},
		{"1M nodes, 50k behind", 50_000, 1_000_000, false},
		{"1M nodes, 1/ratio behind", 1_000_000 / ratio, 1_000_000, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, local.CheckpointDue(tc.backlog, tc.nodes))
		})
	}
}

// TestCheckpointBoundsReplay checks that an open replays a bounded log:
// writes below Options.CompactBytes snapshot the graph as it grows, and an
// open that had to link many nodes (here: a log written with the graph
// off, as an index below the threshold or an older mnemo leaves it)
// snapshots right after, so the next open links none.
func TestCheckpointBoundsReplay(t *testing.T) {
	const dim, n = 16, 3000
	ctx := context.Background()
	floor := local.CheckpointFloor
	require.Greater(t, n, floor+floor/2, "the test needs a log past the floor")
	graph := local.Options{Dimensions: dim, ExactThreshold: 100}
	noGraph := local.Options{Dimensions: dim, ExactThreshold: n + 1}
	all := vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true}
	tests := []struct {
		name        string
		write, open local.Options // options of the writes, and of the reopens
		points      int
		// What the first reopen finds and does: whether a snapshot exists
		// before it, the most points it replays, and the graph backlog
		// once its recovery checkpoint (if any) is done.
		snapshot    bool
		maxReplayed int
		backlog     int
	}{
		{"below the graph threshold: the log alone", noGraph, noGraph, n, false, n, 0},
		{"graph below the floor: the log alone", graph, graph, floor - 100, false, floor - 100, floor - 100},
		{"graph past the floor: snapshots as it grows", graph, graph, n, true, floor - 1, -1},
		{"log written without the graph: recovery checkpoint", noGraph, graph, n, false, n, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			idx, err := local.Open(dir, tc.write)
			require.NoError(t, err)
			pts := randPoints(rand.New(rand.NewPCG(9, 10)), tc.points, dim, "t")
			for start := 0; start < len(pts); start += 100 {
				require.NoError(t, idx.Upsert(ctx, pts[start:min(start+100, len(pts))]))
			}
			require.NoError(t, idx.Close())
			_, err = os.Stat(filepath.Join(dir, "snapshot"))
			assert.Equal(t, tc.snapshot, err == nil, "snapshot before the reopen: %v", err)

			idx, err = local.Open(dir, tc.open)
			require.NoError(t, err)
			st := idx.Stats() // waits for a recovery checkpoint
			assert.LessOrEqual(t, st.Replayed, tc.maxReplayed)
			assert.Equal(t, tc.points, st.Points)
			if tc.backlog >= 0 {
				assert.Equal(t, tc.backlog, st.GraphBacklog)
			}
			assert.Less(t, st.GraphBacklog, floor, "what the next open links again stays below the floor")
			require.NoError(t, idx.Close())

			// The next open replays only what the checkpoint left, and
			// every point is still there.
			idx, err = local.Open(dir, tc.open)
			require.NoError(t, err)
			defer idx.Close()
			st2 := idx.Stats()
			assert.Equal(t, st.GraphBacklog, st2.GraphBacklog)
			if tc.open.ExactThreshold < tc.points && st.Replayed >= floor {
				assert.Zero(t, st2.Replayed, "the recovery checkpoint holds the whole log")
			}
			n, err := idx.Count(ctx, all)
			require.NoError(t, err)
			assert.Equal(t, tc.points, n)
			hits, err := idx.Search(ctx, pts[7].Vector, all, 1)
			require.NoError(t, err)
			require.Len(t, hits, 1)
			assert.Equal(t, pts[7].ID, hits[0].ID)
		})
	}
}
