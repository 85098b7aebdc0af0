package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// tableEmbedder embeds the texts it was given a vector for; any other text
// is an error, so a test sees exactly which texts were embedded.
type tableEmbedder map[string][]float32

func (e tableEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v, ok := e[s]
		if !ok {
			return nil, fmt.Errorf("tableEmbedder: no vector for %q", s)
		}
		out[i] = v
	}
	return out, nil
}
func (e tableEmbedder) Dimensions() int { return vecDim }
func (e tableEmbedder) ModelID() string { return "test/table" }

const vecDim = 8

// axis returns e0 + w*e_i: its cosine to e0 is 1/sqrt(1+w²).
func axis(i int, w float32) []float32 {
	v := make([]float32, vecDim)
	v[0] = 1
	v[i] += w
	return v
}

// TestVectorBranchAppliesTheAccessRule runs the vector signal of search
// (default hybrid mode, and vector mode) on a real store and the embedded
// index, with the reader set on the filter as the engine sets it. The
// query's nearest neighbours are 250 private memories of another user,
// more than the index is asked for: filtered after ranking they would fill
// every slot and leave the reader nothing. Filtered inside the index they
// neither appear nor push the readable memories out.
//
// Memories, all about nothing the query says (so the keyword signal finds
// none of them), nearest first:
//
//	org-only    t1/o1, user u1, project      cos 1     beneath a tenant-wide reader
//	near-NNN    u2, user (private) x250      cos 0.999
//	sess-NN     u3, session (private) x5     cos 0.998
//	mine        u1, user (private)           cos 0.707
//	team        u2, project                  cos 0.640
//	ownerless   no owner, user               cos 0.555
func TestVectorBranchAppliesTheAccessRule(t *testing.T) {
	ctx := context.Background()
	st := graphtest.Open(t)
	pol, err := policy.Parse("default_policy.yaml", config.DefaultPolicy())
	require.NoError(t, err)
	holder, err := policy.NewHolder(pol)
	require.NoError(t, err)
	idx, err := local.Open(t.TempDir(), local.Options{Dimensions: vecDim})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idx.Close() })
	const query = "where did the orca pod travel"
	emb := tableEmbedder{query: axis(1, 0)}
	e, err := New(Options{Store: st, Index: idx, Embedder: emb, Policy: holder})
	require.NoError(t, err)

	tenant := graph.Scope{TenantID: "t1"}
	at := time.Now().UTC().Add(-time.Hour)
	type fx struct {
		name       string
		scope      graph.Scope
		user       string
		visibility graph.Visibility
		vec        []float32
	}
	fixture := []fx{
		{"org-only", graph.Scope{TenantID: "t1", OrgID: "o1"}, "u1", graph.VisibilityProject, axis(1, 0)},
		{"mine", tenant, "u1", graph.VisibilityUser, axis(1, 1)},
		{"team", tenant, "u2", graph.VisibilityProject, axis(2, 1.2)},
		{"ownerless", tenant, "", graph.VisibilityUser, axis(3, 1.5)},
	}
	r := rand.New(rand.NewPCG(1, 1))
	for i := range 250 {
		fixture = append(fixture, fx{fmt.Sprintf("near-%03d", i), tenant, "u2", graph.VisibilityUser, axis(1+r.IntN(vecDim-1), 0.05)})
	}
	for i := range 5 {
		fixture = append(fixture, fx{fmt.Sprintf("sess-%02d", i), tenant, "u3", graph.VisibilitySession, axis(1, 0.06)})
	}
	// More private neighbours than the index is asked for.
	require.Greater(t, 250, vectorPool*vectorOverfetch)
	in := make([]graph.MemoryInput, len(fixture))
	for i, f := range fixture {
		in[i] = graph.MemoryInput{
			Memory:  graph.Memory{Scope: f.scope, UserID: f.user, Visibility: f.visibility, Type: "note", Title: f.name, Tags: []string{"fx"}, CreatedAt: at},
			Version: graph.VersionInput{Content: "zebra crossing memo " + strings.ReplaceAll(f.name, "-", " ")},
		}
	}
	created, err := st.CreateMemories(ctx, in)
	require.NoError(t, err)
	require.Len(t, created, len(fixture))
	names := map[string]string{} // memory id -> fixture name
	pts := make([]vector.Point, len(created))
	for i, c := range created {
		names[c.Memory.ID] = fixture[i].name
		pts[i] = point(c.Memory, c.Version.ID, fixture[i].vec)
	}
	require.NoError(t, idx.Upsert(ctx, pts))

	// The plan a search by u1 at the tenant gets, built here rather than
	// by planSearch so that the test chooses the reader.
	plan := func(mode string, reader graph.Reader) searchPlan {
		rt := holder.Current().Retrieval
		return searchPlan{
			f:    graph.Filter{Scope: tenant, Reader: reader, Statuses: []graph.Status{graph.StatusActive}},
			text: query, mode: cmpOr(mode, rt.Mode), reranker: rt.Reranker.Kind, limit: 50,
			rt: rt, pol: holder.Current(), now: time.Now().UTC(), withVectors: true,
		}
	}
	vectorHits := func(t *testing.T, mode string, reader graph.Reader) []string {
		t.Helper()
		ranked, _, err := e.rank(ctx, plan(mode, reader))
		require.NoError(t, err)
		// In the vector signal's own order: the fused order also weighs the
		// graph walk, whose z-score puts a memory it reached with a low
		// score below one it did not reach (docs/benchmarks.md).
		var vec []*hit
		for _, h := range ranked {
			if _, ok := h.rank(signalVector); ok {
				vec = append(vec, h)
			}
		}
		slices.SortStableFunc(vec, func(a, b *hit) int { r, _ := a.rank(signalVector); s, _ := b.rank(signalVector); return r - s })
		got := make([]string, len(vec))
		for i, h := range vec {
			got[i] = names[h.mem.ID]
		}
		return got
	}
	for _, mode := range []string{"", policy.ModeVector} {
		t.Run("mode "+cmpOr(mode, "default"), func(t *testing.T) {
			got := vectorHits(t, mode, graph.Reader{UserID: "u1"})
			assert.Equal(t, []string{"mine", "team", "ownerless"}, got,
				"the reader's own, the project's and the ownerless memory, in cosine order; no private memory of u2 or u3, nothing beneath the tenant")

			got = vectorHits(t, mode, graph.Reader{UserID: "u1", Subscopes: true})
			assert.Equal(t, []string{"org-only", "mine", "team", "ownerless"}, got, "subscopes reach the org's memory")

			// The private memories are there and nearest: a reader of
			// every user gets them first.
			got = vectorHits(t, mode, graph.Reader{UserID: "u1", AllUsers: true})
			require.NotEmpty(t, got)
			assert.True(t, strings.HasPrefix(got[0], "near-") || strings.HasPrefix(got[0], "sess-"), "first: %s", got[0])
			assert.NotContains(t, got, "org-only")

			// The owner finds its own.
			got = vectorHits(t, mode, graph.Reader{UserID: "u3"})
			require.GreaterOrEqual(t, len(got), 5)
			for _, n := range got[:5] {
				assert.True(t, strings.HasPrefix(n, "sess-"), "u3's first hits are its session memories: %v", got[:5])
			}
		})
	}

	// A filter without a reader never reaches the index as "everyone".
	_, err = e.vectorHits(ctx, plan(policy.ModeVector, graph.Reader{}), emb[query])
	assert.ErrorIs(t, err, vector.ErrInvalid)

	// The narrowing fields reach the index too: narrowed to u2's
	// memories, u1 sees only u2's project memory.
	q := plan(policy.ModeVector, graph.Reader{UserID: "u1"})
	q.f.UserID, q.f.Tags = "u2", []string{"fx"}
	hits, err := e.vectorHits(ctx, q, emb[query])
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "team", names[hits[0].ID])
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestVectorFilterMirrorsTheAccessRule checks that the index's rule, on the
// payload the engine writes, is graph's rule on the memory: for every
// combination of reader, scope, owner and visibility,
// vectorFilter(f).Admits(VectorPayload(m)) == f.Admits(m).
func TestVectorFilterMirrorsTheAccessRule(t *testing.T) {
	orgs, repos := []string{"", "o1", "o2"}, []string{"", "r1", "r2"}
	users := []string{"", "u1", "u2"}
	vis := []graph.Visibility{graph.VisibilitySession, graph.VisibilityUser, graph.VisibilityProject, graph.VisibilityPolicy, graph.VisibilityGlobal}
	n := 0
	for _, fo := range orgs {
		for _, fr := range repos {
			for _, reader := range []graph.Reader{{UserID: "u1"}, {UserID: "u3"}, {UserID: "u1", Subscopes: true}, {UserID: "u2", AllUsers: true}, graph.System} {
				f := graph.Filter{Scope: graph.Scope{TenantID: "t", OrgID: fo, RepoID: fr}, Reader: reader}
				vf := vectorFilter(f)
				for _, tenant := range []string{"t", "x"} {
					for _, mo := range orgs {
						for _, mr := range repos {
							for _, u := range users {
								for _, v := range vis {
									m := graph.Memory{ID: "m", Scope: graph.Scope{TenantID: tenant, OrgID: mo, RepoID: mr}, UserID: u, Visibility: v}
									if got, want := vf.Admits(VectorPayload(m, "v")), f.Admits(m); got != want {
										t.Fatalf("reader %+v in %+v, memory %+v: index says %v, graph says %v", reader, f.Scope, m, got, want)
									}
									n++
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d combinations agree", n)
}

// TestVectorFilterMapsNarrowing checks that every narrowing field of a
// search filter reaches the index.
func TestVectorFilterMapsNarrowing(t *testing.T) {
	after, before := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2025, 2, 1, 0, 0, 0, 0, time.UTC)
	f := graph.Filter{
		Scope: graph.Scope{TenantID: "t", OrgID: "o", RepoID: "r"}, Reader: graph.Reader{UserID: "u1", AllUsers: true, Subscopes: true},
		UserID: "u2", Types: []string{"note"}, Tags: []string{"a", "b"}, Visibility: []graph.Visibility{graph.VisibilityProject, graph.VisibilityGlobal},
		SubjectType: "team", SubjectID: "platform", ProjectID: "p1", SessionID: "s1", CreatedAfter: after, CreatedBefore: before,
		EntityTypes: []string{"tool"}, Statuses: []graph.Status{graph.StatusActive},
	}
	assert.Equal(t, vector.Filter{
		TenantID: "t", OrgID: "o", RepoID: "r", ReaderUserID: "u1", AllUsers: true, Subscopes: true,
		UserID: "u2", Types: []string{"note"}, Tags: []string{"a", "b"}, Visibility: []string{"project", "global"},
		SubjectType: "team", SubjectID: "platform", ProjectID: "p1", SessionID: "s1", CreatedAfter: after, CreatedBefore: before,
	}, vectorFilter(f))
	assert.True(t, narrowsBeyondIndex(f), "entity types stay with the store")
	f.EntityTypes = nil
	assert.False(t, narrowsBeyondIndex(f), "everything else is in the index")
	assert.Equal(t, vector.Filter{TenantID: "t", OrgID: "o", AllUsers: true, Subscopes: true}, maintenanceFilter(graph.Scope{TenantID: "t", OrgID: "o"}))
}
