package engine_test

import (
	"testing"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
)

// newFaultyFixture is an ingest fixture whose engine runs on a
// graphtest.Faulty wrapper of the fixture's store: faults armed on it fail
// the engine's store calls, while f.store is the real store, for setting up
// and checking without faults.
func newFaultyFixture(t testing.TB, o ingOpts) (*ingFixture, *graphtest.Faulty) {
	t.Helper()
	var fs *graphtest.Faulty
	o.wrap = func(s graph.Store) graph.Store {
		fs = graphtest.NewFaulty(s.(graphtest.Store))
		return fs
	}
	return newIngFixture(t, o), fs
}
