package neo4j

import (
	"context"
	"fmt"
	"strings"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
)

var _ graph.Relations = (*Store)(nil)

// A relation is a relationship of its type (graph.RelationTypes) from one
// Memory node to another, with id, tenant_id, org_id, repo_id, reason,
// created_by and created_at properties, so an analyst reads
// (a:Memory)-[:DEPENDS_ON]->(b:Memory) in Neo4j Browser as it is. Types
// are spliced into the query text from that closed set (types cannot be
// parameters). Lookups by id use the relation_id_* indexes (one per type).

// relationTypes is the relationship-type alternation of every relation
// type: "RELATES_TO|DEPENDS_ON|...".
func relationTypes() string {
	ts := make([]string, len(graph.RelationTypes))
	for i, t := range graph.RelationTypes {
		ts[i] = string(t)
	}
	return strings.Join(ts, "|")
}

// relationByID finds relationship n by $id through each type's index.
func relationByID() string {
	parts := make([]string, len(graph.RelationTypes))
	for i, t := range graph.RelationTypes {
		parts[i] = "MATCH ()-[n:" + string(t) + " {id: $id}]->() RETURN n"
	}
	return "CALL {\n  " + strings.Join(parts, "\n  UNION\n  ") + "\n}\n"
}

// relationRow projects relationship n.
const relationRow = `n {.*} AS r, type(n) AS type, startNode(n).id AS from, endNode(n).id AS to`

func toRelation(rec *neo4jdrv.Record) graph.Relation {
	p := rec.AsMap()
	r, _ := p["r"].(map[string]any)
	return graph.Relation{
		ID: str(r, "id"), Scope: scopeOf(r), FromID: str(p, "from"), ToID: str(p, "to"),
		Type: graph.RelationType(str(p, "type")), Reason: str(r, "reason"), CreatedBy: str(r, "created_by"),
		CreatedAt: tm(r, "created_at"),
	}
}

// relationEndsCypher locks the two memories of a new relation in the
// writer's scope (not erased) and returns the relation of that type
// between them in the same scope, if any. Uses memory_id. %s: the type.
const relationEndsCypher = `
MATCH (n:Memory {id: $from})
WHERE ` + inScope + ` AND n.status <> 'erased'
WITH n AS a
MATCH (n:Memory {id: $to})
WHERE ` + inScope + ` AND n.status <> 'erased'
WITH a, n AS b
SET a._lock = true, b._lock = true
REMOVE a._lock, b._lock
WITH a, b
OPTIONAL MATCH (a)-[n:%s]->(b)
WHERE n.org_id = $f_org AND n.repo_id = $f_repo
WITH n ORDER BY n.created_at LIMIT 1
RETURN n IS NOT NULL AS dup, CASE WHEN n IS NULL THEN null ELSE n {.*} END AS r`

// createRelationCypher writes the relationship. Uses memory_id. %s: the
// type.
const createRelationCypher = `
MATCH (a:Memory {id: $from}), (b:Memory {id: $to})
CREATE (a)-[n:%s]->(b)
SET n = $props`

// CreateRelation implements graph.Relations.
func (s *Store) CreateRelation(ctx context.Context, r graph.Relation, audit ...graph.AuditEvent) (graph.Relation, bool, error) {
	if err := r.Validate(); err != nil {
		return r, false, fmt.Errorf("neo4j: create relation: %w", err)
	}
	for i, a := range audit {
		if err := a.Validate(); err != nil {
			return r, false, fmt.Errorf("neo4j: create relation: audit %d: %w", i, err)
		}
	}
	stamp(&r.ID, &r.CreatedAt, s.now())
	type res struct {
		r       graph.Relation
		created bool
	}
	out, err := write(ctx, s, func(tx txn) (res, error) {
		params := writeScopeParams(r.Scope, map[string]any{"from": r.FromID, "to": r.ToID})
		recs, err := collect(ctx, tx, fmt.Sprintf(relationEndsCypher, r.Type), params)
		if err != nil {
			return res{}, err
		}
		if len(recs) == 0 {
			return res{}, notFound("memory", r.FromID+" or "+r.ToID)
		}
		p := recs[0].AsMap()
		if dup, _ := p["dup"].(bool); dup {
			d, _ := p["r"].(map[string]any)
			return res{r: graph.Relation{ID: str(d, "id"), Scope: scopeOf(d), FromID: r.FromID, ToID: r.ToID,
				Type: r.Type, Reason: str(d, "reason"), CreatedBy: str(d, "created_by"), CreatedAt: tm(d, "created_at")}}, nil
		}
		props := scopeProps(r.Scope, map[string]any{"id": r.ID, "reason": r.Reason, "created_by": r.CreatedBy,
			"created_at": r.CreatedAt})
		if _, err := collect(ctx, tx, fmt.Sprintf(createRelationCypher, r.Type),
			map[string]any{"from": r.FromID, "to": r.ToID, "props": props}); err != nil {
			return res{}, err
		}
		// The walk follows relations over the process's copy (relatedOver):
		// stamping one end makes the next catch-up read it, and its row
		// relinks the other end (relink).
		if err := stampKeywords(ctx, tx, kwStamps{r.Scope.TenantID: {r.FromID}}); err != nil {
			return res{}, err
		}
		return res{r: r, created: true}, appendAudit(ctx, tx, r.CreatedAt, audit)
	})
	if err != nil {
		return r, false, fmt.Errorf("neo4j: create relation: %w", err)
	}
	return out.r, out.created, nil
}

// getRelationCypher reads relation $id when the filter sees its scope and
// admits both its memories. Uses the relation_id_* indexes.
var getRelationCypher = relationByID() + `WITH n WHERE ` + inScope + `
WITH n, startNode(n) AS m WHERE ` + memoryVisible + `
WITH n, endNode(n) AS m WHERE ` + memoryVisible + `
RETURN ` + relationRow

// GetRelation implements graph.Relations.
func (s *Store) GetRelation(ctx context.Context, f graph.Filter, id string) (graph.Relation, error) {
	if err := f.Validate(); err != nil {
		return graph.Relation{}, fmt.Errorf("neo4j: get relation: %w", err)
	}
	if err := requireIDs("id", id); err != nil {
		return graph.Relation{}, fmt.Errorf("neo4j: get relation: %w", err)
	}
	r, err := read(ctx, s, func(tx txn) (graph.Relation, error) {
		recs, err := collect(ctx, tx, getRelationCypher, filterParams(directFilter(f), map[string]any{"id": id}))
		if err != nil {
			return graph.Relation{}, err
		}
		if len(recs) == 0 {
			return graph.Relation{}, notFound("relation", id)
		}
		return toRelation(recs[0]), nil
	})
	if err != nil {
		return graph.Relation{}, fmt.Errorf("neo4j: get relation: %w", err)
	}
	return r, nil
}

// relationForDeleteCypher reads relation $id with the scopes of its
// memories. Uses the relation_id_* indexes.
var relationForDeleteCypher = relationByID() + `WITH n, startNode(n) AS sa, endNode(n) AS sb
RETURN ` + relationRow + `, sa {.tenant_id, .org_id, .repo_id} AS a, sb {.tenant_id, .org_id, .repo_id} AS b`

// deleteRelationCypher deletes relation $id. %s: its type.
const deleteRelationCypher = `MATCH ()-[n:%s {id: $id}]->() DELETE n`

// DeleteRelation implements graph.Relations.
func (s *Store) DeleteRelation(ctx context.Context, sc graph.Scope, id string, audit ...graph.AuditEvent) (graph.Relation, error) {
	if err := sc.Validate(); err != nil {
		return graph.Relation{}, fmt.Errorf("neo4j: delete relation: %w", err)
	}
	if err := requireIDs("id", id); err != nil {
		return graph.Relation{}, fmt.Errorf("neo4j: delete relation: %w", err)
	}
	for i, a := range audit {
		if err := a.Validate(); err != nil {
			return graph.Relation{}, fmt.Errorf("neo4j: delete relation: audit %d: %w", i, err)
		}
	}
	r, err := write(ctx, s, func(tx txn) (graph.Relation, error) {
		recs, err := collect(ctx, tx, relationForDeleteCypher, map[string]any{"id": id})
		if err != nil {
			return graph.Relation{}, err
		}
		if len(recs) == 0 {
			return graph.Relation{}, notFound("relation", id)
		}
		r := toRelation(recs[0])
		a, _ := recs[0].AsMap()["a"].(map[string]any)
		b, _ := recs[0].AsMap()["b"].(map[string]any)
		if !sc.Contains(r.Scope) || !sc.Contains(scopeOf(a)) || !sc.Contains(scopeOf(b)) {
			return graph.Relation{}, notFound("relation", id)
		}
		if _, err := collect(ctx, tx, fmt.Sprintf(deleteRelationCypher, r.Type), map[string]any{"id": id}); err != nil {
			return graph.Relation{}, err
		}
		if err := stampKeywords(ctx, tx, kwStamps{r.Scope.TenantID: {r.FromID}}); err != nil { // as CreateRelation
			return graph.Relation{}, err
		}
		return r, appendAudit(ctx, tx, s.now().UTC(), audit)
	})
	if err != nil {
		return graph.Relation{}, fmt.Errorf("neo4j: delete relation: %w", err)
	}
	return r, nil
}

// relationsOfCypher lists, for each memory of $ids the filter admits, its
// $per newest relations the filter sees whose other end it admits. Uses
// memory_id.
var relationsOfCypher = `
UNWIND $ids AS id
MATCH (m:Memory {id: id})
WHERE ` + memoryVisible + `
CALL {
  WITH m
  WITH m AS s
  MATCH (s)-[n:` + relationTypes() + `]-(m:Memory)
  WHERE ` + inScope + ` AND ` + memoryVisible + `
  WITH n ORDER BY n.created_at DESC, n.id LIMIT $per
  RETURN collect(n) AS rels
}
UNWIND rels AS n
WITH DISTINCT n
RETURN ` + relationRow + `
ORDER BY r.created_at DESC, r.id`

// relationsOfParams binds relationsOfCypher's parameters.
func relationsOfParams(f graph.Filter, ids []string, perMemory int) map[string]any {
	return filterParams(f, map[string]any{"ids": ids, "per": int64(perMemory)})
}

// RelationsOf implements graph.Relations.
func (s *Store) RelationsOf(ctx context.Context, f graph.Filter, ids []string, perMemory int) ([]graph.Relation, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: relations of: %w", err)
	}
	if len(ids) > graph.MaxRelationSeeds {
		return nil, fmt.Errorf("neo4j: relations of: %w", &graph.FieldError{Field: "ids",
			Message: fmt.Sprintf("lists %d memories, more than %d", len(ids), graph.MaxRelationSeeds)})
	}
	for _, id := range ids {
		if err := requireIDs("ids", id); err != nil {
			return nil, fmt.Errorf("neo4j: relations of: %w", err)
		}
	}
	if len(ids) == 0 || perMemory <= 0 {
		return nil, nil
	}
	out, err := read(ctx, s, func(tx txn) ([]graph.Relation, error) {
		recs, err := collect(ctx, tx, relationsOfCypher, relationsOfParams(f, ids, perMemory))
		if err != nil {
			return nil, err
		}
		out := make([]graph.Relation, 0, len(recs))
		for _, rec := range recs {
			out = append(out, toRelation(rec))
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: relations of: %w", err)
	}
	return out, nil
}

// eraseRelationsCypher deletes every relation of the memories $ids (an
// erase). Uses memory_id.
var eraseRelationsCypher = `
UNWIND $ids AS id
MATCH (:Memory {id: id})-[n:` + relationTypes() + `]-(:Memory)
WITH DISTINCT n
DELETE n`
