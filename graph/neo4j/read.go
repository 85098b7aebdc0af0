package neo4j

import (
	"context"
	"fmt"
	"slices"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
)

// getMemoriesCypher returns the memories among $ids visible under the
// filter, with the position of each id so callers can keep the input order.
// Uses memory_id.
const getMemoriesCypher = `
UNWIND range(0, size($ids) - 1) AS i
MATCH (m:Memory {id: $ids[i]})
WHERE ` + memoryVisible + `
RETURN i, ` + memoryProjection + ` AS m
ORDER BY i`

// GetMemory returns one memory visible under f (any status but retracted,
// unless f.Statuses admits retracted).
func (s *Store) GetMemory(ctx context.Context, f graph.Filter, id string) (graph.Memory, error) {
	if err := requireIDs("id", id); err != nil {
		return graph.Memory{}, fmt.Errorf("neo4j: get memory: %w", err)
	}
	ms, err := s.GetMemories(ctx, f, []string{id})
	if err != nil {
		return graph.Memory{}, err
	}
	if len(ms) == 0 {
		return graph.Memory{}, fmt.Errorf("neo4j: get memory: %w", notFound("memory", id))
	}
	return ms[0], nil
}

// GetMemories returns the memories among ids visible under f, in the order
// of ids; missing ones are skipped.
func (s *Store) GetMemories(ctx context.Context, f graph.Filter, ids []string) ([]graph.Memory, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: get memories: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := read(ctx, s, func(tx txn) ([]graph.Memory, error) {
		recs, err := collect(ctx, tx, getMemoriesCypher, byIDsParams(f, ids))
		if err != nil {
			return nil, err
		}
		out := make([]graph.Memory, 0, len(recs))
		for _, r := range recs {
			out = append(out, memoryOf(r, "m"))
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: get memories: %w", err)
	}
	return out, nil
}

// getVersionsCypher returns the versions among $ids whose memories are
// visible under the filter, keeping the input order. Uses version_id.
const getVersionsCypher = `
UNWIND range(0, size($ids) - 1) AS i
MATCH (m:Memory)-[:HAS_VERSION]->(v:Version {id: $ids[i]})
WHERE ` + memoryVisible + versionKnown + `
RETURN i, ` + versionProjection + ` AS v
ORDER BY i`

// GetVersion returns one version whose memory is visible under f.
func (s *Store) GetVersion(ctx context.Context, f graph.Filter, id string) (graph.Version, error) {
	if err := requireIDs("id", id); err != nil {
		return graph.Version{}, fmt.Errorf("neo4j: get version: %w", err)
	}
	vs, err := s.GetVersions(ctx, f, []string{id})
	if err != nil {
		return graph.Version{}, err
	}
	if len(vs) == 0 {
		return graph.Version{}, fmt.Errorf("neo4j: get version: %w", notFound("version", id))
	}
	return vs[0], nil
}

// GetVersions returns the versions among ids whose memories are visible
// under f, in the order of ids; missing ones are skipped.
func (s *Store) GetVersions(ctx context.Context, f graph.Filter, ids []string) ([]graph.Version, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: get versions: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := read(ctx, s, func(tx txn) ([]graph.Version, error) {
		recs, err := collect(ctx, tx, getVersionsCypher, byIDsParams(f, ids))
		if err != nil {
			return nil, err
		}
		return versionsOf(recs), nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: get versions: %w", err)
	}
	return out, nil
}

// getChunksCypher returns a visible version's chunks in document order with
// the norm names of the entities each mentions; a row with a null chunk
// means the version exists but has none. Uses version_id.
const getChunksCypher = `
MATCH (m:Memory)-[:HAS_VERSION]->(v:Version {id: $id})
WHERE ` + memoryVisible + versionKnown + `
OPTIONAL MATCH (v)-[:HAS_CHUNK]->(ch:Chunk)
WITH ch, [(ch)-[:MENTIONS]->(e:Entity) | e.norm_name] AS entities
ORDER BY ch.start, ch.end, ch.chunk_key
RETURN ch {.*} AS ch, entities`

// GetChunks returns a version's chunks in document order.
func (s *Store) GetChunks(ctx context.Context, f graph.Filter, versionID string) ([]graph.Chunk, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: get chunks: %w", err)
	}
	if err := requireIDs("version_id", versionID); err != nil {
		return nil, fmt.Errorf("neo4j: get chunks: %w", err)
	}
	out, err := read(ctx, s, func(tx txn) ([]graph.Chunk, error) {
		recs, err := collect(ctx, tx, getChunksCypher, byIDParams(f, versionID))
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, notFound("version", versionID)
		}
		var out []graph.Chunk
		for _, r := range recs {
			v, _ := r.Get("ch")
			p, ok := v.(map[string]any)
			if !ok {
				continue
			}
			e, _ := r.Get("entities")
			ents := strs(map[string]any{"e": e}, "e")
			slices.Sort(ents)
			out = append(out, graph.Chunk{
				ID: str(p, "id"), VersionID: str(p, "version_id"), Key: str(p, "chunk_key"),
				Start: int(i64(p, "start")), End: int(i64(p, "end")), Entities: ents,
			})
		}
		return out, nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: get chunks of %s: %w", versionID, err)
	}
	return out, nil
}

// byIDsParams binds the parameters of a direct fetch of ids under f
// (directFilter), byIDParams those of a fetch of one id.
func byIDsParams(f graph.Filter, ids []string) map[string]any {
	return filterParams(directFilter(f), map[string]any{"ids": ids})
}

func byIDParams(f graph.Filter, id string) map[string]any {
	return filterParams(directFilter(f), map[string]any{"id": id})
}

func versionsOf(recs []*neo4jdrv.Record) []graph.Version {
	out := make([]graph.Version, 0, len(recs))
	for _, r := range recs {
		v, _ := r.Get("v")
		if p, ok := v.(map[string]any); ok {
			out = append(out, toVersion(p))
		}
	}
	return out
}

// listVersionsCypher returns a visible memory's versions, oldest first; no
// row means the memory is missing or invisible. Uses memory_id.
const listVersionsCypher = `
MATCH (m:Memory {id: $id})
WHERE ` + memoryVisible + `
OPTIONAL MATCH (m)-[:HAS_VERSION]->(v:Version)
WHERE true` + versionKnown + `
WITH v ORDER BY v.number
RETURN ` + versionProjection + ` AS v`

// ListVersions returns a memory's versions, oldest first.
func (s *Store) ListVersions(ctx context.Context, f graph.Filter, memoryID string) ([]graph.Version, error) {
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("neo4j: list versions: %w", err)
	}
	if err := requireIDs("memory_id", memoryID); err != nil {
		return nil, fmt.Errorf("neo4j: list versions: %w", err)
	}
	out, err := read(ctx, s, func(tx txn) ([]graph.Version, error) {
		recs, err := collect(ctx, tx, listVersionsCypher, byIDParams(f, memoryID))
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			return nil, notFound("memory", memoryID)
		}
		return versionsOf(recs), nil
	})
	if err != nil {
		return nil, fmt.Errorf("neo4j: list versions of %s: %w", memoryID, err)
	}
	return out, nil
}
