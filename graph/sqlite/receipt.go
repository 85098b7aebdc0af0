package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

const insertReceipt = `INSERT INTO context_receipts (id, tenant_id, org_id, repo_id, principal_id, query, citations,
	created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

// CreateContextReceipt implements graph.Store.
func (s *Store) CreateContextReceipt(ctx context.Context, r graph.ContextReceipt) (graph.ContextReceipt, error) {
	if err := r.Validate(); err != nil {
		return r, fmt.Errorf("create context receipt: %w", err)
	}
	cites := r.Citations
	if cites == nil {
		cites = []graph.Citation{}
	}
	b, err := json.Marshal(cites)
	if err != nil {
		return r, fmt.Errorf("create context receipt: %w", err)
	}
	err = s.writeAs(ctx, writeLog, func(t *tx) error {
		r.ID, r.CreatedAt = orNewID(r.ID), orNow(r.CreatedAt, t.now)
		_, err := t.exec(insertReceipt, append(append([]any{r.ID}, scopeArgs(r.Scope)...), r.PrincipalID, r.Query,
			string(b), nanos(r.CreatedAt))...)
		return err
	})
	if err != nil {
		return r, fmt.Errorf("create context receipt: %w", err)
	}
	return r, nil
}

const selectReceipt = `SELECT id, tenant_id, org_id, repo_id, principal_id, query, citations, created_at
FROM context_receipts WHERE id = ?`

// GetContextReceipt implements graph.Store.
func (s *Store) GetContextReceipt(ctx context.Context, f graph.Filter, id string) (graph.ContextReceipt, error) {
	var r graph.ContextReceipt
	err := s.getOne(ctx, f, "context receipt", selectReceipt, id, func(sc scanner) (graph.Scope, error) {
		var (
			cites   string
			created int64
		)
		if err := sc.Scan(&r.ID, &r.Scope.TenantID, &r.Scope.OrgID, &r.Scope.RepoID, &r.PrincipalID, &r.Query, &cites, &created); err != nil {
			return r.Scope, err
		}
		r.CreatedAt = fromNanos(created)
		return r.Scope, json.Unmarshal([]byte(cites), &r.Citations)
	})
	return r, err
}
