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
// vector/qdrant) and all pass the conformance suite in vector/indextest.
//
// Scope semantics match package graph: a point is visible under a filter when
// its tenant equals the filter's tenant exactly, and for org and repo the
// filter's value is empty, or the point's value equals it, or the point's
// value is empty (tenant-wide and org-wide points are visible to narrower
// principals).
package vector
