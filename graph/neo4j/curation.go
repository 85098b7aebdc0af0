package neo4j

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// versionsInScopeCypher returns which of $ids are versions whose memory lies
// in the writer's scope. Uses version_id.
const versionsInScopeCypher = `
UNWIND $ids AS id
MATCH (n:Memory)-[:HAS_VERSION]->(v:Version {id: id})
WHERE ` + inScope + `
RETURN collect(DISTINCT v.id) AS found`

// memoriesInScopeCypher returns which of $ids are memories in the writer's
// scope. Uses memory_id.
const memoriesInScopeCypher = `
UNWIND $ids AS id
MATCH (n:Memory {id: id})
WHERE ` + inScope + `
RETURN collect(DISTINCT n.id) AS found`

// decisionsInScopeCypher returns which of $ids are decisions in the writer's
// scope. Uses decision_id.
const decisionsInScopeCypher = `
UNWIND $ids AS id
MATCH (n:Decision {id: id})
WHERE ` + inScope + `
RETURN collect(DISTINCT n.id) AS found`

// requireInScope fails with ErrNotFound unless every id in ids is found by
// query (one of the *InScopeCypher constants) under scope s. A curation
// record never links to another tenant's records.
func requireInScope(ctx context.Context, tx txn, query, kind string, s graph.Scope, ids ...string) error {
	var want []string
	for _, id := range ids {
		if id != "" {
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil
	}
	recs, err := collect(ctx, tx, query, writeScopeParams(s, map[string]any{"ids": dedupe(want)}))
	if err != nil {
		return err
	}
	found := map[string]bool{}
	if len(recs) > 0 {
		v, _ := recs[0].Get("found")
		for _, id := range strs(map[string]any{"x": v}, "x") {
			found[id] = true
		}
	}
	for _, id := range want {
		if !found[id] {
			return notFound(kind, id)
		}
	}
	return nil
}

// getInScopeCypher reads one node of a label by id when it lies in the
// caller's scope. The label is spliced in from a fixed list (labels cannot be
// parameters); the id and scope are parameters. Uses the label's *_id
// constraint.
func getInScopeCypher(label string) string {
	return `MATCH (n:` + label + ` {id: $id}) WHERE ` + inScope + ` RETURN n {.*} AS n`
}

// getNode reads one node of label by id within scope f.Scope.
func (s *Store) getNode(ctx context.Context, label string, f graph.Filter, id string) (map[string]any, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if err := requireIDs("id", id); err != nil {
		return nil, err
	}
	return read(ctx, s, func(tx txn) (map[string]any, error) {
		recs, err := collect(ctx, tx, getInScopeCypher(label), readScopeParams(f, map[string]any{"id": id}))
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, notFound(label, id)
		}
		return nodeOf(recs[0], "n"), nil
	})
}

func stamp(id *string, at *time.Time, now time.Time) {
	if *id == "" {
		*id = graph.NewID()
	}
	if at.IsZero() {
		*at = now
	}
	*at = at.UTC()
}

// createDecisionCypher writes a decision artifact. Uses decision_id.
const createDecisionCypher = `CREATE (d:Decision) SET d = $props`

func decisionProps(d graph.Decision) map[string]any {
	return scopeProps(d.Scope, map[string]any{
		"id": d.ID, "name": d.Kind + " " + d.Outcome, "kind": d.Kind, "outcome": d.Outcome, "rule": d.Rule,
		"reason": d.Reason, "decided_by": d.DecidedBy, "created_at": d.CreatedAt,
	})
}

// GetDecision reads a decision in scope.
func (s *Store) GetDecision(ctx context.Context, f graph.Filter, id string) (graph.Decision, error) {
	p, err := s.getNode(ctx, "Decision", f, id)
	if err != nil {
		return graph.Decision{}, fmt.Errorf("neo4j: get decision: %w", err)
	}
	return graph.Decision{
		ID: str(p, "id"), Scope: scopeOf(p), Kind: str(p, "kind"), Outcome: str(p, "outcome"),
		Rule: str(p, "rule"), Reason: str(p, "reason"), DecidedBy: str(p, "decided_by"), CreatedAt: tm(p, "created_at"),
	}, nil
}

// createBaselineCypher writes a baseline and PUBLISHES edges to its
// versions. Uses baseline_id, version_id.
const createBaselineCypher = `
CREATE (b:Baseline) SET b = $props
WITH b
UNWIND $version_ids AS vid
MATCH (v:Version {id: vid})
CREATE (b)-[:PUBLISHES]->(v)`

// baselineProjection returns a Baseline n with the versions it PUBLISHES.
const baselineProjection = `n {.*, version_ids: [(n)-[:PUBLISHES]->(v:Version) | v.id]}`

// getBaselineCypher reads a baseline in scope. Uses baseline_id.
const getBaselineCypher = `
MATCH (n:Baseline {id: $id}) WHERE ` + inScope + `
RETURN ` + baselineProjection + ` AS n`

// GetBaseline reads a baseline in scope.
func (s *Store) GetBaseline(ctx context.Context, f graph.Filter, id string) (graph.Baseline, error) {
	if err := requireIDs("id", id); err != nil {
		return graph.Baseline{}, fmt.Errorf("neo4j: get baseline: %w", err)
	}
	b, err := s.readBaseline(ctx, f, getBaselineCypher, id)
	if err != nil {
		return graph.Baseline{}, fmt.Errorf("neo4j: get baseline: %w", err)
	}
	return b, nil
}

func (s *Store) readBaseline(ctx context.Context, f graph.Filter, query, id string) (graph.Baseline, error) {
	if err := f.Validate(); err != nil {
		return graph.Baseline{}, err
	}
	return read(ctx, s, func(tx txn) (graph.Baseline, error) {
		recs, err := collect(ctx, tx, query, readScopeParams(f, map[string]any{"id": id, "known_at": timeParam(f.KnownAt)}))
		if err != nil {
			return graph.Baseline{}, err
		}
		if len(recs) == 0 {
			return graph.Baseline{}, notFound("baseline", id)
		}
		return toBaseline(nodeOf(recs[0], "n")), nil
	})
}
