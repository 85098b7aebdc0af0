// Package indextest is the conformance suite every vector.Index backend
// must pass: a backend is done when Run passes against it, not when it has
// tests of its own.
//
// The scope fixture used by the inheritance test, one tenant "t":
//
//	t ─┬─ tw              (org "",  repo "")    tenant-wide
//	   ├─ o1 ─┬─ o1w      (org o1,  repo "")    org-wide
//	   │      ├─ o1r1     (org o1,  repo r1)
//	   │      └─ o1r2     (org o1,  repo r2)
//	   └─ o2 ─┬─ o2w      (org o2,  repo "")
//	          └─ o2r3     (org o2,  repo r3)
//
// A filter without Subscopes sees its own scope and the ones above it: {o1,
// r1} sees tw, o1w, o1r1; {o1} sees tw, o1w; {} sees tw alone. With
// Subscopes an empty org or repo in the filter means any: {o1} sees tw and
// all of o1; {} sees everything; {"", r1} sees tw, o1w, o1r1, o2w.
//
// The users fixture of the access test (scope t/o1/r1 throughout):
//
//	id        owner  visibility
//	u1-user   u1     user        private to u1
//	u1-sess   u1     session     private to u1
//	u1-proj   u1     project     every reader
//	u2-user   u2     user        private to u2
//	u2-glob   u2     global      every reader
//	nobody    ""     user        no owner: every reader
//
// u1 sees u1-*, u2-glob and nobody; u2 sees u2-*, u1-proj and nobody; a
// reader with AllUsers sees all six.
package indextest

import (
	"context"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
)

// Dim is the dimensions of every index the suite opens.
const Dim = 32

// Factory opens a fresh, empty index of dim dimensions for one test and
// registers its cleanup with t.
type Factory func(t *testing.T, dim int) vector.Index

// Config carries the few honest differences between backends.
type Config struct {
	// Reopen closes idx and opens it again on the same storage. Nil skips
	// the durability test (a backend without local storage, e.g. a server,
	// has nothing to reopen).
	Reopen func(t *testing.T, idx vector.Index) vector.Index
	// ScoreTolerance is the allowed difference between a backend's score
	// and the exact cosine computed by the suite; 0 means 1e-4.
	ScoreTolerance float32
}

// Run runs the whole suite against the backend that open makes.
func Run(t *testing.T, open Factory, cfg Config) {
	if cfg.ScoreTolerance == 0 {
		cfg.ScoreTolerance = 1e-4
	}
	s := suite{open: open, cfg: cfg}
	tests := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"RoundTrip", s.roundTrip},
		{"UpsertReplaces", s.upsertReplaces},
		{"Delete", s.delete},
		{"TenantIsolation", s.tenantIsolation},
		{"ScopeInheritance", s.scopeInheritance},
		{"TypeAndTimeFilters", s.typeAndTime},
		{"TopKOrderIsExactCosine", s.topKOrder},
		{"ScoreEqualsRestrictedSearch", s.scoreEqualsRestrictedSearch},
		{"Reopen", s.reopen},
		{"ConcurrentUpserts", s.concurrentUpserts},
		{"InvalidInputRefused", s.invalidRefused},
		{"AccessRule", s.accessRule},
		{"PrivateNeighboursDoNotCrowdOut", s.privateDoNotCrowdOut},
		{"NarrowingFields", s.narrowing},
		{"ErrClosedAfterClose", s.closed},
		{"Cancellation", s.cancellation},
	}
	for _, tc := range tests {
		t.Run(tc.name, tc.run)
	}
}

type suite struct {
	open Factory
	cfg  Config
}

// t0 is the fixed creation time of fixture points.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// randVec returns a seeded Gaussian vector (not normalised: the index must
// normalise).
func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// all is the maintenance filter of a tenant: every user, every subscope.
func all(tenant string) vector.Filter {
	return vector.Filter{TenantID: tenant, AllUsers: true, Subscopes: true}
}

func point(id, tenant string, v []float32) vector.Point {
	return vector.Point{ID: id, Vector: v, Payload: vector.Payload{
		VersionID: id + "-v1", TenantID: tenant, Type: "note", CreatedAt: t0,
	}}
}

// cosine is the reference similarity the suite checks backends against.
func cosine(a, b []float32) float32 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return float32(dot / math.Sqrt(na*nb))
}

func ids(hits []vector.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// sorted returns a sorted copy of xs, never nil, so that empty results
// compare equal however they were built.
func sorted(xs []string) []string {
	out := append([]string{}, xs...)
	sort.Strings(out)
	return out
}

func (s suite) upsert(t *testing.T, idx vector.Index, pts ...vector.Point) {
	t.Helper()
	require.NoError(t, idx.Upsert(context.Background(), pts))
}

// visible returns the sorted ids the filter sees, through Search (k large),
// Count and Scan, and checks that the three agree.
func visible(t *testing.T, idx vector.Index, f vector.Filter) []string {
	t.Helper()
	ctx := context.Background()
	q := make([]float32, idx.Dimensions())
	q[0] = 1
	hits, err := idx.Search(ctx, q, f, 1000)
	require.NoError(t, err)
	n, err := idx.Count(ctx, f)
	require.NoError(t, err)
	var scanned []string
	require.NoError(t, idx.Scan(ctx, f, func(p vector.Payload) error {
		scanned = append(scanned, p.MemoryID)
		return nil
	}))
	got := sorted(ids(hits))
	assert.Equal(t, len(got), n, "Count disagrees with Search")
	assert.Equal(t, got, sorted(scanned), "Scan disagrees with Search")
	return got
}
