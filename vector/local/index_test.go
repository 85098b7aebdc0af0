package local_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/indextest"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// dirs remembers the directory of each index the suite opens, for Reopen.
type dirs map[vector.Index]string

func (d dirs) open(opts local.Options) indextest.Factory {
	return func(t *testing.T, dim int) vector.Index {
		t.Helper()
		dir := t.TempDir()
		opts.Dimensions = dim
		idx, err := local.Open(dir, opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = idx.Close() })
		d[idx] = dir
		return idx
	}
}

func (d dirs) config(opts local.Options) indextest.Config {
	return indextest.Config{Reopen: func(t *testing.T, idx vector.Index) vector.Index {
		t.Helper()
		require.NoError(t, idx.Close())
		opts.Dimensions = idx.Dimensions()
		again, err := local.Open(d[idx], opts)
		require.NoError(t, err)
		t.Cleanup(func() { _ = again.Close() })
		d[again] = d[idx]
		return again
	}}
}

func TestConformance(t *testing.T) {
	tests := []struct {
		name string
		opts local.Options
	}{
		// Everything below the graph threshold: exact search, log only.
		{"exact", local.Options{}},
		// A tiny threshold builds, extends and persists the graph for
		// the suite's data, and a tiny log limit makes the index snapshot
		// constantly. (At the suite's sizes the cost rule still picks the
		// exact scan; TestRecall and TestGraphPersists cover searches the
		// graph serves.)
		{"graph built, constant snapshots", local.Options{ExactThreshold: 8, CompactBytes: 16 << 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := dirs{}
			indextest.Run(t, d.open(tc.opts), d.config(tc.opts))
		})
	}
}

func randPoints(r *rand.Rand, n, dim int, tenant string) []vector.Point {
	pts := make([]vector.Point, n)
	for i := range pts {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		pts[i] = vector.Point{ID: fmt.Sprintf("%s-%05d", tenant, i), Vector: v, Payload: vector.Payload{TenantID: tenant}}
	}
	return pts
}

func logFile(t *testing.T, dir string) string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "wal-*.log"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	return logs[0]
}

// TestTornTail simulates kill -9 in the middle of writing a batch: the last
// record of the log is cut short or damaged. Reopening must keep every
// earlier (acknowledged) batch, drop the torn one, and accept new writes.
func TestTornTail(t *testing.T) {
	const dim = 16
	ctx := context.Background()
	tests := []struct {
		name   string
		damage func(t *testing.T, path string, lastRecord int64)
	}{
		{"truncated mid record", func(t *testing.T, path string, last int64) {
			require.NoError(t, os.Truncate(path, last+20))
		}},
		{"truncated mid header", func(t *testing.T, path string, last int64) {
			require.NoError(t, os.Truncate(path, last+3))
		}},
		{"last bytes flipped", func(t *testing.T, path string, last int64) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			b[len(b)-1] ^= 0xff
			b[len(b)-5] ^= 0x0f
			require.NoError(t, os.WriteFile(path, b, 0o644))
		}},
		{"garbage appended", func(t *testing.T, path string, last int64) {
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.Write([]byte{0xff, 0xff, 0xff, 0x7f, 1, 2, 3})
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			idx, err := local.Open(dir, local.Options{Dimensions: dim})
			require.NoError(t, err)
			r := rand.New(rand.NewPCG(1, 2))
			acked := randPoints(r, 30, dim, "t")
			require.NoError(t, idx.Upsert(ctx, acked[:20]))
			require.NoError(t, idx.Delete(ctx, []string{acked[0].ID}))
			require.NoError(t, idx.Upsert(ctx, acked[20:]))
			st, err := os.Stat(logFile(t, dir))
			require.NoError(t, err)
			lastGood := st.Size()
			torn := randPoints(r, 5, dim, "torn")
			require.NoError(t, idx.Upsert(ctx, torn))
			require.NoError(t, idx.Close())

			path := logFile(t, dir)
			if tc.name == "garbage appended" {
				lastGood = fileSize(t, path) // the whole log is good here
			}
			tc.damage(t, path, lastGood)

			idx, err = local.Open(dir, local.Options{Dimensions: dim})
			require.NoError(t, err)
			defer idx.Close()
			n, err := idx.Count(ctx, vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true})
			require.NoError(t, err)
			assert.Equal(t, 29, n, "every acknowledged point survives")
			n, err = idx.Count(ctx, vector.Filter{TenantID: "torn", AllUsers: true, Subscopes: true})
			require.NoError(t, err)
			want := 0
			if tc.name == "garbage appended" {
				want = 5
			}
			assert.Equal(t, want, n)
			assert.Equal(t, lastGood, fileSize(t, path), "the torn tail is cut on open")

			// Writes after recovery land after the good records and
			// survive another reopen.
			late := randPoints(r, 3, dim, "late")
			require.NoError(t, idx.Upsert(ctx, late))
			require.NoError(t, idx.Close())
			idx, err = local.Open(dir, local.Options{Dimensions: dim})
			require.NoError(t, err)
			n, err = idx.Count(ctx, vector.Filter{TenantID: "late", AllUsers: true, Subscopes: true})
			require.NoError(t, err)
			assert.Equal(t, 3, n)
			n, err = idx.Count(ctx, vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true})
			require.NoError(t, err)
			assert.Equal(t, 29, n)
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}

// TestSnapshotThenLog checks recovery from a snapshot plus the log written
// after it, with the graph persisted in the snapshot, and that a damaged
// snapshot is reported rather than silently dropped.
func TestSnapshotThenLog(t *testing.T) {
	const dim = 16
	ctx := context.Background()
	dir := t.TempDir()
	opts := local.Options{Dimensions: dim, ExactThreshold: 50}
	idx, err := local.Open(dir, opts)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(3, 4))
	pts := randPoints(r, 300, dim, "t")
	require.NoError(t, idx.Upsert(ctx, pts[:200]))
	require.NoError(t, idx.Compact(ctx))
	require.NoError(t, idx.Upsert(ctx, pts[200:]))
	require.NoError(t, idx.Delete(ctx, []string{pts[5].ID}))
	q := pts[7].Vector
	before, err := idx.Search(ctx, q, vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true}, 10)
	require.NoError(t, err)
	require.NoError(t, idx.Close())

	idx, err = local.Open(dir, opts)
	require.NoError(t, err)
	after, err := idx.Search(ctx, q, vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true}, 10)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	n, err := idx.Count(ctx, vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true})
	require.NoError(t, err)
	assert.Equal(t, 299, n)
	require.NoError(t, idx.Close())

	// Another process holding the directory is refused.
	idx, err = local.Open(dir, opts)
	require.NoError(t, err)
	_, err = local.Open(dir, opts)
	assert.ErrorContains(t, err, "in use")
	require.NoError(t, idx.Close())

	// Different dimensions are refused.
	// Different dimensions are refused, from the snapshot header.
	idx, err = local.Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, idx.Compact(ctx))
	require.NoError(t, idx.Close())
	_, err = local.Open(dir, local.Options{Dimensions: dim + 1})
	assert.ErrorContains(t, err, "dimensions")

	b, err := os.ReadFile(filepath.Join(dir, "snapshot"))
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(filepath.Join(dir, "snapshot"), b, 0o644))
	_, err = local.Open(dir, opts)
	assert.ErrorContains(t, err, "snapshot", "a damaged snapshot must not open as an empty index")
}

// TestCompactionDropsDead checks that compaction after heavy deletion
// renumbers the slots, rebuilds the graph, and keeps search results and
// payloads intact across a reopen.
func TestCompactionDropsDead(t *testing.T) {
	const dim = 16
	ctx := context.Background()
	dir := t.TempDir()
	opts := local.Options{Dimensions: dim, ExactThreshold: 20}
	idx, err := local.Open(dir, opts)
	require.NoError(t, err)
	pts := randPoints(rand.New(rand.NewPCG(5, 6)), 300, dim, "t")
	require.NoError(t, idx.Upsert(ctx, pts))
	var gone []string
	for _, p := range pts[:200] {
		gone = append(gone, p.ID)
	}
	require.NoError(t, idx.Delete(ctx, gone))
	q := pts[250].Vector
	f := vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true}
	before, err := idx.Search(ctx, q, f, 10)
	require.NoError(t, err)
	require.Equal(t, 200, idx.Stats().DeadSlots)

	require.NoError(t, idx.Compact(ctx))
	st := idx.Stats()
	assert.Zero(t, st.DeadSlots)
	assert.Equal(t, 100, st.Points)
	assert.True(t, st.Graph, "100 live points are past a threshold of 20")
	after, err := idx.Search(ctx, q, f, 10)
	require.NoError(t, err)
	assert.Equal(t, before, after)
	require.NoError(t, idx.Close())

	idx, err = local.Open(dir, opts)
	require.NoError(t, err)
	defer idx.Close()
	again, err := idx.Search(ctx, q, f, 10)
	require.NoError(t, err)
	assert.Equal(t, before, again)
	assert.Equal(t, "t-00250", again[0].ID)
}

// TestGraphPersists checks that a graph search gives the same answers after
// a snapshot and a reopen (the adjacency lists are loaded, not rebuilt) and
// after more points arrive through the log.
func TestGraphPersists(t *testing.T) {
	const dim = 16
	ctx := context.Background()
	dir := t.TempDir()
	opts := local.Options{Dimensions: dim, ExactThreshold: 100}
	idx, err := local.Open(dir, opts)
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(7, 8))
	pts := randPoints(r, 6000, dim, "t")
	require.NoError(t, idx.Upsert(ctx, pts[:5000]))
	require.NoError(t, idx.Compact(ctx))
	require.NoError(t, idx.Upsert(ctx, pts[5000:]))
	f := vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true}
	queries := randPoints(r, 20, dim, "q")
	search := func(idx *local.Index) [][]vector.Hit {
		var out [][]vector.Hit
		for _, q := range queries {
			hits, err := idx.Search(ctx, q.Vector, f, 10)
			require.NoError(t, err)
			out = append(out, hits)
		}
		return out
	}
	before := search(idx)
	require.Equal(t, int64(len(queries)), idx.Stats().GraphSearches, "the graph must serve these searches")
	require.NoError(t, idx.Close())

	idx, err = local.Open(dir, opts)
	require.NoError(t, err)
	defer idx.Close()
	assert.Equal(t, before, search(idx))
	assert.Equal(t, int64(len(queries)), idx.Stats().GraphSearches)
}

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

// TestReleaseUnderReaders: the vectors of a state live outside the Go heap
// and are freed when a compaction replaces the state or the index closes; a
// read of freed vectors would crash the process. Searches, scores and
// scans run throughout compactions that drop dead slots (each one builds a
// new state and frees the old) and through Close, and must all answer
// (ErrClosed after Close) and find what is live.
func TestReleaseUnderReaders(t *testing.T) {
	const dim = 16
	ctx := context.Background()
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: dim, ExactThreshold: 20})
	require.NoError(t, err)
	r := rand.New(rand.NewPCG(9, 10))
	f := vector.Filter{TenantID: "t", AllUsers: true, Subscopes: true}
	q := randPoints(r, 1, dim, "q")[0].Vector
	require.NoError(t, idx.Upsert(ctx, randPoints(r, 50, dim, "t"))) // kept throughout
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				hits, err := idx.Search(ctx, q, f, 5)
				if errors.Is(err, vector.ErrClosed) {
					return
				}
				if !assert.NoError(t, err) || !assert.NotEmpty(t, hits) {
					return
				}
				_, err = idx.Score(ctx, q, f, []string{hits[0].ID})
				if !errors.Is(err, vector.ErrClosed) && !assert.NoError(t, err) {
					return
				}
			}
		})
	}
	var prev []string // the last round's survivors
	for round := range 20 {
		pts := randPoints(r, 200, dim, "t")
		for i := range pts {
			pts[i].ID = fmt.Sprintf("r%02d-%s", round, pts[i].ID)
		}
		require.NoError(t, idx.Upsert(ctx, pts))
		gone := prev
		prev = nil
		for i, p := range pts {
			if i < 150 {
				gone = append(gone, p.ID)
			} else {
				prev = append(prev, p.ID)
			}
		}
		require.NoError(t, idx.Delete(ctx, gone))
		require.NoError(t, idx.Compact(ctx)) // dead outnumber live: a new state
		st := idx.Stats()
		require.Zero(t, st.DeadSlots)
		require.Equal(t, 100, st.Points)
	}
	require.NoError(t, idx.Close())
	close(stop)
	wg.Wait()
	_, err = idx.Search(ctx, q, f, 5)
	assert.ErrorIs(t, err, vector.ErrClosed)
}
