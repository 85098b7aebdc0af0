package local_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/viterin/vek/vek32"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// dataset is a deterministic set of unit vectors: clustered like text
// embeddings (points scattered around a few hundred topic centres) or
// uniform on the sphere (the hard case for a graph index).
type dataset struct {
	dim     int
	vecs    [][]float32
	queries [][]float32
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

func gauss(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// newDataset makes n points and nq queries. clusters == 0 means uniform;
// otherwise each vector is a random centre plus noise of the same norm, so
// near neighbours have cosine around 0.5-0.8, as with sentence embeddings.
func newDataset(n, nq, dim, clusters int, seed uint64) dataset {
	r := rand.New(rand.NewPCG(seed, 42))
	var centres [][]float32
	for range clusters {
		centres = append(centres, unit(gauss(r, dim)))
	}
	draw := func() []float32 {
		v := unit(gauss(r, dim))
		if clusters == 0 {
			return v
		}
		c := centres[r.IntN(clusters)]
		for i := range v {
			v[i] = c[i] + 0.9*v[i]
		}
		return unit(v)
	}
	d := dataset{dim: dim}
	for range n {
		d.vecs = append(d.vecs, draw())
	}
	for range nq {
		d.queries = append(d.queries, draw())
	}
	return d
}

// id names point i; tenantOf spreads points over tenants and orgs so that
// filtered searches have something to filter.
func id(i int) string { return fmt.Sprintf("m-%07d", i) }

func payload(i int) vector.Payload {
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

// load upserts the dataset in batches of 1000.
func load(tb testing.TB, idx *local.Index, d dataset) {
	tb.Helper()
	ctx := context.Background()
	for start := 0; start < len(d.vecs); start += 1000 {
		end := min(start+1000, len(d.vecs))
		pts := make([]vector.Point, 0, end-start)
		for i := start; i < end; i++ {
			pts = append(pts, vector.Point{ID: id(i), Vector: d.vecs[i], Payload: payload(i)})
		}
		require.NoError(tb, idx.Upsert(ctx, pts))
	}
}

// truth is the exact top k ids for q among points f matches.
func truth(d dataset, q []float32, f vector.Filter, k int) []string {
	type scored struct {
		i int
		s float32
	}
	var all []scored
	for i, v := range d.vecs {
		if f.Match(payload(i)) {
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
		out = append(out, id(s.i))
	}
	return out
}

// recall is the share of the true top k found, over all queries; it also
// fails tb if any hit is outside the filter.
func recall(tb testing.TB, idx *local.Index, d dataset, f vector.Filter, k int) float64 {
	tb.Helper()
	found, total := 0, 0
	for _, q := range d.queries {
		hits, err := idx.Search(context.Background(), q, f, k)
		require.NoError(tb, err)
		want := truth(d, q, f, k)
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
