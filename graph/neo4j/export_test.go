package neo4j

import (
	"context"

	"github.com/mnemo-dev/mnemo/graph"
)

// WarmWith is Warm over the store's read statements and then one more,
// name with text cypher and the filter's parameters.
func (s *Store) WarmWith(ctx context.Context, name, cypher string) ([]string, error) {
	return s.warm(ctx, append(readStatements(), readStatement{name: name, cypher: cypher,
		params: func(f graph.Filter) map[string]any { return filterParams(f, nil) }}))
}

// ReadStatements is how many statements Warm plans.
func ReadStatements() int { return len(readStatements()) }
