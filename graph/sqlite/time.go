package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/bm25"
)

// Reads as known at a time (graph.Filter.KnownAt; docs/time.md). The
// filter's predicates (memoryFilter) admit what existed then with the
// status it had then; asKnown then sets on each memory read the fields that
// changed since: its status, its current version and version count, and its
// successor.

// versionKnown admits a version v written by a time (its one parameter).
// Version 1 is written in the transaction that creates its memory, a
// moment after the engine stamped the memory's created_at: it exists as
// soon as its memory does.
const versionKnown = `(v.created_at <= ? OR v.number = 1)`

// versionsKnown admits, under f.KnownAt, only the versions v written by
// then.
func (w *where) versionsKnown(f graph.Filter) {
	if !f.KnownAt.IsZero() {
		w.add(versionKnown, nanos(f.KnownAt))
	}
}

// The fields of memories as known at a time. statusAsOf takes the first
// parameter, the versions the next two. Relies on the unique index on
// memories.id, memory_status_at and the versions (memory_rid, number) key.
const selectAsKnown = `SELECT m.id, ` + statusAsOf + `,
	COALESCE((SELECT v.id FROM versions v WHERE v.memory_rid = m.rid AND ` + versionKnown + `
	          ORDER BY v.number DESC LIMIT 1), ''),
	(SELECT count(*) FROM versions v WHERE v.memory_rid = m.rid AND ` + versionKnown + `)
FROM json_each(?) j CROSS JOIN memories m ON m.id = j.value`

// asKnown sets the status, current version, version count and successor of
// each of ms to those known at f.KnownAt; nothing when it is zero.
func asKnown(ctx context.Context, q queryer, f graph.Filter, ms []graph.Memory) error {
	if f.KnownAt.IsZero() || len(ms) == 0 {
		return nil
	}
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	at := nanos(f.KnownAt)
	rows, err := q.QueryContext(ctx, selectAsKnown, at, at, at, jsonList(ids))
	if err != nil {
		return fmt.Errorf("as known at: %w", err)
	}
	type known struct {
		status, version string
		count           int
	}
	byID := make(map[string]known, len(ms))
	err = func() error {
		defer rows.Close()
		for rows.Next() {
			var (
				id string
				k  known
			)
			if err := rows.Scan(&id, &k.status, &k.version, &k.count); err != nil {
				return err
			}
			byID[id] = k
		}
		return rows.Err()
	}()
	if err != nil {
		return fmt.Errorf("as known at: %w", err)
	}
	for i := range ms {
		k, ok := byID[ms[i].ID]
		if !ok {
			continue
		}
		ms[i].Status, ms[i].CurrentVersionID, ms[i].VersionCount = graph.Status(k.status), k.version, k.count
		if ms[i].Status != graph.StatusSuperseded {
			// A successor is recorded with the supersession, never undone.
			ms[i].SupersededBy = ""
		}
	}
	return nil
}

// The title and the text of the version known at a time (versionKnown's
// parameter, first) of every memory the filter admits. A scan: no index
// holds past versions' text (docs/time.md says what it costs).
const keywordKnownDocs = `SELECT m.rid, m.title, COALESCE(v.index_text, ''), COALESCE(v.content, '')
FROM memories m LEFT JOIN versions v ON v.rid = (
	SELECT v.rid FROM versions v WHERE v.memory_rid = m.rid AND ` + versionKnown + ` ORDER BY v.number DESC LIMIT 1)
WHERE %s`

// keywordAsKnown is KeywordSearch as known at f.KnownAt: BM25 over the
// title and the then-current version's text of the memories f admits (the
// filter, as of then, is in the statement), with their statistics; the
// best limit, loaded with their fields as of then.
func (s *Store) keywordAsKnown(ctx context.Context, f graph.Filter, w *where, terms []string, limit int) ([]graph.Scored, error) {
	t, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // one snapshot for the scan and the load
	if err != nil {
		return nil, err
	}
	defer func() { _ = t.Rollback() }()
	rows, err := t.QueryContext(ctx, fmt.Sprintf(keywordKnownDocs, w.sql()), append([]any{nanos(f.KnownAt)}, w.args...)...)
	if err != nil {
		return nil, err
	}
	var (
		rids  []int64
		docs  []bm25.Doc
		stems bm25.Stems
	)
	err = func() error {
		defer rows.Close()
		for rows.Next() {
			var (
				rid                   int64
				title, index, content string
			)
			if err := rows.Scan(&rid, &title, &index, &content); err != nil {
				return err
			}
			rids = append(rids, rid)
			docs = append(docs, bm25.IndexWith(title, graph.SearchText(index, content), stems.Stem))
		}
		return rows.Err()
	}()
	if err != nil {
		return nil, err
	}
	scores := bm25.Score(docs, terms)
	order := bm25.Best(scores, limit, func(a, b int) int { return cmp.Compare(rids[a], rids[b]) })
	top := make([]int64, len(order))
	for i, k := range order {
		top[i] = rids[k]
	}
	ridJSON, _ := json.Marshal(top)
	mrows, err := t.QueryContext(ctx, memoriesByRID, string(ridJSON))
	if err != nil {
		return nil, err
	}
	ms, err := scanMemories(mrows)
	if err == nil {
		err = asKnown(ctx, t, f, ms)
	}
	if err != nil {
		return nil, err
	}
	out := make([]graph.Scored, len(ms))
	for i, m := range ms { // memoriesByRID keeps the order of top
		out[i] = graph.Scored{Memory: m, Score: scores[order[i]]}
	}
	return out, nil
}
