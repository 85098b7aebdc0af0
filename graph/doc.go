// Package graph holds mnemo's domain model — memories, their versions and
// chunks, entities, and the curation records around them (proposals,
// decisions, baselines, edits, capsules, gate requests, audit events) — and
// the Store interface every graph backend implements.
//
// It sits under the engine on both data paths. On the write path the engine
// hands a validated MemoryInput to Store.CreateMemory, which writes the memory,
// its first version, chunks, entities and MENTIONS edges in one transaction.
// On the read path the engine turns the caller's Principal into a Filter and
// every Store read takes that Filter: tenant isolation is pushed into the
// store query, never applied after ranking.
//
// # Scope
//
// Every record belongs to a tenant and optionally to an organisation and a
// repository inside it (Scope). A Filter whose scope is {T, O, R} sees
// records of tenant T whose scope is {T, "", ""}, {T, O, ""} or {T, O, R}
// (Scope.Sees): its own scope and those above it. Broader (tenant-wide,
// org-wide) records are visible to narrower callers, never the other way
// round: a tenant-wide caller sees only tenant-wide records, and nothing
// crosses tenants. Only a Filter whose Reader has Subscopes (permission
// subscopes, and the engine's own maintenance, System) also sees the scopes
// beneath its own (Scope.Contains: an empty OrgID or RepoID in the Filter
// then means "any").
//
// Users are the other half of the rule. A memory whose visibility is user or
// session and that has an owner (Memory.UserID) is private to that owner: it
// is read only by a Filter whose Reader.UserID is the owner, or whose Reader
// has AllUsers (permission read_all_users; System). Memories without an
// owner, and memories of visibility project, policy or global, are read by
// every reader of their scope. Every read names its reader (Filter.Validate
// refuses one that does not), and Filter.Admits is the reference predicate
// the stores push into every query. Records other than memories (gate
// requests, edits, proposals, decisions, baselines, capsules, receipts,
// audit) carry no owner: the scope rule alone decides who reads them.
//
// Writes take the writer's Scope and reach it and the scopes beneath it
// (Scope.Contains); whether a principal may write beneath its own scope
// (permission subscopes) or as another user (act_as_user) is the engine's
// check, not the store's.
//
// # Core contract and capabilities
//
// Store is the core contract: what the engine needs to ingest, search, build
// context, forget and index at all — memories, versions, chunks, entities,
// the graph reads, audit, gate requests (the write gate queues writes), context
// receipts (citation verification) and the outbox (vector indexing). Curation
// records are optional capabilities, one interface each: Proposals
// (proposals, decisions, baselines), Edits and Capsules. engine.New
// type-asserts the store once for each; a use case whose capability is
// missing returns ErrUnsupported (HTTP 501), and a read that would only
// consult it goes on without it (no approved edit to apply, no baseline to
// pin). Both stores implement every capability (compile-time assertions in
// their store.go) and pass storetest.Run plus RunProposals, RunEdits and
// RunCapsules. A new curation capability goes on an interface of its own,
// not on Store. graph/graphtest.Store is every capability together, for
// tests above the graph layer.
//
// # Fault injection
//
// graph/graphtest.Faulty wraps a real store for tests of partial failure
// above the graph layer: it fails the Nth call of a named method (or every
// call from the Nth on), before the store acts or after it committed (a lost
// acknowledgement), and passes every capability through. Each store method
// stays one transaction; the engine's tests use Faulty to check that its
// use cases that take several store calls leave nothing partial
// (docs/curation.md, "Partial failures").
//
// # Errors
//
// Methods return errors that wrap ErrInvalid (bad input, nothing written),
// ErrNotFound (missing or outside the caller's scope — the two are not
// distinguished, so a probe cannot learn another tenant's ids), ErrConflict
// (the write contradicts the stored state, e.g. a supersession cycle) or
// ErrForbidden. Callers test them with errors.Is.
package graph
