package engine

import (
	"context"
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/vector"
)

// reindexPage is how many memories one embedding call covers.
const reindexPage = 64

// ReindexStats counts what Reindex did.
type ReindexStats struct {
	Memories int `json:"memories"` // active memories embedded and upserted
	Removed  int `json:"removed"`  // index points with no active memory, deleted
}

// Reindex rebuilds the vector index of p's scope from the graph, the source
// of truth: every active memory's current version is embedded and upserted,
// and points whose memory is gone or no longer active are deleted. It is
// idempotent and safe beside a running server (upserts replace by id).
// progress, when non-nil, is called after every page.
func (e *Engine) Reindex(ctx context.Context, p graph.Principal, progress func(ReindexStats)) (ReindexStats, error) {
	var st ReindexStats
	if !e.vectorsOn() {
		return st, ErrVectorsOff
	}
	if err := authorize(e.policy.Current(), p, PermAdmin); err != nil {
		return st, err
	}
	f := graph.Filter{Scope: p.Scope, Reader: graph.System}
	err := e.eachActive(ctx, f, func(mems []graph.Memory) error {
		if err := e.embedCurrent(ctx, f, mems); err != nil {
			return err
		}
		st.Memories += len(mems)
		if progress != nil {
			progress(st)
		}
		return nil
	})
	if err != nil {
		return st, fmt.Errorf("reindex: %w", err)
	}
	rep, err := e.doctor(ctx, f, 0)
	if err != nil {
		return st, fmt.Errorf("reindex: %w", err)
	}
	if len(rep.orphanIDs) > 0 {
		if err := e.index.Delete(ctx, rep.orphanIDs); err != nil {
			return st, fmt.Errorf("reindex: delete orphans: %w", err)
		}
		st.Removed = len(rep.orphanIDs)
	}
	return st, nil
}

// DoctorReport compares the graph with the vector index in one scope.
type DoctorReport struct {
	Memories int `json:"memories"` // active memories in the graph
	Points   int `json:"points"`   // points in the index
	// Missing are active memories without a point; Stale have a point
	// embedding an older version; Orphans are points whose memory is not
	// an active memory in the graph. Each lists up to the example limit.
	Missing      []string `json:"missing"`
	Stale        []string `json:"stale"`
	Orphans      []string `json:"orphans"`
	MissingCount int      `json:"missing_count"`
	StaleCount   int      `json:"stale_count"`
	OrphanCount  int      `json:"orphan_count"`

	orphanIDs []string
}

// Healthy reports whether graph and index agree.
func (r DoctorReport) Healthy() bool {
	return r.MissingCount == 0 && r.StaleCount == 0 && r.OrphanCount == 0
}

// Doctor reports index entries without an active graph memory, active
// memories without an index entry, and entries embedding an outdated
// version, in p's scope; examples lists at most that many ids of each.
func (e *Engine) Doctor(ctx context.Context, p graph.Principal, examples int) (DoctorReport, error) {
	if !e.vectorsOn() {
		return DoctorReport{}, ErrVectorsOff
	}
	if err := authorize(e.policy.Current(), p, PermAdmin); err != nil {
		return DoctorReport{}, err
	}
	rep, err := e.doctor(ctx, graph.Filter{Scope: p.Scope, Reader: graph.System}, examples)
	if err != nil {
		return DoctorReport{}, fmt.Errorf("doctor: %w", err)
	}
	return rep, nil
}

func (e *Engine) doctor(ctx context.Context, f graph.Filter, examples int) (DoctorReport, error) {
	var rep DoctorReport
	note := func(list *[]string, count *int, id string) {
		*count++
		if len(*list) < examples {
			*list = append(*list, id)
		}
	}
	active := map[string]string{} // memory id -> current version id
	err := e.eachActive(ctx, f, func(mems []graph.Memory) error {
		ids := make([]string, len(mems))
		for i, m := range mems {
			ids[i] = m.ID
			active[m.ID] = m.CurrentVersionID
		}
		indexed, err := e.indexedVersions(ctx, f.Scope, ids)
		if err != nil {
			return err
		}
		for _, m := range mems {
			switch v, ok := indexed[m.ID]; {
			case !ok:
				note(&rep.Missing, &rep.MissingCount, m.ID)
			case v != m.CurrentVersionID:
				note(&rep.Stale, &rep.StaleCount, m.ID)
			}
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	rep.Memories = len(active)
	vf := vector.Filter{TenantID: f.Scope.TenantID, OrgID: f.Scope.OrgID, RepoID: f.Scope.RepoID}
	err = e.index.Scan(ctx, vf, func(pl vector.Payload) error {
		rep.Points++
		if _, ok := active[pl.MemoryID]; !ok {
			rep.orphanIDs = append(rep.orphanIDs, pl.MemoryID)
			note(&rep.Orphans, &rep.OrphanCount, pl.MemoryID)
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("scan vector index: %w", err)
	}
	return rep, nil
}

// eachActive calls fn with every active memory visible under f, a page at
// a time.
func (e *Engine) eachActive(ctx context.Context, f graph.Filter, fn func([]graph.Memory) error) error {
	page := graph.Page{Limit: reindexPage}
	for {
		l, err := e.store.ListMemories(ctx, f, page)
		if err != nil {
			return fmt.Errorf("list memories: %w", err)
		}
		if len(l.Memories) > 0 {
			if err := fn(l.Memories); err != nil {
				return err
			}
		}
		if l.NextCursor == "" {
			return nil
		}
		page.Cursor = l.NextCursor
	}
}
