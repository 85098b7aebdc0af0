package neo4j

import (
	"slices"
	"time"
	"unique"

	"github.com/mnemo-dev/mnemo/graph"
)

// memAttrs are the properties of a Memory that memoryVisible reads, held in
// the process beside the mention index (mentions.go) so that the walk can
// admit the memories it reaches without a statement per hop. They ride the
// keyword catch-up: every write that changes one of them (a create, a new
// version, a supersession, archive, restore, an approved retract /
// quarantine / block edit, an erasure) stamps the memory and moves the
// tenant's keyword sequence in its transaction (keyword.go), so a process
// that has caught up to the sequence a transaction reads holds them as that
// transaction sees them. Strings are interned: a tenant's memories share a
// few statuses, types, owners and projects.
type memAttrs struct {
	org, repo, user, vis string
	status, typ          string
	subjectType          string
	subjectID            string
	project, session     string
	tags                 []string
	validFrom, validTo   int64 // Unix ns; 0: none (open)
	hasFrom, hasTo       bool
	blocked              []string // approved block edits' channels
	quarantined          bool
}

// attrsOf reads memAttrs from a keyword catch-up row (kwRowProjection).
func attrsOf(p map[string]any) memAttrs {
	a := memAttrs{
		org: intern(str(p, "org_id")), repo: intern(str(p, "repo_id")), user: intern(str(p, "user_id")),
		vis: intern(str(p, "visibility")), status: intern(str(p, "status")), typ: intern(str(p, "type")),
		subjectType: intern(str(p, "subject_type")), subjectID: intern(str(p, "subject_id")),
		project: intern(str(p, "project_id")), session: intern(str(p, "session_id")),
		tags: internAll(strs(p, "tags")), blocked: internAll(strs(p, "blocked_channels")),
	}
	if t, ok := p["valid_from"].(time.Time); ok {
		a.validFrom, a.hasFrom = t.UnixNano(), true
	}
	if t, ok := p["valid_to"].(time.Time); ok {
		a.validTo, a.hasTo = t.UnixNano(), true
	}
	a.quarantined, _ = p["quarantined"].(bool)
	return a
}

func intern(s string) string { return unique.Make(s).Value() }

// internAll interns s in place (strs hands out a fresh slice).
func internAll(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	for i, x := range s {
		s[i] = intern(x)
	}
	return slices.Clip(s)
}

// admission is a graph.Filter compiled for memAttrs: admits is
// memoryVisible, clause for clause (TestAdmissionMatchesCypher holds the
// two to the same answers on real Neo4j).
type admission struct {
	f          graph.Filter
	statuses   []string
	vis        []string
	after      int64
	before     int64
	validAt    int64
	hasAfter   bool
	hasBefore  bool
	hasValidAt bool
}

// inProcess compiles f, or reports that the process cannot decide it: a
// filter on the types of the entities a memory mentions (memoryVisible's
// EXISTS clause; the index holds entities by name only), or one that admits
// erased memories (which leave the index), or a read as known at a past
// instant (Filter.KnownAt: asKnown rewrites memoryVisible to read status
// logs and edits as of then). Those walks run in Neo4j.
func inProcess(f graph.Filter) (admission, bool) {
	a := admission{f: f}
	if len(f.EntityTypes) > 0 || !f.KnownAt.IsZero() {
		return a, false
	}
	for _, st := range f.EffectiveStatuses() {
		if st == graph.StatusErased {
			return a, false
		}
		a.statuses = append(a.statuses, string(st))
	}
	for _, v := range f.Visibility {
		a.vis = append(a.vis, string(v))
	}
	a.after, a.hasAfter = nsBound(f.CreatedAfter)
	a.before, a.hasBefore = nsBound(f.CreatedBefore)
	a.validAt, a.hasValidAt = nsBound(f.ValidAt)
	return a, true
}

func nsBound(t time.Time) (int64, bool) {
	if t.IsZero() {
		return 0, false
	}
	return t.UnixNano(), true
}

// admits reports whether memoryVisible admits the memory created at (Unix
// ns) with attributes m, for a tenant the caller has already chosen.
func (a *admission) admits(at int64, m *memAttrs) bool {
	f := &a.f
	switch {
	case !a.reads(m),
		!slices.Contains(a.statuses, m.status),
		f.UserID != "" && m.user != f.UserID,
		len(f.Types) > 0 && !slices.Contains(f.Types, m.typ),
		len(a.vis) > 0 && !slices.Contains(a.vis, m.vis),
		f.SubjectType != "" && m.subjectType != f.SubjectType,
		f.SubjectID != "" && m.subjectID != f.SubjectID,
		f.ProjectID != "" && m.project != f.ProjectID,
		f.SessionID != "" && m.session != f.SessionID,
		a.hasAfter && at < a.after,
		a.hasBefore && at >= a.before,
		a.hasValidAt && m.hasFrom && m.validFrom > a.validAt,
		a.hasValidAt && m.hasTo && m.validTo <= a.validAt,
		f.Channel != "" && slices.Contains(m.blocked, f.Channel),
		!f.IncludeQuarantined && m.quarantined:
		return false
	}
	for _, t := range f.Tags {
		if !slices.Contains(m.tags, t) {
			return false
		}
	}
	return true
}

// reaches is inScope for a node of the tenant with org and repo (a
// relation's own scope).
func (a *admission) reaches(org, repo string) bool {
	f := &a.f
	return f.Scope.Reaches(graph.Scope{TenantID: f.Scope.TenantID, OrgID: org, RepoID: repo}, f.Reader.Subscopes)
}

// reads is memoryAccess alone: the access rule (scope and reader), not the
// caller's narrowing.
func (a *admission) reads(m *memAttrs) bool {
	f := &a.f
	return a.reaches(m.org, m.repo) && f.Reader.MayRead(m.user, graph.Visibility(m.vis))
}
