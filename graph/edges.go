package graph

import (
	"context"
	"slices"
	"time"
)

// Edges both stores build at write time, beside MENTIONS (docs/graph.md):
//
//   - NEXT from the previous memory of a session to a new one: a memory
//     with a SessionID follows the newest memory of the same session,
//     tenant, org, repo and user, by EventTime, then CreatedAt, then write
//     order (a memory written out of order still follows the newest);
//     NEXT between consecutive chunks of a version.
//   - CO_OCCURS between two entities one memory mentions, from the lesser
//     norm name to the greater, counting the memories (their current
//     versions) that mention both. Only a memory's first
//     MaxCoOccurEntities entities by norm name pair up, so a long document
//     costs at most 66 pairs. The counts are tenant-wide: they are for
//     analysts, never for scoring a reader's search.
//   - MENTIONS from a memory carry a count: how many of its version's
//     chunks mention the entity, 1 when none does (MentionCounts).
const MaxCoOccurEntities = 12

// EventTime is when what a memory records happened: ValidFrom when set,
// else CreatedAt. Sessions are ordered by it.
func EventTime(m Memory) time.Time {
	if !m.ValidFrom.IsZero() {
		return m.ValidFrom
	}
	return m.CreatedAt
}

// CoOccurPairs returns the CO_OCCURS pairs of a memory mentioning the
// entities of norm names norms: each pair once, the lesser name first,
// among the first MaxCoOccurEntities distinct names in order.
func CoOccurPairs(norms []string) [][2]string {
	ns := slices.Clone(norms)
	slices.Sort(ns)
	ns = slices.Compact(ns)
	ns = ns[:min(len(ns), MaxCoOccurEntities)]
	var out [][2]string
	for i, a := range ns {
		for _, b := range ns[i+1:] {
			out = append(out, [2]string{a, b})
		}
	}
	return out
}

// MentionCounts returns, for each entity (norm name) of v's Entities, how
// many of v's chunks mention it, at least 1. v must be normalised.
func MentionCounts(v VersionInput) map[string]int64 {
	out := make(map[string]int64, len(v.Entities))
	for _, e := range v.Entities {
		out[e.NormName] = 0
	}
	for _, c := range v.Chunks {
		seen := map[string]bool{}
		for _, e := range c.Entities {
			if n, ok := out[e.NormName]; ok && !seen[e.NormName] {
				seen[e.NormName] = true
				out[e.NormName] = n + 1
			}
		}
	}
	for k, n := range out {
		out[k] = max(n, 1)
	}
	return out
}

// EdgeCounter is an optional capability of a Store, for tests and
// analysts' tools and never for a reader's search: the tenant-wide counts
// the write-time edges carry, unfiltered.
type EdgeCounter interface {
	// CoOccurrences returns the counts of the CO_OCCURS edges of the
	// tenant's entity entity (a norm name), by the other entity's norm
	// name.
	CoOccurrences(ctx context.Context, tenant, entity string) (map[string]int64, error)
	// MentionCounts returns the counts of a memory's MENTIONS edges, by
	// entity norm name.
	MentionCounts(ctx context.Context, tenant, memoryID string) (map[string]int64, error)
}
