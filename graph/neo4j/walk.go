package neo4j

import (
	"context"
	"errors"

	"github.com/mnemo-dev/mnemo/graph"
)

// Walk implements graph.Store. Not yet on Neo4j: the next commit brings it.
func (s *Store) Walk(ctx context.Context, f graph.Filter, r graph.WalkRequest) ([]graph.Walked, error) {
	return nil, errors.New("neo4j: walk: not implemented yet")
}
