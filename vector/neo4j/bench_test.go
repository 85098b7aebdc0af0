package neo4j_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/indextest"
	"github.com/mnemo-dev/mnemo/vector/local"
	vecneo4j "github.com/mnemo-dev/mnemo/vector/neo4j"
)

// BenchmarkSearch compares, in one run on one dataset (indextest.Dataset:
// 384-d clustered unit vectors, seed 7, 100 queries, k=10), the embedded
// index (vector/local, defaults) with this backend's default (past the
// exact threshold: the vector index, filter, exact rescoring) and, up to
// exactUpTo points, its exact scan (ExactThreshold above n), under two
// filters: the tenant with every user (90% of the points) and a plain
// reader in org eng (the private points of two other users hidden: 78%).
//
//	NEO4J_URI=bolt://127.0.0.1:7707 go test ./vector/neo4j -run '^$' -bench Search -benchtime 100x -timeout 60m
//
// Each leaf reports p50_ms, p95_ms and p99_ms per search, R@10 against
// exact search over the 100 queries, and build-s, the time to upsert the
// set in batches of 1000 (for neo4j-exact, which shares neo4j's nodes, 0).
func BenchmarkSearch(b *testing.B) {
	base := server(b)
	filters := []struct {
		name string
		f    vector.Filter
	}{
		{"tenant", vector.Filter{TenantID: "acme", AllUsers: true, Subscopes: true}},
		{"reader", vector.Filter{TenantID: "acme", OrgID: "eng", ReaderUserID: "u0"}},
	}
	for _, n := range []int{10_000, 50_000} {
		b.Run(fmt.Sprintf("n=%dk", n/1000), func(b *testing.B) {
			d := indextest.NewDataset(n, 100, 384, 1000, 7)
			indexes := open(b, base, d)
			for _, f := range filters {
				for _, ix := range indexes {
					b.Run(f.name+"/"+ix.name, func(b *testing.B) {
						d.Bench(b, ix.idx, f.f)
						b.ReportMetric(ix.build.Seconds(), "build-s")
					})
				}
			}
		})
	}
}

// exactUpTo is the largest set the forced exact scan is measured on (it
// takes seconds per search past it on a loaded machine).
const exactUpTo = 10_000

type benchIndex struct {
	name  string
	idx   vector.Index
	build time.Duration
}

// open loads d into the embedded index and into Neo4j under a fresh label,
// and returns them with, up to exactUpTo points, a second handle on the
// Neo4j nodes that always scans exactly.
func open(b *testing.B, base vecneo4j.Config, d indextest.Dataset) []benchIndex {
	b.Helper()
	li, err := local.Open(b.TempDir(), local.Options{Dimensions: d.Dim})
	require.NoError(b, err)
	b.Cleanup(func() { li.Close() })
	start := time.Now()
	d.Load(b, li)
	localBuild := time.Since(start)

	cfg := base
	cfg.Dimensions = d.Dim
	cfg.Label = fmt.Sprintf("MnemoVectorBench%d", time.Now().UnixNano())
	dropAfter(b, cfg)
	ni, err := vecneo4j.Open(context.Background(), cfg)
	require.NoError(b, err)
	b.Cleanup(func() { ni.Close() })
	start = time.Now()
	d.Load(b, ni)
	neoBuild := time.Since(start)
	indexes := []benchIndex{{"embedded", li, localBuild}, {"neo4j", ni, neoBuild}}
	if len(d.Vecs) > exactUpTo {
		return indexes
	}
	exact := cfg
	exact.ExactThreshold = len(d.Vecs) + 1
	ne, err := vecneo4j.Open(context.Background(), exact)
	require.NoError(b, err)
	b.Cleanup(func() { ne.Close() })
	return append(indexes, benchIndex{"neo4j-exact", ne, 0})
}
