// Package neo4j is the vector.Index backend inside Neo4j 5 (5.13 or later;
// tested on 5.26): points are nodes searched through Neo4j's native vector
// index (db.index.vector.queryNodes, Lucene HNSW, cosine), so a deployment
// that already runs its graph on Neo4j needs no second server for vectors
// (`--vector neo4j`).
//
// # Nodes
//
// One node per memory under its own label (Config.Label, default
// DefaultLabel), separate from graph/neo4j's Memory and Version nodes:
//
//	(:MnemoVector {id, version_id, tenant_id, org_id, repo_id, user_id,
//	               private, visibility, type, tags, subject_type, subject_id,
//	               project_id, session_id, created_at, embedding})
//
// Why not the embedding on the version nodes: vector.Index has its own
// lifecycle, which the engine drives from its outbox after the graph write
// (a point is upserted, replaced by the next version, deleted on forget,
// rebuilt by `mnemo reindex`, compared with the graph by `mnemo doctor`),
// and its own contract (vector/indextest), which a backend must pass
// without any graph beside it. Writing the vector into graph/neo4j's nodes
// would make this package depend on that package's schema and make reindex a
// rewrite of the graph; a separate label keeps the graph store unaware of
// vectors and lets both stores evolve on their own. The cost is a second
// copy of the access fields, which never change after a version is written
// (vector.Payload). The nodes share the database with the graph, so one
// Neo4j (and one backup) holds both.
//
// Schema, created by Open when missing (names carry the label): a
// uniqueness constraint on id, a range index on tenant_id, and the vector
// index on embedding (vector.dimensions from Config.Dimensions,
// vector.similarity_function cosine). An existing vector index with other
// dimensions is refused.
//
// # Search
//
// The filter (vector.Filter.Match: tenant, scope, the private rule and the
// caller's narrowing) is one WHERE clause (filterCypher) evaluated by Neo4j
// inside the query, never on the results in Go. Neo4j 5's vector index
// cannot take a filter into its walk, so Search goes one of two ways:
//
//   - exact: when the tenant holds at most Config.ExactThreshold points
//     (default 256; counted through the tenant_id index in the query
//     that would otherwise ask the vector index, so a large tenant's
//     search is one round trip), every matching point of the tenant is
//     scored with vector.similarity.cosine and the top k kept. Exactly the
//     top k of the allowed set. The threshold is low because Cypher's
//     cosine over stored lists is slow: an exact scan of 9k points took
//     1.4 s (p50) where the vector index answered in 36 ms, on the same
//     loaded machine (docs/benchmarks.md); the crossover is near 250.
//   - approximate: otherwise the vector index returns its nearest
//     max(k*Config.Overfetch, 100) nodes (default Overfetch 10), the filter
//     drops what the reader may not see, the rest are rescored exactly
//     and the best k remain. When some but fewer than k survive (a
//     selective filter), the index is asked once more for enough
//     candidates to expect 2k allowed (at most 4096); when still fewer
//     than k survive, or none did (a small tenant in a large index), the
//     search falls back to the exact scan of the tenant's allowed points,
//     so a filter never shortens the answer. Like any HNSW search, the
//     result is approximate: a point the index's walk missed is missing,
//     but every hit is allowed and its score is its exact cosine. The
//     benchmarks (docs/benchmarks.md) give recall@10 against exact search.
//
// Score and Count go through the id and tenant_id indexes; Scan streams one
// auto-commit query and checks the context between payloads.
//
// Scores: Neo4j normalises cosine to [0, 1] as (1+cos)/2; hits carry cos
// back in [-1, 1] like every vector.Index.
package neo4j
