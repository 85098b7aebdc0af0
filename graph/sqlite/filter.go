package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mnemo-dev/mnemo/graph"
)

// where accumulates SQL predicates and their parameters.
type where struct {
	parts []string
	args  []any
}

func (w *where) add(pred string, args ...any) {
	w.parts = append(w.parts, pred)
	w.args = append(w.args, args...)
}

func (w *where) sql() string {
	if len(w.parts) == 0 {
		return "1"
	}
	return strings.Join(w.parts, "\n\tAND ")
}

// key renders w as a cache key: its SQL and its arguments. Two filters
// share a key only when they are the same predicate over the same values
// (the store's caches key their entries by it).
func (w *where) key() string {
	args, _ := json.Marshal(w.args) // strings, numbers and booleans: never fails
	return w.sql() + "\x00" + string(args)
}

// writeScope adds the reach of a writer's scope s for table alias a (see
// graph.Scope.Contains): same tenant; org and repo empty or equal unless s's
// is empty (any). Writes reach beneath the writer's scope; whether a
// principal may write there is the engine's check (permission subscopes).
func (w *where) writeScope(a string, s graph.Scope) {
	w.add(a+".tenant_id = ?", s.TenantID)
	if s.OrgID != "" {
		w.add(a+".org_id IN ('', ?)", s.OrgID)
	}
	if s.RepoID != "" {
		w.add(a+".repo_id IN ('', ?)", s.RepoID)
	}
}

// readScope adds the scope half of f's access rule for table alias a:
// graph.Scope.Sees (the filter's scope and its ancestors), or
// graph.Scope.Contains when the reader has Subscopes. The tenant equality
// comes first so every tenant-leading index serves it.
func (w *where) readScope(a string, f graph.Filter) {
	s := f.Scope
	if f.Reader.Subscopes {
		w.writeScope(a, s)
		return
	}
	w.add(a+".tenant_id = ?", s.TenantID)
	if s.OrgID == "" {
		w.add(a + ".org_id = ''")
	} else {
		w.add(a+".org_id IN ('', ?)", s.OrgID)
	}
	switch {
	case s.RepoID == "":
		w.add(a + ".repo_id = ''")
	case s.OrgID == "":
		w.add(a+".repo_id IN ('', ?)", s.RepoID) // org_id = '' above: same org
	default:
		// A repo is seen only inside its own org ({T,O2,R} is not {T,O,R}).
		w.add("("+a+".repo_id = '' OR ("+a+".repo_id = ? AND "+a+".org_id = ?))", s.RepoID, s.OrgID)
	}
}

// readUser adds the user half of f's access rule on memories m (see
// graph.Reader.MayRead): a private memory (visibility user or session) with
// an owner is read only by its owner, unless the reader has AllUsers.
func (w *where) readUser(f graph.Filter) {
	if f.Reader.AllUsers {
		return
	}
	w.add("(m.user_id = '' OR m.visibility NOT IN ('user', 'session') OR m.user_id = ?)", f.Reader.UserID)
}

// inList renders "col IN (?, ?, ...)".
func (w *where) in(col string, vals []any) {
	w.add(col+" IN ("+placeholders(len(vals))+")", vals...)
}

func anys[T ~string](vals []T) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = string(v)
	}
	return out
}

// Hidden by an approved edit: retract unless retracted memories are
// admitted, quarantine unless included,
// block on the filter's channel. Relies on index edits_approved.
const hiddenByEdit = `NOT EXISTS (
	SELECT 1 FROM edits ed
	WHERE ed.memory_rid = m.rid AND ed.status = 'approved'%s
	  AND (%s%s%s))`

// Mentions an entity of one of the types. Relies on mentions_memory.
const mentionsEntityType = `EXISTS (
	SELECT 1 FROM mentions mt JOIN entities et ON et.rid = mt.entity_rid
	WHERE mt.memory_rid = m.rid AND et.type IN (%s))`

// Carries a tag. Relies on the memory_tags primary key.
const hasTag = `EXISTS (SELECT 1 FROM memory_tags tg WHERE tg.memory_rid = m.rid AND tg.tag = ?)`

// memoryFilter renders f as predicates on memories m. direct selects the
// GetMemory status rule (every status but retracted and erased unless
// listed) instead
// of the list rule (active unless listed).
func memoryFilter(f graph.Filter, direct bool) (*where, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("filter: %w", err)
	}
	w := &where{}
	w.readScope("m", f)
	w.readUser(f)
	status, travel := "m.status", !f.KnownAt.IsZero()
	if travel {
		// As known at KnownAt: created by then, with the status recorded by
		// then (docs/time.md).
		at := nanos(f.KnownAt)
		w.add("m.created_at <= ?", at)
		status = statusAsOf
		w.args = append(w.args, at)
	}
	switch {
	case len(f.Statuses) > 0:
		w.add(status+" IN ("+placeholders(len(f.Statuses))+")", anys(f.Statuses)...)
	case direct:
		w.add(status + " NOT IN ('retracted', 'erased')")
	default:
		w.add(status + " = 'active'")
	}
	if f.UserID != "" {
		w.add("m.user_id = ?", f.UserID)
	}
	if len(f.Types) > 0 {
		w.in("m.type", anys(f.Types))
	}
	for _, t := range f.Tags {
		w.add(hasTag, t)
	}
	if len(f.Visibility) > 0 {
		w.in("m.visibility", anys(f.Visibility))
	}
	for col, v := range map[string]string{"m.subject_type": f.SubjectType, "m.subject_id": f.SubjectID,
		"m.project_id": f.ProjectID, "m.session_id": f.SessionID} {
		if v != "" {
			w.add(col+" = ?", v)
		}
	}
	if len(f.EntityTypes) > 0 {
		w.add(fmt.Sprintf(mentionsEntityType, placeholders(len(f.EntityTypes))), anys(f.EntityTypes)...)
	}
	if !f.CreatedAfter.IsZero() {
		w.add("m.created_at >= ?", nanos(f.CreatedAfter))
	}
	if !f.CreatedBefore.IsZero() {
		w.add("m.created_at < ?", nanos(f.CreatedBefore))
	}
	if !f.ValidAt.IsZero() {
		at := nanos(f.ValidAt)
		w.add("(m.valid_from = 0 OR m.valid_from <= ?) AND (m.valid_to = 0 OR m.valid_to > ?)", at, at)
	}
	// A filter that admits retracted memories sees those an approved
	// retract edit hides too (Neo4j marks them retracted; see
	// graph.Store.GetMemory).
	retract, quarantine, block := "ed.kind = 'retract'", "", ""
	if slices.Contains(f.Statuses, graph.StatusRetracted) {
		retract = "0"
	}
	if !f.IncludeQuarantined {
		quarantine = " OR ed.kind = 'quarantine'"
	}
	var args []any
	if f.Channel != "" {
		block = " OR (ed.kind = 'block' AND ed.channel = ?)"
		args = append(args, f.Channel)
	}
	decided := ""
	if travel {
		decided = " AND ed.decided_at <= ?"
		args = append([]any{nanos(f.KnownAt)}, args...)
	}
	w.add(fmt.Sprintf(hiddenByEdit, decided, retract, quarantine, block), args...)
	return w, nil
}

// statusAsOf is a memory m's status as known at a time (its one parameter,
// unix nanoseconds): the newest status memory_status recorded at or before
// it; erased whatever the time, as an erasure is never undone. Relies on
// memory_status_at.
const statusAsOf = `(CASE WHEN m.status = 'erased' THEN 'erased' ELSE COALESCE((
	SELECT sl.status FROM memory_status sl WHERE sl.memory_rid = m.rid AND sl.at <= ?
	ORDER BY sl.at DESC, sl.rid DESC LIMIT 1), m.status) END)`

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// memoryCols is the column list scanMemory reads, for table alias m.
const memoryCols = `m.rid, m.id, m.tenant_id, m.org_id, m.repo_id, m.user_id, m.type, m.layer, m.sublayer, m.title,
	m.canonical_key, m.status, m.source_kind, m.importance, m.access_count, m.last_accessed, m.valid_from,
	m.valid_to, m.visibility, m.subject_type, m.subject_id, m.project_id, m.session_id, m.channel, m.tags,
	m.created_at, m.current_version_id, m.version_count, m.superseded_by`

type scanner interface{ Scan(dest ...any) error }

// scanMemory reads memoryCols (plus extra destinations) into a Memory.
func scanMemory(sc scanner, extra ...any) (graph.Memory, int64, error) {
	var (
		m                                 graph.Memory
		rid, lastAcc, vFrom, vTo, created int64
		status, source, vis, tags         string
	)
	dest := []any{&rid, &m.ID, &m.Scope.TenantID, &m.Scope.OrgID, &m.Scope.RepoID, &m.UserID, &m.Type, &m.Layer,
		&m.Sublayer, &m.Title, &m.CanonicalKey, &status, &source, &m.Importance, &m.AccessCount, &lastAcc, &vFrom,
		&vTo, &vis, &m.SubjectType, &m.SubjectID, &m.ProjectID, &m.SessionID, &m.Channel, &tags, &created,
		&m.CurrentVersionID, &m.VersionCount, &m.SupersededBy}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return m, 0, err
	}
	m.Status, m.SourceKind, m.Visibility = graph.Status(status), graph.SourceKind(source), graph.Visibility(vis)
	m.LastAccessed, m.ValidFrom, m.ValidTo, m.CreatedAt = fromNanos(lastAcc), fromNanos(vFrom), fromNanos(vTo), fromNanos(created)
	if err := json.Unmarshal([]byte(tags), &m.Tags); err != nil {
		return m, 0, fmt.Errorf("memory %s tags: %w", m.ID, err)
	}
	return m, rid, nil
}

// scanMemories reads every row of rows as a memory.
func scanMemories(rows *sql.Rows) ([]graph.Memory, error) {
	return collect(rows, func(sc scanner) (graph.Memory, error) {
		m, _, err := scanMemory(sc)
		return m, err
	})
}

// collect reads every row of rows with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// jsonList encodes ids for a json_each(?) parameter.
func jsonList(ids []string) string {
	if ids == nil {
		ids = []string{}
	}
	b, _ := json.Marshal(ids)
	return string(b)
}

func checkIDs(field string, ids []string) error {
	for _, id := range ids {
		if id == "" {
			return &graph.FieldError{Field: field, Message: "empty id"}
		}
	}
	return nil
}
