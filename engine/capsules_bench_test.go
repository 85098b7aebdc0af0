//go:build unix

package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
	"github.com/mnemo-dev/mnemo/policy"
)

// BenchmarkCapsules measures issue 13's capsule targets: capsule create
// p95 <= 10 ms and context bundle p95 <= 50 ms, on the store graphtest
// selects. The tenant holds the synthetic corpus (storetest.Corpus, seed
// 42, n memories: a seventh each decisions and tasks, spread over the five
// visibilities; 1% in the agent's session), n/20 approved amend edits, and
// 20 capsules of 10 memories addressed to the agent. "create" writes a
// capsule of 10 random memories (to another agent, so the bundle does not
// grow); "bundle" is the agent's context bundle for its session with the
// policy's token budget. Sizes: MNEMO_BENCH_SIZES (comma-separated),
// default 10000. Reports p50_ms, p95_ms, p99_ms, and cpu_ms: the process's
// CPU time per operation (user + system), which a loaded machine inflates
// far less than the wall-clock percentiles.
func BenchmarkCapsules(b *testing.B) {
	sizes := benchSizes(b, 10_000)
	for _, n := range sizes {
		b.Run(fmt.Sprintf("store=%s/n=%d", graphtest.Backend(), n), func(b *testing.B) {
			ctx := context.Background()
			store := graphtest.Open(b)
			s := graph.Scope{TenantID: "bench"}
			corpus := storetest.Corpus(s, 42, n)
			vis := []graph.Visibility{graph.VisibilityPolicy, graph.VisibilityGlobal, graph.VisibilityProject,
				graph.VisibilityUser, graph.VisibilitySession}
			for i := range corpus.Inputs {
				m := &corpus.Inputs[i].Memory
				m.Visibility = vis[i%len(vis)]
				if i%100 == 0 {
					m.UserID, m.SessionID, m.Visibility = "u0", "s1", graph.VisibilitySession
				}
			}
			var ids []string
			for i := 0; i < len(corpus.Inputs); i += 1000 {
				cs, err := store.CreateMemories(ctx, corpus.Inputs[i:min(i+1000, len(corpus.Inputs))])
				require.NoError(b, err)
				for _, c := range cs {
					ids = append(ids, c.Memory.ID)
				}
			}
			r := rand.New(rand.NewPCG(7, 7))
			at := time.Now().UTC()
			for i := range n / 20 {
				_, err := store.CreateEdit(ctx, graph.Edit{Scope: s, Kind: graph.EditAmend, Status: graph.EditApproved,
					TargetMemoryID: ids[r.IntN(len(ids))], Content: fmt.Sprintf("amended %d", i), Reason: "bench",
					CreatedBy: "lib", DecidedBy: "lib", DecidedAt: at})
				require.NoError(b, err)
			}
			pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
			require.NoError(b, err)
			holder, err := policy.NewHolder(pol)
			require.NoError(b, err)
			eng, err := engine.New(engine.Options{Store: store, Policy: holder})
			require.NoError(b, err)
			// The creator reads every user's memories (admin); the agent is u0.
			lead := graph.Principal{ID: "lead", UserID: "u0", Roles: []string{"admin"}, Scope: s}
			agent := graph.Principal{ID: "agent", UserID: "u0", Roles: []string{"writer"}, Scope: s}
			pick := func() []string {
				out := make([]string, 10)
				for i := range out {
					out[i] = ids[r.IntN(len(ids))]
				}
				return out
			}
			for range 20 {
				_, err := eng.CreateCapsule(ctx, lead, engine.CapsuleRequest{Subject: "handover", Audience: []string{"agent"}, MemoryIDs: pick()})
				require.NoError(b, err)
			}
			b.Run("op=create", func(b *testing.B) {
				var lat []time.Duration
				cpu := stats.CPUTime()
				for b.Loop() {
					items := pick()
					start := time.Now()
					_, err := eng.CreateCapsule(ctx, lead, engine.CapsuleRequest{Subject: "handover", Audience: []string{"other"}, MemoryIDs: items})
					lat = append(lat, time.Since(start))
					require.NoError(b, err)
				}
				b.ReportMetric(stats.Milliseconds(stats.CPUTime()-cpu)/float64(len(lat)), "cpu_ms")
				stats.Report(b, lat)
			})
			b.Run("op=bundle", func(b *testing.B) {
				var lat []time.Duration
				cpu := stats.CPUTime()
				for b.Loop() {
					start := time.Now()
					resp, err := eng.ContextBundle(ctx, agent, engine.BundleRequest{SessionID: "s1"})
					lat = append(lat, time.Since(start))
					require.NoError(b, err)
					if len(resp.Decisions) == 0 || len(resp.Capsules) != 20 {
						b.Fatalf("bundle: %d decisions, %d capsules", len(resp.Decisions), len(resp.Capsules))
					}
				}
				b.ReportMetric(stats.Milliseconds(stats.CPUTime()-cpu)/float64(len(lat)), "cpu_ms")
				stats.Report(b, lat)
			})
		})
	}
}
