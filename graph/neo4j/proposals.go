package neo4j

import (
	"context"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

var _ graph.Proposals = (*Store)(nil)

// createProposalCypher writes a proposal and its edges to the version it
// targets and to the records it names (a rebased proposal's successor, the
// accepted version, the rejecting decision). Uses proposal_id, version_id,
// decision_id.
const createProposalCypher = `
CREATE (p:Proposal) SET p = $props
WITH p
OPTIONAL MATCH (t:Version {id: $target})
OPTIONAL MATCH (r:Proposal {id: $rebased_to})
OPTIONAL MATCH (a:Version {id: $accepted})
OPTIONAL MATCH (d:Decision {id: $rejected})
FOREACH (x IN CASE WHEN t IS NULL THEN [] ELSE [t] END |
  CREATE (p)-[:TARGETS_VERSION {target_version_id: x.id}]->(x))
FOREACH (x IN CASE WHEN r IS NULL THEN [] ELSE [r] END | CREATE (p)-[:REBASED_TO]->(x))
FOREACH (x IN CASE WHEN a IS NULL THEN [] ELSE [a] END | CREATE (p)-[:ACCEPTED_AS]->(x))
FOREACH (x IN CASE WHEN d IS NULL THEN [] ELSE [d] END | CREATE (p)-[:REJECTED_BECAUSE]->(x))`

// versionOfCypher counts the versions of memory $memory named $version.
// Uses memory_id.
const versionOfCypher = `
MATCH (n:Memory {id: $memory})-[:HAS_VERSION]->(v:Version {id: $version})
WHERE ` + inScope + `
RETURN count(v) AS n`

// CreateProposal stores a curation proposal and its audit events.
func (s *Store) CreateProposal(ctx context.Context, p graph.Proposal, audit ...graph.AuditEvent) (graph.Proposal, error) {
	if err := p.Validate(); err != nil {
		return graph.Proposal{}, fmt.Errorf("neo4j: create proposal: %w", err)
	}
	if err := validAudit(audit); err != nil {
		return graph.Proposal{}, fmt.Errorf("neo4j: create proposal: %w", err)
	}
	_, err := write(ctx, s, func(tx txn) (struct{}, error) {
		if err := s.insertProposal(ctx, tx, &p); err != nil {
			return struct{}{}, err
		}
		return struct{}{}, appendAudit(ctx, tx, p.CreatedAt, audit)
	})
	if err != nil {
		return graph.Proposal{}, fmt.Errorf("neo4j: create proposal: %w", err)
	}
	return p, nil
}

func validAudit(audit []graph.AuditEvent) error {
	for i, a := range audit {
		if err := a.Validate(); err != nil {
			return fmt.Errorf("audit %d: %w", i, err)
		}
	}
	return nil
}

// insertProposal writes p (id, time and status defaulted) in tx.
func (s *Store) insertProposal(ctx context.Context, tx txn, p *graph.Proposal) error {
	stamp(&p.ID, &p.CreatedAt, s.now())
	if p.Status == "" {
		p.Status = graph.ProposalOpen
	}
	if err := requireInScope(ctx, tx, versionsInScopeCypher, "version", p.Scope,
		p.TargetVersionID, p.RebasedToVersionID, p.AcceptedVersionID); err != nil {
		return err
	}
	if err := requireInScope(ctx, tx, decisionsInScopeCypher, "decision", p.Scope, p.RejectedDecisionID); err != nil {
		return err
	}
	if p.MemoryID != "" {
		recs, err := collect(ctx, tx, versionOfCypher, writeScopeParams(p.Scope, map[string]any{
			"memory": p.MemoryID, "version": p.TargetVersionID}))
		if err != nil {
			return err
		}
		if len(recs) == 0 || i64(recs[0].AsMap(), "n") == 0 {
			return fmt.Errorf("target_version_id: %s is not a version of memory %s: %w", p.TargetVersionID, p.MemoryID, graph.ErrInvalid)
		}
	}
	_, err := collect(ctx, tx, createProposalCypher, map[string]any{
		"props": scopeProps(p.Scope, map[string]any{
			"id": p.ID, "memory_id": p.MemoryID, "title": p.Title, "content": p.Content, "status": string(p.Status),
			"proposed_by": p.ProposedBy, "target_version_id": p.TargetVersionID, "rebased_to_id": p.RebasedToID,
			"rebased_to_version_id": p.RebasedToVersionID, "accepted_version_id": p.AcceptedVersionID,
			"rejected_decision_id": p.RejectedDecisionID, "created_at": p.CreatedAt,
		}),
		"target": p.TargetVersionID, "rebased_to": p.RebasedToID,
		"accepted": p.AcceptedVersionID, "rejected": p.RejectedDecisionID,
	})
	return err
}

func toProposal(p map[string]any) graph.Proposal {
	return graph.Proposal{
		ID: str(p, "id"), Scope: scopeOf(p), MemoryID: str(p, "memory_id"), Title: str(p, "title"),
		Content: str(p, "content"), Status: graph.ProposalStatus(str(p, "status")), ProposedBy: str(p, "proposed_by"),
		TargetVersionID: str(p, "target_version_id"), RebasedToID: str(p, "rebased_to_id"),
		RebasedToVersionID: str(p, "rebased_to_version_id"), AcceptedVersionID: str(p, "accepted_version_id"),
		RejectedDecisionID: str(p, "rejected_decision_id"), CreatedAt: tm(p, "created_at"),
	}
}

// GetProposal reads a proposal in scope.
func (s *Store) GetProposal(ctx context.Context, f graph.Filter, id string) (graph.Proposal, error) {
	p, err := s.getNode(ctx, "Proposal", f, id)
	if err != nil {
		return graph.Proposal{}, fmt.Errorf("neo4j: get proposal: %w", err)
	}
	return toProposal(p), nil
}

// listProposalsCypher lists proposals in scope, newest first, leaving out
// those about a memory private to another user (the user rule). Uses
// proposal_tenant_created.
const listProposalsCypher = `
MATCH (n:Proposal)
WHERE ` + inScope + `
  AND ($memory = '' OR n.memory_id = $memory)
  AND ($status = '' OR n.status = $status)
  AND ($all_users OR NOT EXISTS {
       MATCH (m:Memory {id: n.memory_id})
       WHERE m.user_id <> '' AND m.scope IN ['user', 'session'] AND m.user_id <> $reader })
RETURN n {.*} AS n
ORDER BY n.created_at DESC, n.id DESC
LIMIT $limit`

// ListProposals lists proposals visible under f.
func (s *Store) ListProposals(ctx context.Context, f graph.Filter, q graph.ProposalQuery) ([]graph.Proposal, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: list proposals: %w", err)
	}
	if err := q.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: list proposals: %w", err)
	}
	out, err := read(ctx, s, func(tx txn) ([]graph.Proposal, error) {
		recs, err := collect(ctx, tx, listProposalsCypher, readScopeParams(f, map[string]any{
			"memory": q.MemoryID, "status": string(q.Status), "all_users": f.Reader.AllUsers,
			"reader": f.Reader.UserID, "limit": q.Limit,
		}))
		if err != nil {
			return nil, err
		}
		var out []graph.Proposal
		for _, r := range recs {
			out = append(out, toProposal(nodeOf(r, "n")))
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: list proposals: %w", err)
	}
	return out, nil
}

// openProposalCypher locks a proposal in the writer's reach for a state
// change and returns it with its memory's status and current version.
// Uses proposal_id, memory_id.
const openProposalCypher = `
MATCH (n:Proposal {id: $id})
WHERE ` + inScope + `
SET n._lock = true REMOVE n._lock
WITH n
OPTIONAL MATCH (m:Memory {id: n.memory_id})
RETURN n {.*} AS n, m.status AS status, m.current_version_id AS current`

// openProposal loads proposal id for a state change by writer scope sc:
// in reach (else ErrNotFound) and open (else ErrConflict). It returns the
// memory's status and current version id.
func openProposal(ctx context.Context, tx txn, sc graph.Scope, id string) (graph.Proposal, graph.Status, string, error) {
	recs, err := collect(ctx, tx, openProposalCypher, writeScopeParams(sc, map[string]any{"id": id}))
	if err != nil {
		return graph.Proposal{}, "", "", err
	}
	if len(recs) == 0 {
		return graph.Proposal{}, "", "", notFound("proposal", id)
	}
	p := toProposal(nodeOf(recs[0], "n"))
	m := recs[0].AsMap()
	if p.Status != graph.ProposalOpen {
		return p, "", "", fmt.Errorf("proposal %s is %s, not open: %w", id, p.Status, graph.ErrConflict)
	}
	if p.MemoryID == "" {
		return p, "", "", fmt.Errorf("proposal %s names no memory: %w", id, graph.ErrConflict)
	}
	return p, graph.Status(str(m, "status")), str(m, "current"), nil
}

// acceptCypher marks a proposal accepted, ACCEPTED_AS its new version.
// Uses proposal_id, version_id.
const acceptCypher = `
MATCH (n:Proposal {id: $id}), (v:Version {id: $version})
SET n.status = 'accepted', n.accepted_version_id = v.id
CREATE (n)-[:ACCEPTED_AS]->(v)`

// AcceptProposal appends the proposal's version and settles it accepted.
func (s *Store) AcceptProposal(ctx context.Context, sc graph.Scope, id string, in graph.VersionInput) (graph.Proposal, graph.Version, error) {
	if err := sc.Validate(); err != nil {
		return graph.Proposal{}, graph.Version{}, fmt.Errorf("neo4j: accept proposal: %w", err)
	}
	if err := requireIDs("id", id); err != nil {
		return graph.Proposal{}, graph.Version{}, fmt.Errorf("neo4j: accept proposal: %w", err)
	}
	if err := in.Validate(); err != nil {
		return graph.Proposal{}, graph.Version{}, fmt.Errorf("neo4j: accept proposal: %w", err)
	}
	in.Normalize()
	now := s.now().UTC()
	type out struct {
		p graph.Proposal
		v graph.Version
	}
	o, err := write(ctx, s, func(tx txn) (out, error) {
		p, _, _, err := openProposal(ctx, tx, sc, id)
		if err != nil {
			return out{}, err
		}
		v, err := s.addVersion(ctx, tx, p.Scope, p.MemoryID, in, now, func(cur string) error {
			if cur != p.TargetVersionID {
				return fmt.Errorf("%s: %w", graph.StaleProposal(id, p.TargetVersionID, cur), graph.ErrConflict)
			}
			return nil
		})
		if err != nil {
			return out{}, err
		}
		if _, err := collect(ctx, tx, acceptCypher, map[string]any{"id": id, "version": v.ID}); err != nil {
			return out{}, err
		}
		p.Status, p.AcceptedVersionID = graph.ProposalAccepted, v.ID
		return out{p, v}, nil
	})
	if err != nil {
		return graph.Proposal{}, graph.Version{}, fmt.Errorf("neo4j: accept proposal %s: %w", id, err)
	}
	return o.p, o.v, nil
}

// rejectCypher marks a proposal rejected, REJECTED_BECAUSE its decision.
// Uses proposal_id, decision_id.
const rejectCypher = `
MATCH (n:Proposal {id: $id}), (d:Decision {id: $decision})
SET n.status = 'rejected', n.rejected_decision_id = d.id
CREATE (n)-[:REJECTED_BECAUSE]->(d)`

// RejectProposal records decision d and settles the proposal rejected.
func (s *Store) RejectProposal(ctx context.Context, sc graph.Scope, id string, d graph.Decision, audit ...graph.AuditEvent) (graph.Proposal, graph.Decision, error) {
	if err := sc.Validate(); err != nil {
		return graph.Proposal{}, d, fmt.Errorf("neo4j: reject proposal: %w", err)
	}
	if err := requireIDs("id", id); err != nil {
		return graph.Proposal{}, d, fmt.Errorf("neo4j: reject proposal: %w", err)
	}
	if err := d.Validate(); err != nil {
		return graph.Proposal{}, d, fmt.Errorf("neo4j: reject proposal: %w", err)
	}
	if err := validAudit(audit); err != nil {
		return graph.Proposal{}, d, fmt.Errorf("neo4j: reject proposal: %w", err)
	}
	stamp(&d.ID, &d.CreatedAt, s.now())
	p, err := write(ctx, s, func(tx txn) (graph.Proposal, error) {
		p, _, _, err := openProposal(ctx, tx, sc, id)
		if err != nil {
			return p, err
		}
		if _, err := collect(ctx, tx, createDecisionCypher, map[string]any{"props": decisionProps(d)}); err != nil {
			return p, err
		}
		if _, err := collect(ctx, tx, rejectCypher, map[string]any{"id": id, "decision": d.ID}); err != nil {
			return p, err
		}
		p.Status, p.RejectedDecisionID = graph.ProposalRejected, d.ID
		return p, appendAudit(ctx, tx, d.CreatedAt, audit)
	})
	if err != nil {
		return graph.Proposal{}, d, fmt.Errorf("neo4j: reject proposal %s: %w", id, err)
	}
	return p, d, nil
}

// rebaseCypher marks a proposal rebased, REBASED_TO its successor. Uses
// proposal_id.
const rebaseCypher = `
MATCH (o:Proposal {id: $id}), (x:Proposal {id: $next})
SET o.status = 'rebased', o.rebased_to_id = x.id, o.rebased_to_version_id = $current
CREATE (o)-[:REBASED_TO]->(x)`

// RebaseProposal replaces an open proposal by next, pinned to the current
// version.
func (s *Store) RebaseProposal(ctx context.Context, sc graph.Scope, id string, next graph.Proposal, audit ...graph.AuditEvent) (graph.Proposal, error) {
	if err := sc.Validate(); err != nil {
		return next, fmt.Errorf("neo4j: rebase proposal: %w", err)
	}
	if err := requireIDs("id", id); err != nil {
		return next, fmt.Errorf("neo4j: rebase proposal: %w", err)
	}
	next.Status = graph.ProposalOpen
	if err := next.Validate(); err != nil {
		return next, fmt.Errorf("neo4j: rebase proposal: %w", err)
	}
	if err := validAudit(audit); err != nil {
		return next, fmt.Errorf("neo4j: rebase proposal: %w", err)
	}
	next, err := write(ctx, s, func(tx txn) (graph.Proposal, error) {
		old, status, cur, err := openProposal(ctx, tx, sc, id)
		switch {
		case err != nil:
			return next, err
		case status != graph.StatusActive:
			return next, fmt.Errorf("memory %s is %s: %w", old.MemoryID, status, graph.ErrConflict)
		case old.TargetVersionID == cur:
			return next, fmt.Errorf("proposal %s already targets the current version %s: nothing to rebase: %w", id, cur, graph.ErrConflict)
		case next.MemoryID != old.MemoryID || next.TargetVersionID != cur:
			return next, fmt.Errorf("a rebase of %s targets memory %s at its current version %s: %w", id, old.MemoryID, cur, graph.ErrConflict)
		}
		if err := s.insertProposal(ctx, tx, &next); err != nil {
			return next, err
		}
		if _, err := collect(ctx, tx, rebaseCypher, map[string]any{"id": id, "next": next.ID, "current": cur}); err != nil {
			return next, err
		}
		return next, appendAudit(ctx, tx, next.CreatedAt, audit)
	})
	if err != nil {
		return next, fmt.Errorf("neo4j: rebase proposal %s: %w", id, err)
	}
	return next, nil
}

// snapshotCypher returns the current version of every active memory of one
// exact scope. Uses memory_tenant_created.
const snapshotCypher = `
MATCH (m:Memory)
WHERE m.tenant_id = $tenant AND m.org_id = $org AND m.repo_id = $repo AND m.status = 'active'
  AND m.current_version_id IS NOT NULL
RETURN collect(m.current_version_id) AS ids`

// PromoteBaseline publishes a baseline of its repository.
func (s *Store) PromoteBaseline(ctx context.Context, b graph.Baseline, audit ...graph.AuditEvent) (graph.Baseline, error) {
	if err := b.Validate(); err != nil {
		return b, fmt.Errorf("neo4j: promote baseline: %w", err)
	}
	if b.Scope.RepoID == "" {
		return b, fmt.Errorf("neo4j: promote baseline: %w", &graph.FieldError{Field: "scope.repo_id", Message: "a baseline is published per repository"})
	}
	if err := validAudit(audit); err != nil {
		return b, fmt.Errorf("neo4j: promote baseline: %w", err)
	}
	stamp(&b.ID, &b.CreatedAt, s.now())
	b.VersionIDs = dedupe(b.VersionIDs)
	b, err := write(ctx, s, func(tx txn) (graph.Baseline, error) {
		if len(b.VersionIDs) == 0 {
			recs, err := collect(ctx, tx, snapshotCypher, map[string]any{
				"tenant": b.Scope.TenantID, "org": b.Scope.OrgID, "repo": b.Scope.RepoID})
			if err != nil {
				return b, err
			}
			if len(recs) > 0 {
				b.VersionIDs = strs(recs[0].AsMap(), "ids")
			}
		} else if err := requireInScope(ctx, tx, versionsInScopeCypher, "version", b.Scope, b.VersionIDs...); err != nil {
			return b, err
		}
		if len(b.VersionIDs) == 0 {
			return b, &graph.FieldError{Field: "version_ids", Message: "the repository has no active memory to publish"}
		}
		if _, err := collect(ctx, tx, createBaselineCypher, map[string]any{
			"props": scopeProps(b.Scope, map[string]any{
				"id": b.ID, "name": b.Name, "published_by": b.PublishedBy, "created_at": b.CreatedAt,
			}),
			"version_ids": b.VersionIDs,
		}); err != nil {
			return b, err
		}
		return b, appendAudit(ctx, tx, b.CreatedAt, audit)
	})
	if err != nil {
		return graph.Baseline{}, fmt.Errorf("neo4j: promote baseline: %w", err)
	}
	return b, nil
}

// publishedBaselinesCypher returns the newest baseline of each repository
// in scope, among those promoted by $known_at when it is set. Uses
// baseline_tenant_created.
const publishedBaselinesCypher = `
MATCH (n:Baseline) WHERE ` + inScope + ` AND ($known_at IS NULL OR n.created_at <= $known_at)
WITH n ORDER BY n.created_at DESC, n.id DESC
WITH n.tenant_id AS t, n.org_id AS o, n.repo_id AS r, collect(n)[0] AS n
RETURN ` + baselineProjection + ` AS n
ORDER BY n.created_at DESC, n.id DESC`

// listBaselinesCypher lists baselines in scope, newest first. Uses
// baseline_tenant_created.
const listBaselinesCypher = `
MATCH (n:Baseline) WHERE ` + inScope + `
RETURN ` + baselineProjection + ` AS n
ORDER BY n.created_at DESC, n.id DESC
LIMIT $limit`

// PublishedBaselines returns the published baseline of every repository
// visible under f (as published at f.KnownAt when it is set).
func (s *Store) PublishedBaselines(ctx context.Context, f graph.Filter) ([]graph.Baseline, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: published baselines: %w", err)
	}
	return s.baselines(ctx, publishedBaselinesCypher, readScopeParams(f, map[string]any{"known_at": timeParam(f.KnownAt)}))
}

// ListBaselines lists the baselines visible under f, newest first.
func (s *Store) ListBaselines(ctx context.Context, f graph.Filter, limit int) ([]graph.Baseline, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: list baselines: %w", err)
	}
	if err := graph.CheckListLimit(limit); err != nil {
		return nil, fmt.Errorf("neo4j: list baselines: %w", err)
	}
	return s.baselines(ctx, listBaselinesCypher, readScopeParams(f, map[string]any{"limit": limit}))
}

func (s *Store) baselines(ctx context.Context, query string, params map[string]any) ([]graph.Baseline, error) {
	out, err := read(ctx, s, func(tx txn) ([]graph.Baseline, error) {
		recs, err := collect(ctx, tx, query, params)
		if err != nil {
			return nil, err
		}
		var out []graph.Baseline
		for _, r := range recs {
			out = append(out, toBaseline(nodeOf(r, "n")))
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: baselines: %w", err)
	}
	return out, nil
}

func toBaseline(p map[string]any) graph.Baseline {
	return graph.Baseline{
		ID: str(p, "id"), Scope: scopeOf(p), Name: str(p, "name"), VersionIDs: strs(p, "version_ids"),
		PublishedBy: str(p, "published_by"), CreatedAt: tm(p, "created_at"),
	}
}
