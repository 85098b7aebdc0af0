package neo4j_test

import (
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/neo4j"
	"github.com/mnemo-dev/mnemo/graph/neo4j/neo4jtest"
	"github.com/mnemo-dev/mnemo/graph/storetest"
)

// TestStore runs the shared conformance suite against a real Neo4j. Cases
// run one after another (the database is shared and wiped per case).
func TestStore(t *testing.T) {
	cfg := neo4jtest.Config(t)
	fresh := func(t *testing.T) graph.Store { return neo4jtest.Open(t, cfg) }
	second := func(t *testing.T, _ graph.Store) graph.Store {
		r, err := neo4j.Open(t.Context(), cfg) // its own driver and connections
		require(t, err)
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	conf := storetest.Config{TimePrecision: time.Nanosecond, OpenSecond: second}
	t.Run("Proposals", func(t *testing.T) { storetest.RunProposals(t, fresh, conf) })
	t.Run("Edits", func(t *testing.T) { storetest.RunEdits(t, fresh, conf) })
	t.Run("Capsules", func(t *testing.T) { storetest.RunCapsules(t, fresh, conf) })
	storetest.Run(t, fresh, storetest.Config{
		Reopen: func(t *testing.T, s graph.Store) graph.Store {
			require(t, s.Close())
			r, err := neo4j.Open(t.Context(), cfg)
			require(t, err)
			t.Cleanup(func() { _ = r.Close() })
			return r
		},
		OpenSecond:    second,
		TimePrecision: time.Nanosecond,
	})
}

// TestRelations runs the graph.Relations conformance cases.
func TestRelations(t *testing.T) {
	cfg := neo4jtest.Config(t)
	storetest.RunRelations(t, func(t *testing.T) graph.Store { return neo4jtest.Open(t, cfg) },
		storetest.Config{TimePrecision: time.Nanosecond})
}

func require(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
