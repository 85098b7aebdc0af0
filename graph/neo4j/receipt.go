package neo4j

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

// createReceiptCypher writes a context receipt. Citations are kept as one
// JSON property (Neo4j properties cannot hold lists of maps); they are read
// back whole for citation verification, never queried. Uses
// context_receipt_id.
const createReceiptCypher = `CREATE (r:ContextReceipt) SET r = $props`

// CreateContextReceipt stores what a read_context call returned.
func (s *Store) CreateContextReceipt(ctx context.Context, r graph.ContextReceipt) (graph.ContextReceipt, error) {
	if err := r.Validate(); err != nil {
		return graph.ContextReceipt{}, fmt.Errorf("neo4j: create context receipt: %w", err)
	}
	stamp(&r.ID, &r.CreatedAt, s.now())
	cites, err := json.Marshal(nonNilCitations(r.Citations))
	if err != nil {
		return graph.ContextReceipt{}, fmt.Errorf("neo4j: create context receipt: %w", err)
	}
	_, err = write(ctx, s, func(tx txn) (struct{}, error) {
		_, err := collect(ctx, tx, createReceiptCypher, map[string]any{"props": scopeProps(r.Scope, map[string]any{
			"id": r.ID, "name": "context " + r.ID, "principal_id": r.PrincipalID, "query": r.Query,
			"citations": string(cites), "created_at": r.CreatedAt,
		})})
		return struct{}{}, err
	})
	if err != nil {
		return graph.ContextReceipt{}, fmt.Errorf("neo4j: create context receipt: %w", err)
	}
	return r, nil
}

// GetContextReceipt reads a context receipt in scope.
func (s *Store) GetContextReceipt(ctx context.Context, f graph.Filter, id string) (graph.ContextReceipt, error) {
	p, err := s.getNode(ctx, "ContextReceipt", f, id)
	if err != nil {
		return graph.ContextReceipt{}, fmt.Errorf("neo4j: get context receipt: %w", err)
	}
	r := graph.ContextReceipt{
		ID: str(p, "id"), Scope: scopeOf(p), PrincipalID: str(p, "principal_id"), Query: str(p, "query"),
		CreatedAt: tm(p, "created_at"),
	}
	if err := json.Unmarshal([]byte(str(p, "citations")), &r.Citations); err != nil {
		return graph.ContextReceipt{}, fmt.Errorf("neo4j: get context receipt %s: citations: %w", id, err)
	}
	return r, nil
}

func nonNilCitations(c []graph.Citation) []graph.Citation {
	if c == nil {
		return []graph.Citation{}
	}
	return c
}
