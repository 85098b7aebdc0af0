package indextest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/mnemo-dev/mnemo/vector"
)

func (s suite) roundTrip(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	require.Equal(t, Dim, idx.Dimensions())
	r := rand.New(rand.NewPCG(1, 1))
	pts := []vector.Point{point("a", "t", randVec(r, Dim)), point("b", "t", randVec(r, Dim)), point("c", "t", randVec(r, Dim))}
	pts[1].Payload.OrgID, pts[1].Payload.RepoID, pts[1].Payload.Type = "o", "r", "decision"
	pts[1].Payload.UserID, pts[1].Payload.Visibility, pts[1].Payload.Tags = "u1", "user", []string{"db", "ops"}
	pts[1].Payload.SubjectType, pts[1].Payload.SubjectID = "team", "platform"
	pts[1].Payload.ProjectID, pts[1].Payload.SessionID = "p1", "s1"
	s.upsert(t, idx, pts...)

	f := all("t")
	for _, p := range pts {
		hits, err := idx.Search(ctx, p.Vector, f, 1)
		require.NoError(t, err)
		require.Len(t, hits, 1)
		got := hits[0]
		assert.Equal(t, p.ID, got.ID)
		assert.InDelta(t, 1, got.Score, float64(s.cfg.ScoreTolerance))
		want := p.Payload
		want.MemoryID = p.ID
		assert.True(t, want.CreatedAt.Equal(got.Payload.CreatedAt), "created_at: got %v, want %v", got.Payload.CreatedAt, want.CreatedAt)
		got.Payload.CreatedAt, want.CreatedAt = time.Time{}, time.Time{}
		assert.Equal(t, want, got.Payload)
	}
	assert.Equal(t, []string{"a", "b", "c"}, visible(t, idx, f))

	// Scan stops at the first error fn returns and returns it.
	stop := fmt.Errorf("stop")
	calls := 0
	err := idx.Scan(ctx, f, func(vector.Payload) error { calls++; return stop })
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, 1, calls)

	// A tenant with nothing indexed sees an empty result, not an error.
	assert.Equal(t, []string{}, visible(t, idx, all("nobody")))
}

func (s suite) upsertReplaces(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(2, 2))
	v1, v2 := randVec(r, Dim), randVec(r, Dim)
	other := point("other", "t", randVec(r, Dim))
	s.upsert(t, idx, point("a", "t", v1), other)

	p := point("a", "t", v2)
	p.Payload.VersionID = "a-v2"
	s.upsert(t, idx, p)
	f := all("t")
	n, err := idx.Count(ctx, f)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "upsert of an existing id must replace, not add")

	hits, err := idx.Search(ctx, v2, f, 2)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "a", hits[0].ID)
	assert.Equal(t, "a-v2", hits[0].Payload.VersionID)
	assert.InDelta(t, 1, hits[0].Score, float64(s.cfg.ScoreTolerance))

	// The old vector is gone: searching near it finds "a" only at its new
	// similarity.
	hits, err = idx.Search(ctx, v1, f, 2)
	require.NoError(t, err)
	for _, h := range hits {
		if h.ID == "a" {
			assert.InDelta(t, cosine(v1, v2), h.Score, float64(s.cfg.ScoreTolerance))
		}
	}

	// Same vector, new payload: updated in place.
	p.Payload.VersionID, p.Payload.Type = "a-v3", "decision"
	s.upsert(t, idx, p)
	hits, err = idx.Score(ctx, v2, f, []string{"a"})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "a-v3", hits[0].Payload.VersionID)
	assert.Equal(t, "decision", hits[0].Payload.Type)
}

func (s suite) delete(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(3, 3))
	a, b, c := point("a", "t", randVec(r, Dim)), point("b", "t", randVec(r, Dim)), point("c", "t", randVec(r, Dim))
	s.upsert(t, idx, a, b, c)

	require.NoError(t, idx.Delete(ctx, []string{"b", "never-existed"}))
	require.NoError(t, idx.Delete(ctx, nil))
	f := all("t")
	assert.Equal(t, []string{"a", "c"}, visible(t, idx, f))
	hits, err := idx.Score(ctx, b.Vector, f, []string{"a", "b", "c"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "c"}, ids(hits))

	// A deleted id can come back.
	s.upsert(t, idx, b)
	assert.Equal(t, []string{"a", "b", "c"}, visible(t, idx, f))
}

func (s suite) tenantIsolation(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(4, 4))
	var t1, t2 []vector.Point
	var t1IDs []string
	for i := range 20 {
		v := randVec(r, Dim)
		t1 = append(t1, point(fmt.Sprintf("t1-%02d", i), "t1", v))
		t2 = append(t2, point(fmt.Sprintf("t2-%02d", i), "t2", v)) // identical vectors
		t1IDs = append(t1IDs, t1[i].ID)
	}
	s.upsert(t, idx, t1...)

	// A second tenant with nothing of its own sees nothing of the first.
	for _, p := range t1 {
		hits, err := idx.Search(ctx, p.Vector, all("t2"), 10)
		require.NoError(t, err)
		assert.Empty(t, hits)
	}
	s.upsert(t, idx, t2...)
	for i, p := range t1 {
		hits, err := idx.Search(ctx, p.Vector, all("t2"), 10)
		require.NoError(t, err)
		require.NotEmpty(t, hits)
		assert.Equal(t, t2[i].ID, hits[0].ID)
		for _, h := range hits {
			assert.Equal(t, "t2", h.Payload.TenantID, "tenant t2 saw %s", h.ID)
		}
	}
	// Scoring another tenant's ids yields nothing.
	hits, err := idx.Score(ctx, t1[0].Vector, all("t2"), t1IDs)
	require.NoError(t, err)
	assert.Empty(t, hits)
	// Tenant ids match exactly, not by prefix or case.
	for _, tenant := range []string{"t", "T1", "t1 ", "t12"} {
		assert.Equal(t, []string{}, visible(t, idx, all(tenant)), "tenant %q", tenant)
	}
	assert.Len(t, visible(t, idx, all("t1")), 20)
}

func (s suite) scopeInheritance(t *testing.T) {
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(5, 5))
	fixture := []struct{ id, org, repo string }{
		{"tw", "", ""}, {"o1w", "o1", ""}, {"o1r1", "o1", "r1"}, {"o1r2", "o1", "r2"},
		{"o2w", "o2", ""}, {"o2r3", "o2", "r3"},
	}
	for _, fx := range fixture {
		p := point(fx.id, "t", randVec(r, Dim))
		p.Payload.OrgID, p.Payload.RepoID = fx.org, fx.repo
		s.upsert(t, idx, p)
	}
	// The same shapes in another tenant must never show.
	for _, fx := range fixture {
		p := point("x-"+fx.id, "x", randVec(r, Dim))
		p.Payload.OrgID, p.Payload.RepoID = fx.org, fx.repo
		s.upsert(t, idx, p)
	}
	// Without subscopes a filter sees its own scope and the scopes above
	// it; with subscopes also those beneath (empty means any).
	tests := []struct {
		name      string
		org, repo string
		sees      []string
		contains  []string
	}{
		{"tenant", "", "", []string{"tw"}, []string{"o1r1", "o1r2", "o1w", "o2r3", "o2w", "tw"}},
		{"org o1", "o1", "", []string{"o1w", "tw"}, []string{"o1r1", "o1r2", "o1w", "tw"}},
		{"repo o1/r1", "o1", "r1", []string{"o1r1", "o1w", "tw"}, []string{"o1r1", "o1w", "tw"}},
		{"repo o2/r3", "o2", "r3", []string{"o2r3", "o2w", "tw"}, []string{"o2r3", "o2w", "tw"}},
		{"repo r1 any org", "", "r1", []string{"tw"}, []string{"o1r1", "o1w", "o2w", "tw"}},
		{"unknown org", "o9", "", []string{"tw"}, []string{"tw"}},
		{"repo of another org", "o2", "r1", []string{"o2w", "tw"}, []string{"o2w", "tw"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := vector.Filter{TenantID: "t", OrgID: tc.org, RepoID: tc.repo, ReaderUserID: "u"}
			assert.Equal(t, tc.sees, visible(t, idx, f), "without subscopes")
			f.Subscopes = true
			assert.Equal(t, tc.contains, visible(t, idx, f), "with subscopes")
		})
	}
}

func (s suite) typeAndTime(t *testing.T) {
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(6, 6))
	for i, typ := range []string{"note", "decision", "task", "note"} {
		p := point(fmt.Sprintf("p%d", i), "t", randVec(r, Dim))
		p.Payload.Type = typ
		p.Payload.CreatedAt = t0.Add(time.Duration(i) * time.Hour)
		s.upsert(t, idx, p)
	}
	tests := []struct {
		name string
		f    vector.Filter
		want []string
	}{
		{"one type", vector.Filter{Types: []string{"note"}}, []string{"p0", "p3"}},
		{"two types", vector.Filter{Types: []string{"decision", "task"}}, []string{"p1", "p2"}},
		{"unknown type", vector.Filter{Types: []string{"skill"}}, []string{}},
		{"after is inclusive", vector.Filter{CreatedAfter: t0.Add(time.Hour)}, []string{"p1", "p2", "p3"}},
		{"before is exclusive", vector.Filter{CreatedBefore: t0.Add(2 * time.Hour)}, []string{"p0", "p1"}},
		{"window", vector.Filter{CreatedAfter: t0.Add(time.Hour), CreatedBefore: t0.Add(3 * time.Hour)}, []string{"p1", "p2"}},
		{"window and type", vector.Filter{Types: []string{"note"}, CreatedAfter: t0.Add(time.Hour)}, []string{"p3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.TenantID, tc.f.AllUsers, tc.f.Subscopes = "t", true, true
			assert.Equal(t, tc.want, visible(t, idx, tc.f))
		})
	}
}

// fixedSet upserts n seeded random points into tenant "t" (half in org "o",
// two thirds private to users u1 or u2) and as many into tenant "u", in
// batches, and returns the tenant-t points.
func (s suite) fixedSet(t *testing.T, idx vector.Index, n int, seed uint64) []vector.Point {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	var mine, all []vector.Point
	for i := range n {
		p := point(fmt.Sprintf("t-%04d", i), "t", randVec(r, Dim))
		if i%2 == 0 {
			p.Payload.OrgID = "o"
		}
		// A third private to u1, a third private to u2, a third u2's
		// but readable by the project.
		p.Payload.UserID, p.Payload.Visibility = []string{"u2", "u1", "u2"}[i%3], []string{"project", "user", "user"}[i%3]
		mine = append(mine, p)
		all = append(all, p, point(fmt.Sprintf("u-%04d", i), "u", randVec(r, Dim)))
	}
	for i := 0; i < len(all); i += 100 {
		s.upsert(t, idx, all[i:min(i+100, len(all))]...)
	}
	return mine
}

// exactTop is the reference: the k points of pts closest to q by cosine
// among those f matches, ties by id.
func exactTop(pts []vector.Point, q []float32, f vector.Filter, k int) []vector.Hit {
	var hits []vector.Hit
	for _, p := range pts {
		p.Payload.MemoryID = p.ID
		if f.Match(p.Payload) {
			hits = append(hits, vector.Hit{ID: p.ID, Score: cosine(q, p.Vector)})
		}
	}
	vector.SortHits(hits)
	return hits[:min(k, len(hits))]
}

func (s suite) assertSameRanking(t *testing.T, want, got []vector.Hit) {
	t.Helper()
	require.Equal(t, ids(want), ids(got))
	for i := range want {
		assert.InDelta(t, want[i].Score, got[i].Score, float64(s.cfg.ScoreTolerance), "score of %s", want[i].ID)
	}
}

func (s suite) topKOrder(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	pts := s.fixedSet(t, idx, 500, 7)
	r := rand.New(rand.NewPCG(8, 8))
	filters := []vector.Filter{all("t"), {TenantID: "t", OrgID: "o", ReaderUserID: "u1"}}
	for qi := range 20 {
		q := randVec(r, Dim)
		for _, f := range filters {
			for _, k := range []int{1, 10} {
				got, err := idx.Search(ctx, q, f, k)
				require.NoError(t, err)
				s.assertSameRanking(t, exactTop(pts, q, f, k), got)
				if t.Failed() {
					t.Fatalf("query %d, filter %+v, k %d", qi, f, k)
				}
			}
		}
	}
}

func (s suite) scoreEqualsRestrictedSearch(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	pts := s.fixedSet(t, idx, 200, 9)
	r := rand.New(rand.NewPCG(10, 10))
	// Candidates: 40 of tenant t, 10 of tenant u, 5 unknown, 3 repeated.
	var cands []string
	candSet := map[string]bool{}
	for _, i := range r.Perm(200)[:40] {
		cands = append(cands, pts[i].ID)
		candSet[pts[i].ID] = true
	}
	for i := range 10 {
		cands = append(cands, fmt.Sprintf("u-%04d", i))
	}
	for i := range 5 {
		cands = append(cands, fmt.Sprintf("missing-%d", i))
	}
	cands = append(cands, cands[0], cands[1], cands[2])

	for _, f := range []vector.Filter{all("t"), {TenantID: "t", OrgID: "o", ReaderUserID: "u1"}} {
		q := randVec(r, Dim)
		got, err := idx.Score(ctx, q, f, cands)
		require.NoError(t, err)
		all, err := idx.Search(ctx, q, f, 1000)
		require.NoError(t, err)
		var want []vector.Hit
		for _, h := range all {
			if candSet[h.ID] {
				want = append(want, h)
			}
		}
		s.assertSameRanking(t, want, got)
		var restricted []vector.Point
		for _, p := range pts {
			if candSet[p.ID] {
				restricted = append(restricted, p)
			}
		}
		s.assertSameRanking(t, exactTop(restricted, q, f, 1000), got)
	}
	got, err := idx.Score(ctx, randVec(r, Dim), all("t"), nil)
	require.NoError(t, err)
	assert.Empty(t, got)
}

func (s suite) reopen(t *testing.T) {
	if s.cfg.Reopen == nil {
		t.Skip("backend has no local storage to reopen")
	}
	ctx := context.Background()
	idx := s.open(t, Dim)
	pts := s.fixedSet(t, idx, 300, 11)
	require.NoError(t, idx.Delete(ctx, []string{pts[0].ID, pts[1].ID}))
	q := randVec(rand.New(rand.NewPCG(12, 12)), Dim)
	f := all("t")
	before, err := idx.Search(ctx, q, f, 10)
	require.NoError(t, err)

	idx = s.cfg.Reopen(t, idx)
	n, err := idx.Count(ctx, f)
	require.NoError(t, err)
	assert.Equal(t, 298, n)
	after, err := idx.Search(ctx, q, f, 10)
	require.NoError(t, err)
	s.assertSameRanking(t, before, after)
	s.assertSameRanking(t, exactTop(pts[2:], q, f, 10), after)
	// Payloads survive too.
	hits, err := idx.Score(ctx, q, vector.Filter{TenantID: "t", OrgID: "o", AllUsers: true, Subscopes: true}, []string{pts[2].ID})
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, pts[2].Payload.VersionID, hits[0].Payload.VersionID)
	assert.True(t, t0.Equal(hits[0].Payload.CreatedAt))
	// And writes continue after the reopen.
	s.upsert(t, idx, point("late", "t", q))
	hits, err = idx.Search(ctx, q, f, 1)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	assert.Equal(t, "late", hits[0].ID)
}

func (s suite) concurrentUpserts(t *testing.T) {
	const writers, batches, per = 8, 10, 5
	idx := s.open(t, Dim)
	var searches atomic.Int64
	g, ctx := errgroup.WithContext(context.Background())
	for w := range writers {
		g.Go(func() error {
			r := rand.New(rand.NewPCG(uint64(w), 13))
			for b := range batches {
				var pts []vector.Point
				for i := range per {
					pts = append(pts, point(fmt.Sprintf("w%d-b%d-%d", w, b, i), "t", randVec(r, Dim)))
				}
				if err := idx.Upsert(ctx, pts); err != nil {
					return err
				}
				if _, err := idx.Search(ctx, randVec(r, Dim), all("t"), 5); err != nil {
					return err
				}
				searches.Add(1)
			}
			return nil
		})
	}
	require.NoError(t, g.Wait())
	n, err := idx.Count(context.Background(), all("t"))
	require.NoError(t, err)
	assert.Equal(t, writers*batches*per, n)
	assert.Equal(t, int64(writers*batches), searches.Load())
}

func (s suite) invalidRefused(t *testing.T) {
	ctx := context.Background()
	idx := s.open(t, Dim)
	r := rand.New(rand.NewPCG(14, 14))
	good := point("good", "t", randVec(r, Dim))
	s.upsert(t, idx, good)
	nan := randVec(r, Dim)
	nan[3] = float32(math.NaN())
	inf := randVec(r, Dim)
	inf[0] = float32(math.Inf(-1))
	noTenant := point("nt", "", randVec(r, Dim))
	mismatch := point("mm", "t", randVec(r, Dim))
	mismatch.Payload.MemoryID = "other"

	tests := []struct {
		name    string
		bad     vector.Point
		wantErr error
	}{
		{"short vector", point("x", "t", randVec(r, Dim-1)), vector.ErrDimension},
		{"long vector", point("x", "t", randVec(r, Dim+1)), vector.ErrDimension},
		{"nil vector", point("x", "t", nil), vector.ErrDimension},
		{"NaN", point("x", "t", nan), vector.ErrInvalid},
		{"Inf", point("x", "t", inf), vector.ErrInvalid},
		{"zero vector", point("x", "t", make([]float32, Dim)), vector.ErrInvalid},
		{"empty id", point("", "t", randVec(r, Dim)), vector.ErrInvalid},
		{"no tenant", noTenant, vector.ErrInvalid},
		{"memory id differs", mismatch, vector.ErrInvalid},
		{"duplicate in batch", point("first", "t", randVec(r, Dim)), vector.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The bad point comes second: the valid first one must not be
			// written either.
			first := point("first", "t", randVec(r, Dim))
			err := idx.Upsert(ctx, []vector.Point{first, tc.bad})
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.wantErr)
			assert.ErrorIs(t, err, vector.ErrInvalid, "every refusal is ErrInvalid")
			assert.Equal(t, []string{"good"}, visible(t, idx, all("t")))
		})
	}

	queries := []struct {
		name    string
		q       []float32
		f       vector.Filter
		k       int
		wantErr error
	}{
		{"query dimensions", randVec(r, Dim+3), all("t"), 5, vector.ErrDimension},
		{"query NaN", nan, all("t"), 5, vector.ErrInvalid},
		{"query zero", make([]float32, Dim), all("t"), 5, vector.ErrInvalid},
		{"no tenant", good.Vector, vector.Filter{AllUsers: true}, 5, vector.ErrInvalid},
		{"no reader", good.Vector, vector.Filter{TenantID: "t"}, 5, vector.ErrInvalid},
		{"empty window", good.Vector, vector.Filter{TenantID: "t", CreatedAfter: t0, CreatedBefore: t0, AllUsers: true, Subscopes: true}, 5, vector.ErrInvalid},
		{"k zero", good.Vector, all("t"), 0, vector.ErrInvalid},
	}
	for _, tc := range queries {
		t.Run("search "+tc.name, func(t *testing.T) {
			_, err := idx.Search(ctx, tc.q, tc.f, tc.k)
			assert.ErrorIs(t, err, tc.wantErr)
			if tc.k > 0 {
				_, err = idx.Score(ctx, tc.q, tc.f, []string{"good"})
				assert.ErrorIs(t, err, tc.wantErr)
			}
		})
	}
	for _, f := range []vector.Filter{{}, {TenantID: "t"}} {
		_, err := idx.Count(ctx, f)
		assert.ErrorIs(t, err, vector.ErrInvalid)
		assert.ErrorIs(t, idx.Scan(ctx, f, func(vector.Payload) error { return nil }), vector.ErrInvalid)
	}
	assert.ErrorIs(t, idx.Delete(ctx, []string{""}), vector.ErrInvalid)
}
