package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
)

var _ graph.Proposals = (*Store)(nil)

const insertProposal = `INSERT INTO proposals (id, tenant_id, org_id, repo_id, memory_id, title, content, status,
	proposed_by, target_version_id, rebased_to_id, rebased_to_version_id, accepted_version_id, rejected_decision_id,
	created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

const proposalCols = `p.id, p.tenant_id, p.org_id, p.repo_id, p.memory_id, p.title, p.content, p.status,
	p.proposed_by, p.target_version_id, p.rebased_to_id, p.rebased_to_version_id, p.accepted_version_id,
	p.rejected_decision_id, p.created_at`

func scanProposal(sc scanner, p *graph.Proposal) (graph.Scope, error) {
	var (
		status  string
		created int64
	)
	err := sc.Scan(&p.ID, &p.Scope.TenantID, &p.Scope.OrgID, &p.Scope.RepoID, &p.MemoryID, &p.Title, &p.Content,
		&status, &p.ProposedBy, &p.TargetVersionID, &p.RebasedToID, &p.RebasedToVersionID, &p.AcceptedVersionID,
		&p.RejectedDecisionID, &created)
	p.Status, p.CreatedAt = graph.ProposalStatus(status), fromNanos(created)
	return p.Scope, err
}

// CreateProposal implements graph.Store.
func (s *Store) CreateProposal(ctx context.Context, p graph.Proposal, audit ...graph.AuditEvent) (graph.Proposal, error) {
	if err := p.Validate(); err != nil {
		return p, fmt.Errorf("create proposal: %w", err)
	}
	err := s.write(ctx, func(t *tx) error {
		if err := t.insertProposal(&p); err != nil {
			return err
		}
		return t.appendAudits(audit)
	})
	if err != nil {
		return p, fmt.Errorf("create proposal: %w", err)
	}
	return p, nil
}

// insertProposal writes p (id, time and status defaulted); a proposal
// naming a memory must target one of its versions, in p's reach.
func (t *tx) insertProposal(p *graph.Proposal) error {
	p.ID, p.CreatedAt = orNewID(p.ID), orNow(p.CreatedAt, t.now)
	if p.Status == "" {
		p.Status = graph.ProposalOpen
	}
	if p.MemoryID != "" {
		ref, err := t.memoryRef(p.Scope, p.MemoryID)
		if err != nil {
			return err
		}
		var n int
		err = t.queryRow(`SELECT count(*) FROM versions WHERE id = ? AND memory_rid = ?`, p.TargetVersionID, ref.rid).Scan(&n)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("target_version_id: %s is not a version of memory %s: %w", p.TargetVersionID, p.MemoryID, graph.ErrInvalid)
		}
	}
	_, err := t.exec(insertProposal, append(append([]any{p.ID}, scopeArgs(p.Scope)...), p.MemoryID, p.Title,
		p.Content, string(p.Status), p.ProposedBy, p.TargetVersionID, p.RebasedToID, p.RebasedToVersionID,
		p.AcceptedVersionID, p.RejectedDecisionID, nanos(p.CreatedAt))...)
	return err
}

// GetProposal implements graph.Store.
func (s *Store) GetProposal(ctx context.Context, f graph.Filter, id string) (graph.Proposal, error) {
	var p graph.Proposal
	err := s.getOne(ctx, f, "proposal", `SELECT `+proposalCols+` FROM proposals p WHERE p.id = ?`, id,
		func(sc scanner) (graph.Scope, error) { return scanProposal(sc, &p) })
	return p, err
}

// Proposals about a memory private to another user are left out (the
// user rule, pushed into the query). Relies on proposals_tenant or
// proposals_memory.
const listProposals = `SELECT ` + proposalCols + ` FROM proposals p WHERE %s
ORDER BY p.created_at DESC, p.rid DESC LIMIT ?`

const proposalOfReadable = `NOT EXISTS (SELECT 1 FROM memories m WHERE m.id = p.memory_id AND m.user_id <> ''
	AND m.visibility IN ('user', 'session') AND m.user_id <> ?)`

// ListProposals implements graph.Proposals.
func (s *Store) ListProposals(ctx context.Context, f graph.Filter, q graph.ProposalQuery) ([]graph.Proposal, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list proposals: %w", err)
	}
	if err := q.Validate(); err != nil {
		return nil, fmt.Errorf("list proposals: %w", err)
	}
	w := &where{}
	w.readScope("p", f)
	if q.MemoryID != "" {
		w.add("p.memory_id = ?", q.MemoryID)
	}
	if q.Status != "" {
		w.add("p.status = ?", string(q.Status))
	}
	if !f.Reader.AllUsers {
		w.add(proposalOfReadable, f.Reader.UserID)
	}
	out, err := queryAll(ctx, s, scanProposal, fmt.Sprintf(listProposals, w.sql()), append(w.args, q.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("list proposals: %w", err)
	}
	return out, nil
}

// openProposal loads proposal id for a state change by writer scope sc: it
// must be in sc's reach (else ErrNotFound) and open (else ErrConflict).
func (t *tx) openProposal(sc graph.Scope, id string) (graph.Proposal, int64, error) {
	var (
		p   graph.Proposal
		rid int64
	)
	_, err := scanProposal(withRID{t.queryRow(`SELECT p.rid, `+proposalCols+` FROM proposals p WHERE p.id = ?`, id), &rid}, &p)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !sc.Contains(p.Scope)) {
		return p, 0, fmt.Errorf("proposal %s: %w", id, graph.ErrNotFound)
	}
	if err != nil {
		return p, 0, err
	}
	if p.Status != graph.ProposalOpen {
		return p, 0, fmt.Errorf("proposal %s is %s, not open: %w", id, p.Status, graph.ErrConflict)
	}
	if p.MemoryID == "" {
		return p, 0, fmt.Errorf("proposal %s names no memory: %w", id, graph.ErrConflict)
	}
	return p, rid, nil
}

// withRID scans a row's rid ahead of the columns another scan reads.
type withRID struct {
	sc  scanner
	rid *int64
}

func (w withRID) Scan(dest ...any) error { return w.sc.Scan(append([]any{w.rid}, dest...)...) }

// currentOf loads p's memory for a change and its current version id; a
// memory no longer active is ErrConflict.
func (t *tx) currentOf(p graph.Proposal) (memRef, string, error) {
	ref, err := t.memoryRef(p.Scope, p.MemoryID)
	if err != nil {
		return ref, "", err
	}
	if ref.status != graph.StatusActive {
		return ref, "", fmt.Errorf("memory %s is %s: %w", p.MemoryID, ref.status, graph.ErrConflict)
	}
	var cur string
	err = t.queryRow(`SELECT current_version_id FROM memories WHERE rid = ?`, ref.rid).Scan(&cur)
	return ref, cur, err
}

// AcceptProposal implements graph.Proposals.
func (s *Store) AcceptProposal(ctx context.Context, sc graph.Scope, id string, in graph.VersionInput) (graph.Proposal, graph.Version, error) {
	if err := sc.Validate(); err != nil {
		return graph.Proposal{}, graph.Version{}, fmt.Errorf("accept proposal: %w", err)
	}
	if err := checkIDs("id", []string{id}); err != nil {
		return graph.Proposal{}, graph.Version{}, fmt.Errorf("accept proposal: %w", err)
	}
	if err := in.Validate(); err != nil {
		return graph.Proposal{}, graph.Version{}, fmt.Errorf("accept proposal: %w", err)
	}
	in.Entities = cloneRefs(in.Entities)
	in.Chunks = slices.Clone(in.Chunks)
	for j := range in.Chunks {
		in.Chunks[j].Entities = cloneRefs(in.Chunks[j].Entities)
	}
	in.Normalize()
	var (
		p graph.Proposal
		v graph.Version
	)
	err := s.write(ctx, func(t *tx) error {
		var (
			rid int64
			err error
		)
		if p, rid, err = t.openProposal(sc, id); err != nil {
			return err
		}
		ref, cur, err := t.currentOf(p)
		if err != nil {
			return err
		}
		if cur != p.TargetVersionID {
			return fmt.Errorf("%s: %w", graph.StaleProposal(id, p.TargetVersionID, cur), graph.ErrConflict)
		}
		if v, err = t.addVersion(ref, ref.versions+1, in); err != nil {
			return err
		}
		if err := t.appendAudits(graph.AboutMemory(in.Audit, p.MemoryID)); err != nil {
			return err
		}
		p.Status, p.AcceptedVersionID = graph.ProposalAccepted, v.ID
		_, err = t.exec(`UPDATE proposals SET status = ?, accepted_version_id = ? WHERE rid = ?`, string(p.Status), v.ID, rid)
		return err
	})
	if err != nil {
		return graph.Proposal{}, graph.Version{}, fmt.Errorf("accept proposal %s: %w", id, err)
	}
	return p, v, nil
}

// RejectProposal implements graph.Proposals.
func (s *Store) RejectProposal(ctx context.Context, sc graph.Scope, id string, d graph.Decision, audit ...graph.AuditEvent) (graph.Proposal, graph.Decision, error) {
	if err := sc.Validate(); err != nil {
		return graph.Proposal{}, d, fmt.Errorf("reject proposal: %w", err)
	}
	if err := checkIDs("id", []string{id}); err != nil {
		return graph.Proposal{}, d, fmt.Errorf("reject proposal: %w", err)
	}
	if err := d.Validate(); err != nil {
		return graph.Proposal{}, d, fmt.Errorf("reject proposal: %w", err)
	}
	var p graph.Proposal
	err := s.write(ctx, func(t *tx) error {
		var (
			rid int64
			err error
		)
		if p, rid, err = t.openProposal(sc, id); err != nil {
			return err
		}
		d.ID, d.CreatedAt = orNewID(d.ID), orNow(d.CreatedAt, t.now)
		if _, err := t.exec(insertDecision, append(append([]any{d.ID}, scopeArgs(d.Scope)...), d.Kind, d.Outcome,
			d.Rule, d.Reason, d.DecidedBy, nanos(d.CreatedAt))...); err != nil {
			return err
		}
		if err := t.appendAudits(audit); err != nil {
			return err
		}
		p.Status, p.RejectedDecisionID = graph.ProposalRejected, d.ID
		_, err = t.exec(`UPDATE proposals SET status = ?, rejected_decision_id = ? WHERE rid = ?`, string(p.Status), d.ID, rid)
		return err
	})
	if err != nil {
		return graph.Proposal{}, d, fmt.Errorf("reject proposal %s: %w", id, err)
	}
	return p, d, nil
}

// RebaseProposal implements graph.Proposals.
func (s *Store) RebaseProposal(ctx context.Context, sc graph.Scope, id string, next graph.Proposal, audit ...graph.AuditEvent) (graph.Proposal, error) {
	if err := sc.Validate(); err != nil {
		return next, fmt.Errorf("rebase proposal: %w", err)
	}
	if err := checkIDs("id", []string{id}); err != nil {
		return next, fmt.Errorf("rebase proposal: %w", err)
	}
	next.Status = graph.ProposalOpen
	if err := next.Validate(); err != nil {
		return next, fmt.Errorf("rebase proposal: %w", err)
	}
	err := s.write(ctx, func(t *tx) error {
		old, rid, err := t.openProposal(sc, id)
		if err != nil {
			return err
		}
		_, cur, err := t.currentOf(old)
		if err != nil {
			return err
		}
		switch {
		case old.TargetVersionID == cur:
			return fmt.Errorf("proposal %s already targets the current version %s: nothing to rebase: %w", id, cur, graph.ErrConflict)
		case next.MemoryID != old.MemoryID || next.TargetVersionID != cur:
			return fmt.Errorf("a rebase of %s targets memory %s at its current version %s: %w", id, old.MemoryID, cur, graph.ErrConflict)
		}
		if err := t.insertProposal(&next); err != nil {
			return err
		}
		if err := t.appendAudits(audit); err != nil {
			return err
		}
		_, err = t.exec(`UPDATE proposals SET status = ?, rebased_to_id = ?, rebased_to_version_id = ? WHERE rid = ?`,
			string(graph.ProposalRebased), next.ID, cur, rid)
		return err
	})
	if err != nil {
		return next, fmt.Errorf("rebase proposal %s: %w", id, err)
	}
	return next, nil
}

// The current version of every active memory of one exact scope, for a
// promote's snapshot. Relies on memories' tenant index.
const snapshotVersions = `SELECT current_version_id FROM memories
WHERE tenant_id = ? AND org_id = ? AND repo_id = ? AND status = 'active' AND current_version_id <> ''
ORDER BY rid`

// Which of the given versions lie in a writer's reach (through their
// memory).
const versionsInReach = `SELECT v.id FROM versions v JOIN memories m ON m.rid = v.memory_rid
WHERE v.id IN (SELECT value FROM json_each(?)) AND %s`

// PromoteBaseline implements graph.Proposals.
func (s *Store) PromoteBaseline(ctx context.Context, b graph.Baseline, audit ...graph.AuditEvent) (graph.Baseline, error) {
	if err := b.Validate(); err != nil {
		return b, fmt.Errorf("promote baseline: %w", err)
	}
	if b.Scope.RepoID == "" {
		return b, fmt.Errorf("promote baseline: %w", &graph.FieldError{Field: "scope.repo_id", Message: "a baseline is published per repository"})
	}
	b.VersionIDs = dedupeIDs(b.VersionIDs)
	err := s.write(ctx, func(t *tx) error {
		var err error
		if len(b.VersionIDs) == 0 {
			b.VersionIDs, err = t.strings(snapshotVersions, scopeArgs(b.Scope)...)
		} else {
			w := &where{}
			w.writeScope("m", b.Scope)
			var found []string
			found, err = t.strings(fmt.Sprintf(versionsInReach, w.sql()), append([]any{jsonList(b.VersionIDs)}, w.args...)...)
			for _, id := range b.VersionIDs {
				if err == nil && !slices.Contains(found, id) {
					err = fmt.Errorf("version %s: %w", id, graph.ErrNotFound)
				}
			}
		}
		if err != nil {
			return err
		}
		if len(b.VersionIDs) == 0 {
			return &graph.FieldError{Field: "version_ids", Message: "the repository has no active memory to publish"}
		}
		b.ID, b.CreatedAt = orNewID(b.ID), orNow(b.CreatedAt, t.now)
		if _, err := t.exec(insertBaseline, append(append([]any{b.ID}, scopeArgs(b.Scope)...), b.Name,
			jsonList(b.VersionIDs), b.PublishedBy, nanos(b.CreatedAt))...); err != nil {
			return err
		}
		return t.appendAudits(audit)
	})
	if err != nil {
		return b, fmt.Errorf("promote baseline: %w", err)
	}
	return b, nil
}

// strings runs a one-column query in the transaction.
func (t *tx) strings(query string, args ...any) ([]string, error) {
	rows, err := t.QueryContext(t.ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func dedupeIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// The newest baseline of each repository, among those promoted by ?
// (nanoseconds; the largest integer when not reading as known at a time).
// Relies on baselines_repo.
const publishedBaselines = `SELECT ` + baselineCols + ` FROM baselines b WHERE %s AND b.created_at <= ?
AND NOT EXISTS (SELECT 1 FROM baselines n WHERE n.tenant_id = b.tenant_id AND n.org_id = b.org_id
	AND n.repo_id = b.repo_id AND n.created_at <= ?
	AND (n.created_at > b.created_at OR (n.created_at = b.created_at AND n.rid > b.rid)))
ORDER BY b.created_at DESC, b.rid DESC`

// PublishedBaselines implements graph.Proposals. With f.KnownAt it returns
// what was published then: the newest baseline promoted by that instant.
func (s *Store) PublishedBaselines(ctx context.Context, f graph.Filter) ([]graph.Baseline, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("published baselines: %w", err)
	}
	w := &where{}
	w.readScope("b", f)
	known := int64(math.MaxInt64)
	if !f.KnownAt.IsZero() {
		known = nanos(f.KnownAt)
	}
	return s.baselines(ctx, fmt.Sprintf(publishedBaselines, w.sql()), append(w.args, known, known)...)
}

// ListBaselines implements graph.Proposals.
func (s *Store) ListBaselines(ctx context.Context, f graph.Filter, limit int) ([]graph.Baseline, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("list baselines: %w", err)
	}
	if err := graph.CheckListLimit(limit); err != nil {
		return nil, fmt.Errorf("list baselines: %w", err)
	}
	w := &where{}
	w.readScope("b", f)
	return s.baselines(ctx, `SELECT `+baselineCols+` FROM baselines b WHERE `+w.sql()+`
ORDER BY b.created_at DESC, b.rid DESC LIMIT ?`, append(w.args, limit)...)
}

func (s *Store) baselines(ctx context.Context, query string, args ...any) ([]graph.Baseline, error) {
	out, err := queryAll(ctx, s, scanBaseline, query, args...)
	if err != nil {
		return nil, fmt.Errorf("baselines: %w", err)
	}
	return out, nil
}

// queryAll runs a read query and scans every row with scan.
func queryAll[T any](ctx context.Context, s *Store, scan func(scanner, *T) (graph.Scope, error), query string, args ...any) ([]T, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		var v T
		if _, err := scan(rows, &v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
