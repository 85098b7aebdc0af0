//go:build unix

package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/vector"
)

// BenchmarkEraseUser erases a user with 10k memories (issue 13's target:
// <= 10 s) on the selected store (MNEMO_TEST_STORE) with the embedded vector
// index. Each memory has one chunk, three entities (one its own, two from a
// pool of 200 shared with the other users' memories), a session of 20
// turns (NEXT edges), a pending outbox item and an audit event; another
// user's 2k memories stay. Run with -benchtime=1x; it reports ms per erase
// (wall) and cpu_ms, the process's CPU time during the erase (a loaded
// machine inflates the wall time several times over; cpu_ms far less).
//
//	go test ./engine -run '^$' -bench EraseUser -benchtime=1x
func BenchmarkEraseUser(b *testing.B) {
	const (
		n      = 10000
		others = 2000
	)
	for range b.N {
		b.StopTimer()
		f := newIngFixture(b, ingOpts{vectors: true})
		ctx := context.Background()
		seedUser(b, f, "victim", n)
		seedUser(b, f, "bystander", others)
		admin := who("admin-1", "", t1, "admin")
		b.StartTimer()
		start, cpu := time.Now(), stats.CPUTime()
		res, err := f.eng.EraseUser(ctx, admin, "victim", "bench")
		elapsed, used := time.Since(start), stats.CPUTime()-cpu
		b.StopTimer()
		require.NoError(b, err)
		require.Equal(b, n, res.Memories)
		b.ReportMetric(float64(elapsed.Milliseconds()), "ms/erase")
		b.ReportMetric(float64(used.Milliseconds()), "cpu_ms")
		b.ReportMetric(float64(res.Entities), "entities")
	}
}

// seedUser writes n memories of user straight into the store and their
// points into the index.
func seedUser(b *testing.B, f *ingFixture, user string, n int) {
	ctx := context.Background()
	const batch = 500
	for lo := 0; lo < n; lo += batch {
		ins := make([]graph.MemoryInput, 0, batch)
		for i := lo; i < min(n, lo+batch); i++ {
			content := fmt.Sprintf("%s note %d about Topic%d and Place%d, with its own Thing%s%d", user, i, i%200, (i*7)%200, user, i)
			ins = append(ins, graph.MemoryInput{
				Memory: graph.Memory{ID: graph.NewID(), Scope: t1, UserID: user, Type: "note", Title: fmt.Sprintf("%s %d", user, i),
					Visibility: graph.VisibilityUser, SessionID: fmt.Sprintf("%s-s%d", user, i/20)},
				Version: graph.VersionInput{Content: content, Index: true,
					Entities: []graph.EntityRef{{Name: fmt.Sprintf("Topic%d", i%200)}, {Name: fmt.Sprintf("Place%d", (i*7)%200)},
						{Name: fmt.Sprintf("Thing%s%d", user, i)}},
					Chunks: []graph.ChunkInput{{Key: "body", Start: 0, End: len(content),
						Entities: []graph.EntityRef{{Name: fmt.Sprintf("Topic%d", i%200)}}}}},
				Audit: []graph.AuditEvent{{Scope: t1, Action: "gate.approve", ActorID: user, Outcome: "approved", Reason: "bench"}},
			})
		}
		created, err := f.store.CreateMemories(ctx, ins)
		require.NoError(b, err)
		texts := make([]string, len(ins))
		for i, in := range ins {
			texts[i] = in.Version.Content
		}
		vecs, err := f.emb.Embed(ctx, texts)
		require.NoError(b, err)
		pts := make([]vector.Point, len(created))
		for i, c := range created {
			pts[i] = vector.Point{ID: c.Memory.ID, Vector: vecs[i], Payload: vector.Payload{VersionID: c.Version.ID,
				TenantID: t1.TenantID, UserID: user, Visibility: string(graph.VisibilityUser), Type: "note", CreatedAt: c.Memory.CreatedAt}}
		}
		require.NoError(b, f.index.Upsert(ctx, pts))
	}
}
