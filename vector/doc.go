// Package vector holds the model and the pluggable interface of mnemo's
// vector index: one point per memory (its current version's embedding),
// searched by cosine similarity with the caller's authorization filter
// applied inside the index.
//
// On the write path the engine upserts a point after the graph write (from a
// durable outbox, so a failed vector write is retried); on the read path it
// either reranks graph candidates with Index.Score or, when the graph finds
// nothing, falls back to Index.Search.
//
// Backends live in sub-packages (vector/local, the embedded default;
// vector/qdrant; vector/neo4j, Neo4j 5's vector index) and all pass the
// conformance suite in vector/indextest.
//
// Access semantics match package graph (graph.Filter.Admits), restated in
// Filter because this package does not import graph: a point is visible
// under a filter when its tenant equals the filter's exactly; its org and
// repo are the filter's or above them (empty), or, with Filter.Subscopes,
// also beneath them; and, when it is private (visibility user or session
// with an owner), the filter's reader is its owner or reads all users.
package vector
