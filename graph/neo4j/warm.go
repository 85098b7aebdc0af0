package neo4j

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// Warm-up: Neo4j compiles a statement on its first use after a start, and
// compiling mnemo's read statements (each carries the whole filter,
// memoryVisible) costs seconds of CPU apiece, so a fresh Neo4j's first
// search took 28-33 s on a loaded machine, 2-4.6 s after Warm
// (docs/benchmarks.md, "Neo4j's first search after a restart").
// Warm runs every statement of readStatements once, in a read transaction,
// with parameters of the types its real call sends (built by the same
// functions: Neo4j caches a plan per statement text and parameter types)
// for a tenant that holds nothing, so each one plans, finds no row and is
// cached for the real calls.
//
// Run rather than EXPLAINed: measured on Neo4j 5.26, an EXPLAIN fills the
// logical plan cache but leaves its own entry in the executable query cache,
// and the real call still spent 170-310 ms (of 1.0-1.8 s) building its
// executable plan; a run leaves the one entry the real call uses.

// warmTenant is the tenant the warm-up reads: no tenant id of mnemo's is
// empty, so every statement matches nothing.
const warmTenant = ""

// DefaultWarmUp bounds the warm-up Open starts when Config.WarmUp is zero.
const DefaultWarmUp = 2 * time.Minute

// readStatement is one read statement of the store and the parameters its
// call sends, for filter f and sample values of the call's own types.
type readStatement struct {
	name   string
	cypher string
	params func(f graph.Filter) map[string]any
}

// readStatements are the read statements the warm-up plans: a search's
// (graph, keyword and hybrid modes, in the order a search runs them),
// then those of the other reads an agent makes first (get, list, context).
// Each names the params function its real call uses. A statement that is
// not here plans on its first use; TestWarmCoversReads checks that the
// reads it makes add no plan to Neo4j's cache after Warm.
func readStatements() []readStatement {
	ids := []string{"warm-up"}
	return []readStatement{
		{"keyword sequence", kwSeqCypher, func(f graph.Filter) map[string]any { return map[string]any{"tenant": f.Scope.TenantID} }},
		{"keyword changes", kwChangedCypher, func(f graph.Filter) map[string]any {
			return map[string]any{"tenant": f.Scope.TenantID, "after": int64(0)}
		}},
		{"keyword filter", getMemoriesCypher, func(f graph.Filter) map[string]any { return filterParams(f, map[string]any{"ids": ids}) }},
		{"kept memories", keptCypher, func(f graph.Filter) map[string]any { return filterParams(f, map[string]any{"ids": ids}) }},
		{"walk hop 1", walkHop1Cypher, func(f graph.Filter) map[string]any { return walkHop1Params(f, ids, ids) }},
		{"walk hop 2", walkHop2Cypher, func(f graph.Filter) map[string]any { return walkHop2Params(f, ids, ids) }},
		{"walk relations", walkRelatedCypher, func(f graph.Filter) map[string]any { return walkRelatedParams(f, ids) }},
		{"memories by id", memoriesByIDCypher, func(f graph.Filter) map[string]any { return memoriesByIDParams(f, ids) }},
		{"neighbours", neighbourFilterCypher, func(f graph.Filter) map[string]any { return neighbourFilterParams(f, ids, ids) }},
		{"get versions", getVersionsCypher, func(f graph.Filter) map[string]any { return byIDsParams(f, ids) }},
		{"get memories", getMemoriesCypher, func(f graph.Filter) map[string]any { return byIDsParams(f, ids) }},
		{"edits of memories", listEditsOfCypher, func(f graph.Filter) map[string]any {
			return listEditsParams(f, ids, []string{string(graph.EditApproved)})
		}},
		{"relations of", relationsOfCypher, func(f graph.Filter) map[string]any { return relationsOfParams(f, ids, 1) }},
		{"list memories", listFirstCypher, func(f graph.Filter) map[string]any { return listMemoriesParams(f, time.Time{}, "", 1) }},
		{"list memories, next page", listAfterCypher, func(f graph.Filter) map[string]any {
			return listMemoriesParams(f, time.Unix(0, 0).UTC(), "warm-up", 1)
		}},
		{"list versions", listVersionsCypher, func(f graph.Filter) map[string]any { return byIDParams(f, "warm-up") }},
		{"get chunks", getChunksCypher, func(f graph.Filter) map[string]any { return byIDParams(f, "warm-up") }},
	}
}

// Warm plans the store's read statements (see readStatements) and returns
// the names of those it planned, in order; it stops at ctx's end or the
// first failure, which it returns. Open starts it in the background (see
// Config.WarmUp); nothing waits for it, so a search that comes first plans
// its statements itself, as it would without.
func (s *Store) Warm(ctx context.Context) ([]string, error) {
	return s.warm(ctx, readStatements())
}

func (s *Store) warm(ctx context.Context, stmts []readStatement) ([]string, error) {
	f := graph.Filter{Scope: graph.Scope{TenantID: warmTenant}, Reader: graph.Reader{UserID: "warm-up"}}
	planned := make([]string, 0, len(stmts))
	for _, st := range stmts {
		_, err := read(ctx, s, func(tx txn) (struct{}, error) {
			_, err := collect(ctx, tx, st.cypher, st.params(f))
			return struct{}{}, err
		})
		if err != nil {
			return planned, fmt.Errorf("neo4j: warm-up: %s: %w", st.name, err)
		}
		planned = append(planned, st.name)
	}
	return planned, nil
}

// warmInBackground runs Warm within d and logs what it did; Close cancels
// it and waits for it.
func (s *Store) warmInBackground(d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	s.warmStop, s.warmDone = cancel, make(chan struct{})
	go func() {
		defer close(s.warmDone)
		defer cancel()
		start := time.Now()
		planned, err := s.Warm(ctx)
		took := time.Since(start).Round(time.Millisecond)
		if errors.Is(err, context.Canceled) { // Close
			s.log.Debug("neo4j: warm-up cancelled by Close", "planned", len(planned), "took", took)
			return
		}
		if err != nil {
			s.log.Warn("neo4j: warm-up stopped; the statements left plan on first use",
				"planned", len(planned), "of", len(readStatements()), "took", took, "err", err)
			return
		}
		s.log.Info("neo4j: warm-up planned the read statements", "statements", len(planned), "took", took)
	}()
}
