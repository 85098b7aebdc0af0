package neo4j

import (
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// inScope is the scope predicate on a node n with tenant_id, org_id and
// repo_id properties: same tenant, and then, when $f_sub is false,
// graph.Scope.Sees (the node's org is empty or the caller's; its repo is
// empty, or the caller's inside the caller's org), and when $f_sub is true,
// graph.Scope.Contains (the node's org and repo are empty or equal to the
// caller's, an empty caller org or repo meaning any). Reads bind it with
// readScopeParams ($f_sub is the reader's Subscopes), write checks with
// writeScopeParams ($f_sub true: a writer reaches beneath its scope; the
// engine decides whether the principal may). Parameters: $f_tenant, $f_org,
// $f_repo, $f_sub.
const inScope = `n.tenant_id = $f_tenant
  AND (n.org_id = '' OR n.org_id = $f_org OR ($f_sub AND $f_org = ''))
  AND (n.repo_id = '' OR (n.repo_id = $f_repo AND ($f_sub OR n.org_id = $f_org)) OR ($f_sub AND $f_repo = ''))`

// memoryVisible is the whole Filter as a predicate on a Memory m: every
// clause is off when its parameter is empty (or its $f_has_ flag false), so
// the text is constant and only parameters vary — and their Cypher types do
// not: Neo4j caches a plan per query text and parameter types, and planning a
// query that holds this predicate costs seconds of CPU (2-4 s for Walk's), so
// an unset time is sent as a DateTime beside a false flag rather than as
// null, and an empty list as a list of one empty string (LIST<STRING>; [] is
// LIST<ANY>); docs/graph.md, "Neo4j plan cache". The first three lines are
// the access rule (inScope's scope rule, then the user rule of graph.Reader.MayRead: a memory whose
// visibility, stored in the scope property, is user or session and that has
// an owner is read by its owner only, unless $f_all_users); the rest is the
// caller's narrowing. Approved block and quarantine edits are read from the
// blocked_channels and quarantined properties their approval sets (see
// applyEditCypher). The tenant equality comes first so the planner can use the
// memory_* indexes. Parameters: filterParams.
const memoryVisible = memoryAccess + `
  AND m.status IN $f_statuses
  AND ($f_user = '' OR m.user_id = $f_user)
  AND (NOT $f_has_types OR m.type IN $f_types)
  AND (NOT $f_has_tags OR all(t IN $f_tags WHERE t IN coalesce(m.tags, [])))
  AND (NOT $f_has_visibility OR m.scope IN $f_visibility)
  AND ($f_subject_type = '' OR m.subject_type = $f_subject_type)
  AND ($f_subject_id = '' OR m.subject_id = $f_subject_id)
  AND ($f_project = '' OR m.project_id = $f_project)
  AND ($f_session = '' OR m.session_id = $f_session)
  AND (NOT $f_has_after OR m.created_at >= $f_after)
  AND (NOT $f_has_before OR m.created_at < $f_before)
  AND (NOT $f_has_valid_at OR ((m.valid_from IS NULL OR m.valid_from <= $f_valid_at)
       AND (m.valid_to IS NULL OR m.valid_to > $f_valid_at)))
  AND (NOT $f_has_entity_types OR EXISTS {
       MATCH (m)-[:MENTIONS]->(fe:Entity) WHERE fe.type IN $f_entity_types })
  AND ($f_channel = '' OR NOT $f_channel IN coalesce(m.blocked_channels, []))
  AND ($f_quarantined OR m.quarantined IS NULL OR NOT m.quarantined)`

// memoryAccess is the access rule alone (scope and user, no narrowing) on a
// Memory m; memoryVisible begins with it. Parameters: filterParams.
const memoryAccess = `m.tenant_id = $f_tenant
  AND (m.org_id = '' OR m.org_id = $f_org OR ($f_sub AND $f_org = ''))
  AND (m.repo_id = '' OR (m.repo_id = $f_repo AND ($f_sub OR m.org_id = $f_org)) OR ($f_sub AND $f_repo = ''))
  AND ($f_all_users OR m.user_id = '' OR NOT m.scope IN ['user', 'session'] OR m.user_id = $f_reader)`

// filterParams binds the parameters of memoryVisible and inScope for f,
// merged into extra (which it returns).
func filterParams(f graph.Filter, extra map[string]any) map[string]any {
	statuses := make([]string, 0, 4)
	for _, st := range f.EffectiveStatuses() {
		statuses = append(statuses, string(st))
	}
	vis := make([]string, 0, len(f.Visibility))
	for _, v := range f.Visibility {
		vis = append(vis, string(v))
	}
	p := readScopeParams(f, extra)
	p["f_all_users"] = f.Reader.AllUsers
	p["f_reader"] = f.Reader.UserID
	p["f_statuses"] = statuses
	p["f_user"] = f.UserID
	p["f_types"], p["f_has_types"] = listParam(f.Types)
	p["f_tags"], p["f_has_tags"] = listParam(f.Tags)
	p["f_visibility"], p["f_has_visibility"] = listParam(vis)
	p["f_subject_type"] = f.SubjectType
	p["f_subject_id"] = f.SubjectID
	p["f_project"] = f.ProjectID
	p["f_session"] = f.SessionID
	p["f_after"], p["f_has_after"] = boundParam(f.CreatedAfter)
	p["f_before"], p["f_has_before"] = boundParam(f.CreatedBefore)
	p["f_valid_at"], p["f_has_valid_at"] = boundParam(f.ValidAt)
	p["f_known_at"] = timeParam(f.KnownAt)
	p["f_entity_types"], p["f_has_entity_types"] = listParam(f.EntityTypes)
	p["f_channel"] = f.Channel
	p["f_quarantined"] = f.IncludeQuarantined
	return p
}

// directFilter is f for a direct fetch by id: every status is visible except
// retracted and erased, which need f.Statuses to admit them (see graph.Store.GetMemory).
func directFilter(f graph.Filter) graph.Filter {
	sts := []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived}
	for _, st := range f.Statuses {
		if st == graph.StatusRetracted || st == graph.StatusErased {
			sts = append(sts, st)
		}
	}
	f.Statuses = sts
	return f
}

// readScopeParams binds the parameters of inScope for a read under f: the
// reader's scope rule (Sees, or Contains with Reader.Subscopes). Merged into
// extra, which it returns.
func readScopeParams(f graph.Filter, extra map[string]any) map[string]any {
	return bindScope(f.Scope, f.Reader.Subscopes, extra)
}

// writeScopeParams binds the parameters of inScope for a write check by a
// writer in scope s: s and the scopes beneath it (Contains). Whether the
// principal may write beneath its own scope (permission subscopes) is the
// engine's check.
func writeScopeParams(s graph.Scope, extra map[string]any) map[string]any {
	return bindScope(s, true, extra)
}

func bindScope(s graph.Scope, sub bool, extra map[string]any) map[string]any {
	if extra == nil {
		extra = map[string]any{}
	}
	extra["f_tenant"] = s.TenantID
	extra["f_org"] = s.OrgID
	extra["f_repo"] = s.RepoID
	extra["f_sub"] = sub
	return extra
}

// timeParam is t in UTC, or nil (Cypher null) when t is zero.
func timeParam(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

// boundParam is a filter bound for memoryVisible: t in UTC and true, or the
// Unix epoch and false when t is zero (never null: see memoryVisible).
func boundParam(t time.Time) (time.Time, bool) {
	if t.IsZero() {
		return time.Unix(0, 0).UTC(), false
	}
	return t.UTC(), true
}

// listParam is a list filter for memoryVisible: s and true, or [""] and
// false when s is empty (never []: see memoryVisible).
func listParam(s []string) ([]string, bool) {
	if len(s) == 0 {
		return []string{""}, false
	}
	return s, true
}

// idList is a list of ids or names for a statement in which "" matches
// nothing (no memory id, entity norm name or alias is empty): s, or [""]
// when s is empty, so that the parameter is a LIST<STRING> either way and
// the statement keeps one plan (see memoryVisible).
func idList(s []string) []string {
	if len(s) == 0 {
		return []string{""}
	}
	return s
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
