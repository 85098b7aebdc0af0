// Package graphtest opens the graph store that tests above the graph layer
// (engine, server) run on: the embedded SQLite store by default, or Neo4j
// when MNEMO_TEST_STORE=neo4j. `make test` runs those packages once per
// backend, so every engine and server test runs on both.
package graphtest

import (
	"context"
	"os"
	"testing"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
)

// Backend names the backend MNEMO_TEST_STORE selects: "sqlite" (default)
// or "neo4j".
func Backend() string {
	if b := os.Getenv("MNEMO_TEST_STORE"); b != "" {
		return b
	}
	return "sqlite"
}

// Store is a graph store with every capability, as both backends are:
// tests above the graph layer may write curation records directly.
type Store interface {
	graph.Store
	graph.Proposals
	graph.Edits
	graph.Capsules
	graph.Relations
}

// Open opens an empty store of the selected backend, closed when tb ends.
// For SQLite it is a fresh file under tb.TempDir(); for Neo4j, the test
// database wiped (see neo4jtest), which fails rather than skips when no
// Neo4j answers: selecting it is asking for it.
func Open(tb testing.TB) Store {
	tb.Helper()
	switch b := Backend(); b {
	case "sqlite":
		s, err := sqlite.Open(context.Background(), tb.TempDir(), sqlite.Options{})
		if err != nil {
			tb.Fatalf("graphtest: open sqlite: %v", err)
		}
		tb.Cleanup(func() { _ = s.Close() })
		return s
	case "neo4j":
		if os.Getenv("MNEMO_REQUIRE_NEO4J") == "" {
			tb.Setenv("MNEMO_REQUIRE_NEO4J", "1")
		}
		return neo4jtest.Open(tb, neo4jtest.Config(tb))
	default:
		tb.Fatalf("graphtest: MNEMO_TEST_STORE=%q: want sqlite or neo4j", b)
		return nil
	}
}

// CreateMemory writes one memory through s.CreateMemories (the store's one
// write of new memories) and returns what was created.
func CreateMemory(ctx context.Context, s graph.Store, in graph.MemoryInput) (graph.Created, error) {
	out, err := s.CreateMemories(ctx, []graph.MemoryInput{in})
	if err != nil {
		return graph.Created{}, err
	}
	return out[0], nil
}

// OpenSecond opens another client of s's data, as a second mnemo process
// would: its own connections (SQLite: the same file; Neo4j: its own driver
// on the same database, not wiped). Closed when tb ends.
func OpenSecond(tb testing.TB, s graph.Store) graph.Store {
	tb.Helper()
	switch st := s.(type) {
	case *Faulty:
		return OpenSecond(tb, st.s)
	case *sqlite.Store:
		second, err := sqlite.Open(context.Background(), st.Dir(), sqlite.Options{})
		if err != nil {
			tb.Fatalf("graphtest: open sqlite again: %v", err)
		}
		tb.Cleanup(func() { _ = second.Close() })
		return second
	case *neo4j.Store:
		second, err := neo4j.Open(context.Background(), neo4jtest.Config(tb))
		if err != nil {
			tb.Fatalf("graphtest: open neo4j again: %v", err)
		}
		tb.Cleanup(func() { _ = second.Close() })
		return second
	default:
		tb.Fatalf("graphtest: OpenSecond: unknown store %T", s)
		return nil
	}
}
