package indextest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/viterin/vek/vek32"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/vector"
)

// Dataset is a deterministic set of unit vectors for recall tests and
// benchmarks, the same for every backend: clustered like text embeddings
// (points scattered around a few hundred topic centres) or uniform on the
// sphere (the hard case for a graph index). Point i is DatasetID(i) with
// DatasetPayload(i).
type Dataset struct {
	Dim     int
	Vecs    [][]float32
	Queries [][]float32
}

func unit(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// NewDataset makes n points and nq queries. clusters == 0 means uniform;
// otherwise each vector is a random centre plus noise of the same norm, so
// near neighbours have cosine around 0.5-0.8, as with sentence embeddings.
func NewDataset(n, nq, dim, clusters int, seed uint64) Dataset {
	r := rand.New(rand.NewPCG(seed, 42))
	var centres [][]float32
	for range clusters {
		centres = append(centres, unit(randVec(r, dim)))
	}
	draw := func() []float32 {
		v := unit(randVec(r, dim))
		if clusters == 0 {
			return v
		}
		c := centres[r.IntN(clusters)]
		for i := range v {
			v[i] = c[i] + 0.9*v[i]
		}
		return unit(v)
	}
	d := Dataset{Dim: dim}
	for range n {
		d.Vecs = append(d.Vecs, draw())
	}
	for range nq {
		d.Queries = append(d.Queries, draw())
	}
	return d
}

// DatasetID names point i.
func DatasetID(i int) string { return fmt.Sprintf("m-%07d", i) }

// DatasetPayload spreads points over tenants, orgs, types and users so
// that filtered searches have something to filter: 90% in tenant acme
// (10% in "other"), half in org eng, a third decisions, 20% private to
// one of three users.
func DatasetPayload(i int) vector.Payload {
	p := vector.Payload{TenantID: "acme", Type: "note"}
	if i%3 == 0 {
		p.Type = "decision"
	}
	if i%2 == 1 {
		p.OrgID = "eng"
	}
	if i%10 == 0 {
		p.TenantID = "other" // 10% in a second tenant
	}
	if i%5 == 2 {
		// 20% private, to three users in turn.
		p.UserID, p.Visibility = fmt.Sprintf("u%d", i%3), vector.VisibilityUser
	}
	return p
}

// Load upserts the dataset into idx in batches of 1000.
func (d Dataset) Load(tb testing.TB, idx vector.Index) {
	tb.Helper()
	ctx := context.Background()
	for start := 0; start < len(d.Vecs); start += 1000 {
		end := min(start+1000, len(d.Vecs))
		pts := make([]vector.Point, 0, end-start)
		for i := start; i < end; i++ {
			pts = append(pts, vector.Point{ID: DatasetID(i), Vector: d.Vecs[i], Payload: DatasetPayload(i)})
		}
		require.NoError(tb, idx.Upsert(ctx, pts))
	}
}

// Truth is the exact top k ids for q among the points f matches.
func (d Dataset) Truth(q []float32, f vector.Filter, k int) []string {
	type scored struct {
		i int
		s float32
	}
	var all []scored
	for i, v := range d.Vecs {
		if f.Match(DatasetPayload(i)) {
			all = append(all, scored{i, vek32.Dot(q, v)})
		}
	}
	slices.SortFunc(all, func(a, b scored) int {
		switch {
		case a.s > b.s:
			return -1
		case a.s < b.s:
			return 1
		}
		return a.i - b.i
	})
	out := make([]string, 0, k)
	for _, s := range all[:min(k, len(all))] {
		out = append(out, DatasetID(s.i))
	}
	return out
}

// Recall is the share of the true top k that idx finds, over all queries;
// it also fails tb if any hit is outside the filter.
func (d Dataset) Recall(tb testing.TB, idx vector.Index, f vector.Filter, k int) float64 {
	tb.Helper()
	found, total := 0, 0
	for _, q := range d.Queries {
		hits, err := idx.Search(context.Background(), q, f, k)
		require.NoError(tb, err)
		want := d.Truth(q, f, k)
		for _, h := range hits {
			require.True(tb, f.Match(h.Payload), "hit %s outside filter %+v", h.ID, f)
			if slices.Contains(want, h.ID) {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total)
}

// Bench measures idx.Search under f (k = 10, the queries in turn) for b.N
// searches and reports p50_ms, p95_ms and p99_ms, and R@10 (Recall, taken
// before the timer starts).
func (d Dataset) Bench(b *testing.B, idx vector.Index, f vector.Filter) {
	rec := d.Recall(b, idx, f, 10)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		t := time.Now()
		_, err := idx.Search(ctx, d.Queries[i%len(d.Queries)], f, 10)
		lat = append(lat, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	stats.Report(b, lat)
	b.ReportMetric(rec, "R@10")
}
