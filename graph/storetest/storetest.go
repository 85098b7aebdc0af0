// Package storetest is the one conformance suite every graph.Store backend
// must pass. A backend is done when Run passes against it, not when it has
// tests of its own (compare Vault's ExerciseBackend and Cayley's
// graphtest.TestAll).
//
// Run covers the core contract, graph.Store; each optional capability has a
// runner of its own (RunProposals, RunEdits, RunCapsules), which a backend
// implementing it calls too. The tenancy and scope cases also cover the
// records of every capability the store implements: the access rule holds
// for all of them.
//
// The suite is backend-neutral: it talks to graph interfaces only. Every case
// works in tenants of its own (fresh random ids), so a backend may hand the
// same store to several cases; the only global reads (DueOutbox, OutboxStatus) are
// checked for the case's own items.
//
// Corpus builds a deterministic synthetic corpus for benchmarks.
package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// Config carries the few honest differences between backends.
type Config struct {
	// Reopen closes s and opens the same data again, registering the new
	// store's cleanup with t.Cleanup. Nil skips the close-and-reopen case.
	// The store returned by open may be closed twice (once here, once by its
	// own cleanup), so Close must be idempotent.
	Reopen func(t *testing.T, s graph.Store) graph.Store
	// OpenSecond opens another client of s's data (what another process
	// would see: its own connections), registering its cleanup with t.
	// Nil skips the cross-client race case.
	OpenSecond func(t *testing.T, s graph.Store) graph.Store
	// TimePrecision is the resolution timestamps survive a round trip at;
	// zero means nanoseconds.
	TimePrecision time.Duration
}

// Run runs the whole suite. open returns a store ready for use and registers
// its cleanup with t.Cleanup; it is called once per case.
func Run(t *testing.T, open func(t *testing.T) graph.Store, cfg Config) {
	cases := []testCase{
		{"RoundTrip", testRoundTrip},
		{"Versions", testVersions},
		{"Supersession", testSupersession},
		{"FindActiveByKey", testFindActiveByKey},
		{"ExclusiveKey", testExclusiveKey},
		{"ExclusiveKeyRace", testExclusiveKeyRace},
		{"ArchiveAndTouch", testArchiveAndTouch},
		{"ArchiveRestore", testArchiveRestore},
		{"LifecycleAudit", testLifecycleAudit},
		{"Erase", testErase},
		{"EraseChain", testEraseChain},
		{"EraseEdges", testEraseEdges},
		{"Candidates", testCandidates},
		{"Neighbours", testNeighbours},
		{"Walk", testWalk},
		{"SessionNext", testSessionNext},
		{"CoOccurs", testCoOccurs},
		{"KeywordSearch", testKeywordSearch},
		{"KeywordAnotherClient", testKeywordAnotherClient},
		{"KeywordStatistics", testKeywordStatistics},
		{"ListFilters", testListFilters},
		{"ValidAt", testValidAt},
		{"KnownAt", testKnownAt},
		{"Pagination", testPagination},
		{"PaginationConcurrentInserts", testPaginationConcurrent},
		{"TenantIsolation", testTenantIsolation},
		{"ScopeInheritance", testScopeInheritance},
		{"Users", testUsers},
		{"ConcurrentWriters", testConcurrentWriters},
		{"Reopen", testReopen},
		{"InvalidInput", testInvalidInput},
		{"GateRequests", testGateRequests},
		{"GateSettlement", testGateSettlement},
		{"Audit", testAudit},
		{"AuditUserRule", testAuditUserRule},
		{"Outbox", testOutbox},
		{"OutboxRetry", testOutboxRetry},
		{"OutboxClaim", testOutboxClaim},
		{"PolicyMark", testPolicyMark},
		{"Counts", testCounts},
	}
	runCases(t, open, cfg, "", cases)
}

// testCase is one named case of a runner.
type testCase = struct {
	name string
	fn   func(t *testing.T, x *suite)
}

// runCases runs cases, each on a fresh store from open; a non-empty need
// names the capability the cases require (a store without it fails).
func runCases(t *testing.T, open func(t *testing.T) graph.Store, cfg Config, need string, cases []testCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := open(t)
			x := &suite{s: s, cfg: cfg}
			x.pr, _ = s.(graph.Proposals)
			x.ed, _ = s.(graph.Edits)
			x.cp, _ = s.(graph.Capsules)
			has := map[string]bool{"": true, "graph.Proposals": x.pr != nil, "graph.Edits": x.ed != nil, "graph.Capsules": x.cp != nil}
			if !has[need] {
				t.Fatalf("the store %T does not implement %s", s, need)
			}
			c.fn(t, x)
		})
	}
}

// RunProposals runs the graph.Proposals suite; open's stores must
// implement it.
func RunProposals(t *testing.T, open func(t *testing.T) graph.Store, cfg Config) {
	runCases(t, open, cfg, "graph.Proposals", []testCase{
		{"RoundTrip", testProposalsRoundTrip},
		{"InvalidInput", testProposalsInvalid},
		{"Transitions", testProposalTransitions},
		{"Reach", testProposalReach},
		{"List", testProposalList},
		{"BaselinePromote", testBaselinePromote},
		{"Erase", testProposalErase},
	})
}

// RunEdits runs the graph.Edits suite; open's stores must implement it.
func RunEdits(t *testing.T, open func(t *testing.T) graph.Store, cfg Config) {
	runCases(t, open, cfg, "graph.Edits", []testCase{
		{"RoundTrip", testEditsRoundTrip},
		{"Effective", testEdits},
		{"Audit", testEditAudit},
		{"Listed", testEditsListed},
		{"InvalidInput", testEditsInvalid},
	})
}

// RunCapsules runs the graph.Capsules suite; open's stores must implement
// it.
func RunCapsules(t *testing.T, open func(t *testing.T) graph.Store, cfg Config) {
	runCases(t, open, cfg, "graph.Capsules", []testCase{
		{"RoundTrip", testCapsules},
		{"InvalidInput", testCapsulesInvalid},
	})
}

// suite is the state one case works with: the store and the capabilities
// it implements (nil when it does not).
type suite struct {
	s   graph.Store
	pr  graph.Proposals
	ed  graph.Edits
	cp  graph.Capsules
	cfg Config
}

// base is the fixed instant fixtures are dated from.
var base = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func ctx(t *testing.T) context.Context { return t.Context() }

// newScope returns a scope in a tenant no other case uses.
func newScope(t *testing.T) graph.Scope {
	t.Helper()
	return graph.Scope{TenantID: "t" + graph.NewID()}
}

// in is a filter that sees everything active in s: its reader reads every
// user's memories but keeps the plain scope rule (s and above; the cases
// that write beneath s say which reader they use).
func in(s graph.Scope) graph.Filter {
	return graph.Filter{Scope: s, Reader: graph.Reader{AllUsers: true}}
}

// memIn builds a minimal valid MemoryInput.
func memIn(s graph.Scope, title, content string, ents ...string) graph.MemoryInput {
	refs := make([]graph.EntityRef, len(ents))
	for i, e := range ents {
		refs[i] = graph.EntityRef{Name: e}
	}
	return graph.MemoryInput{
		Memory:  graph.Memory{Scope: s, Type: "note", Title: title},
		Version: graph.VersionInput{Content: content, Entities: refs},
	}
}

// create writes in and fails the test on error.
func (x *suite) create(t *testing.T, in graph.MemoryInput) graph.Created {
	t.Helper()
	c, err := createOne(ctx(t), x.s, in)
	require.NoError(t, err, "create %q", in.Memory.Title)
	return c
}

// otherClient returns a second client of the suite's data (what another
// process would hold) when the backend can open one, else the store itself.
func (x *suite) otherClient(t *testing.T) graph.Store {
	if x.cfg.OpenSecond == nil {
		return x.s
	}
	return x.cfg.OpenSecond(t, x.s)
}

// createOne writes one memory through s.CreateMemories.
func createOne(c context.Context, s graph.Store, in graph.MemoryInput) (graph.Created, error) {
	out, err := s.CreateMemories(c, []graph.MemoryInput{in})
	if err != nil {
		return graph.Created{}, err
	}
	return out[0], nil
}

// sameTime asserts two instants are equal at the backend's precision.
func (x *suite) sameTime(t *testing.T, want, got time.Time, field string) {
	t.Helper()
	p := x.cfg.TimePrecision
	if p <= 0 {
		p = time.Nanosecond
	}
	assert.True(t, want.Truncate(p).Equal(got.Truncate(p)), "%s: got %v, want %v", field, got, want)
}

func memIDs(ms []graph.Memory) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func candIDs(cs []graph.Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Memory.ID
	}
	return out
}

func scoredIDs(ss []graph.Scored) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Memory.ID
	}
	return out
}

// neighbourIDs groups neighbour ids by seed, in result order.
func neighbourIDs(ns []graph.Neighbour) map[string][]string {
	out := map[string][]string{}
	for _, n := range ns {
		out[n.SeedID] = append(out[n.SeedID], n.Memory.ID)
	}
	return out
}

// listAll pages through ListMemories with the given page size.
func (x *suite) listAll(t *testing.T, f graph.Filter, limit int) []string {
	t.Helper()
	var ids []string
	p := graph.Page{Limit: limit}
	for range 10000 {
		l, err := x.s.ListMemories(ctx(t), f, p)
		require.NoError(t, err)
		ids = append(ids, memIDs(l.Memories)...)
		if l.NextCursor == "" {
			return ids
		}
		p.Cursor = l.NextCursor
	}
	require.FailNow(t, "listing never ended")
	return nil
}

// title returns a readable unique title.
func title(prefix string, i int) string { return fmt.Sprintf("%s %03d", prefix, i) }
