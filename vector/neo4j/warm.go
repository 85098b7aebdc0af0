package neo4j

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// Warm-up: Neo4j compiles a statement on its first use after a start (or a
// new label), and the first Search on a fresh Neo4j took 0.6-0.8 s against
// 20-113 ms for the next ones (docs/benchmarks.md, "Neo4j's first search
// after a restart"). Warm runs the statements a search and a rescore send
// once, in read transactions, with parameters of the types the real calls
// send (built by the same functions: Neo4j caches a plan per statement text
// and parameter types, and filterParams keeps the types constant) for a
// tenant that holds nothing, so each plans, finds no row and is cached for
// the real calls — as graph/neo4j's Store.Warm does for the graph store.

// warmTenant is the tenant the warm-up reads: no tenant id of mnemo's is
// empty, so every statement matches nothing (and the approximate one stops
// before asking the vector index).
const warmTenant = ""

// DefaultWarmUp bounds the warm-up Open starts when Config.WarmUp is zero.
const DefaultWarmUp = time.Minute

// warmStatement is one read statement of the index and its parameters for a
// sample call.
type warmStatement struct {
	name   string
	cypher string
	params map[string]any
}

// warmStatements are the statements Warm plans, in the order a search runs
// them: the vector index first, the exact scan (a small tenant, or too few
// allowed among the index's candidates), the rescore of given ids (Score),
// and Count. TestWarmCoversSearch checks that searches under several
// filters add no plan after Warm.
func (x *Index) warmStatements() []warmStatement {
	q := make([]float32, x.cfg.Dimensions)
	q[0] = 1
	search := filterParams(vector.Filter{TenantID: warmTenant})
	search["q"] = float64s(q)
	x.searchParams(search, 1)
	score := filterParams(vector.Filter{TenantID: warmTenant})
	score["q"] = float64s(q)
	score["ids"] = []string{"warm-up"}
	return []warmStatement{
		{"search", x.q.approximate, search},
		{"exact search", x.q.exact, search},
		{"score", x.q.score, score},
		{"count", x.q.count, filterParams(vector.Filter{TenantID: warmTenant})},
	}
}

// Warm plans the index's read statements (see warmStatements) and returns
// the names of those it planned, in order; it stops at ctx's end or the
// first failure, which it returns. Open starts it in the background (see
// Config.WarmUp); nothing waits for it, so a search that comes first plans
// its statements itself, as it would without.
func (x *Index) Warm(ctx context.Context) ([]string, error) {
	stmts := x.warmStatements()
	planned := make([]string, 0, len(stmts))
	for _, st := range stmts {
		if err := x.begin(ctx); err != nil {
			return planned, err
		}
		if _, err := x.read(ctx, st.cypher, st.params); err != nil {
			return planned, fmt.Errorf("neo4j vector: warm-up: %s: %w", st.name, err)
		}
		planned = append(planned, st.name)
	}
	return planned, nil
}

// warmInBackground runs Warm within d and logs what it did; Close cancels
// it and waits for it.
func (x *Index) warmInBackground(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	x.warmStop, x.warmDone = cancel, make(chan struct{})
	go func() {
		defer close(x.warmDone)
		defer cancel()
		start := time.Now()
		planned, err := x.Warm(ctx)
		took := time.Since(start).Round(time.Millisecond)
		switch {
		case errors.Is(err, context.Canceled) || errors.Is(err, vector.ErrClosed): // Close
			x.log.Debug("neo4j vector: warm-up cancelled by Close", "planned", len(planned), "took", took)
		case err != nil:
			x.log.Warn("neo4j vector: warm-up stopped; the statements left plan on first use",
				"planned", len(planned), "took", took, "err", err)
		default:
			x.log.Info("neo4j vector: warm-up planned the search statements", "statements", len(planned), "took", took)
		}
	}()
}
