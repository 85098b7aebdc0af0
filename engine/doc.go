// Package engine holds mnemo's use cases — create and ingest, get and list,
// search and read_context, curation — on top of the ports it depends on:
// graph.Store (source of truth), vector.Index and embed.Embedder (optional
// rerank), the extractor and the policy. It never sees Cypher or SQL, and it
// never picks a backend: cmd/mnemo wires those in.
//
// Every use case starts from a graph.Principal. The engine turns it into a
// graph.Filter whose scope is the principal's (or narrower, never wider) and
// passes that filter into every store read, so tenant isolation happens in
// the store query, not after ranking.
//
// Files are named for what they hold; docs/search.md lists the read path's
// files (search*.go, rank.go, fuse.go, effective.go, display.go, ...) in the
// order a search runs.
package engine
