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
// repository inside it (Scope). A Filter whose scope is {T, O, R} sees records
// of tenant T whose org is O or empty and whose repo is R or empty: broader
// (tenant-wide, org-wide) records are visible to narrower principals, never
// the other way round, and nothing crosses tenants. An empty OrgID or RepoID
// in the Filter means "any".
//
// # Errors
//
// Methods return errors that wrap ErrInvalid (bad input, nothing written),
// ErrNotFound (missing or outside the caller's scope — the two are not
// distinguished, so a probe cannot learn another tenant's ids), ErrConflict
// (the write contradicts the stored state, e.g. a supersession cycle) or
// ErrForbidden. Callers test them with errors.Is.
package graph
