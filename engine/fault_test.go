package engine_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/graphtest"
)

// newFaultyFixture is an ingest fixture whose engine runs on a
// graphtest.Faulty wrapper of the fixture's store: faults armed on it fail
// the engine's store calls, while f.store is the real store, for setting up
// and checking without faults.
func newFaultyFixture(t testing.TB, o ingOpts) (*ingFixture, *graphtest.Faulty) {
	t.Helper()
	var fs *graphtest.Faulty
	o.wrap = func(s graph.Store) graph.Store {
		fs = graphtest.NewFaulty(s.(graphtest.Store))
		return fs
	}
	return newIngFixture(t, o), fs
}

// faultFixture is what a partial-failure case runs on: an engine over a
// Faulty store, principals of repository t1/o1/r1, and the ids its setup
// wrote.
type faultFixture struct {
	*ingFixture
	faults                    *graphtest.Faulty
	repo                      graph.Scope
	writer, other, lib, admin graph.Principal
	ids                       map[string]string
}

func newFaultFixture(t *testing.T) *faultFixture {
	t.Helper()
	f, fs := newFaultyFixture(t, ingOpts{})
	repo := graph.Scope{TenantID: f.scope.TenantID, OrgID: "o1", RepoID: "r1"}
	at := func(id, user string, roles ...string) graph.Principal {
		return graph.Principal{ID: id, UserID: user, Roles: roles, Scope: repo}
	}
	return &faultFixture{ingFixture: f, faults: fs, repo: repo, ids: map[string]string{},
		writer: at("lead", "u1", "writer"), other: at("w2", "u2", "writer"),
		lib: at("lib", "u1", "librarian"), admin: at("adm", "u1", "admin")}
}

// ingest writes r as p through the engine (no fault armed) and records the
// memory's id, and its version's, under name.
func (f *faultFixture) ingest(t *testing.T, name string, p graph.Principal, r engine.IngestRequest) engine.IngestResult {
	t.Helper()
	res, err := f.eng.Ingest(ingCtx(t), p, r)
	require.NoError(t, err)
	f.ids[name], f.ids[name+".v"] = res.ID, res.VersionID
	return res
}

func note(content string) engine.IngestRequest {
	return engine.IngestRequest{Type: "note", Title: content, Content: content}
}

// allStatuses is every memory status, erased included.
var allStatuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted, graph.StatusErased}

// state is everything the store holds for the tenant, as sorted lines
// without ids or times, so two fixtures that ran the same calls compare
// equal: memories with their versions, the outbox, the keyword index's
// answer for each active memory, audit actions, gate requests, proposals,
// baselines, edits, capsules and relations. Access counts are on lines of
// their own ("touch ...") so a comparison can leave them out.
func (f *faultFixture) state(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	st := f.store.(graphtest.Store)
	all := graph.Filter{Scope: graph.Scope{TenantID: f.scope.TenantID}, Reader: graph.System, Statuses: allStatuses}
	var out []string
	add := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }

	title, number := map[string]string{}, map[string]int{}
	var mems []graph.Memory
	for p := (graph.Page{Limit: 1000}); ; {
		l, err := st.ListMemories(ctx, all, p)
		require.NoError(t, err)
		mems = append(mems, l.Memories...)
		if p.Cursor = l.NextCursor; p.Cursor == "" {
			break
		}
	}
	var ids []string
	for _, m := range mems {
		ids = append(ids, m.ID)
		title[m.ID] = m.Title
		vs, err := st.ListVersions(ctx, all, m.ID)
		require.NoError(t, err)
		current := 0
		for _, v := range vs {
			number[v.ID] = v.Number
			if v.ID == m.CurrentVersionID {
				current = v.Number
			}
			add("version %q #%d %q", m.Title, v.Number, v.Content)
		}
		add("memory %q %s %s user=%q versions=%d current=#%d", m.Title, m.Status, m.Type, m.UserID, len(vs), current)
		add("touch %q %d", m.Title, m.AccessCount)
		if m.Status == graph.StatusActive && len(vs) > 0 {
			hits, err := st.KeywordSearch(ctx, all, m.Title, 100)
			require.NoError(t, err)
			if !slices.ContainsFunc(hits, func(h graph.Scored) bool { return h.Memory.ID == m.ID }) {
				add("keyword-miss %q", m.Title)
			}
		}
	}
	items, err := st.DueOutbox(ctx, time.Now().Add(24*time.Hour), 0, 10000) // lease 0: read, not claim
	require.NoError(t, err)
	for _, it := range items {
		add("outbox %s %q #%d", it.Op, title[it.MemoryID], number[it.VersionID])
	}
	for p := (graph.Page{Limit: 1000}); ; {
		evs, next, err := st.ListAudit(ctx, all, graph.AuditQuery{}, p)
		require.NoError(t, err)
		for _, ev := range evs {
			add("audit %s %s", ev.Action, ev.SubjectKind)
		}
		if p.Cursor = next; next == "" {
			break
		}
	}
	gs, _, err := st.ListGateRequests(ctx, all, "", graph.Page{Limit: 1000})
	require.NoError(t, err)
	for _, g := range gs {
		add("gate %s %q", g.Status, title[g.MemoryID])
	}
	ps, err := st.ListProposals(ctx, all, graph.ProposalQuery{Limit: 1000})
	require.NoError(t, err)
	for _, p := range ps {
		add("proposal %s %q accepted=#%d", p.Status, p.Content, number[p.AcceptedVersionID])
	}
	bs, err := st.ListBaselines(ctx, all, 1000)
	require.NoError(t, err)
	for _, b := range bs {
		add("baseline %q versions=%d", b.Name, len(b.VersionIDs))
	}
	if len(ids) > 0 {
		eds, err := st.ListEdits(ctx, all, graph.EditQuery{MemoryIDs: ids})
		require.NoError(t, err)
		for _, e := range eds {
			add("edit %s %s %q", e.Kind, e.Status, title[e.TargetMemoryID])
		}
		rels, err := st.RelationsOf(ctx, all, ids, 100)
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, r := range rels {
			if !seen[r.ID] {
				seen[r.ID] = true
				add("relation %s %q -> %q", r.Type, title[r.FromID], title[r.ToID])
			}
		}
	}
	cs, _, err := st.ListCapsules(ctx, all, graph.CapsuleQuery{Agent: f.writer.ID, Sent: true, At: time.Now()}, graph.Page{Limit: 100})
	require.NoError(t, err)
	for _, c := range cs {
		add("capsule %q items=%d", c.Subject, len(c.MemoryIDs)+len(c.VersionIDs)+len(c.DecisionIDs))
	}
	slices.Sort(out)
	return out
}

// untouched is s without its access counts.
func untouched(s []string) []string {
	return slices.DeleteFunc(slices.Clone(s), func(l string) bool { return strings.HasPrefix(l, "touch ") })
}

// faultCase is one multi-step write of the engine.
type faultCase struct {
	name string
	// setup writes what the call works on (through the engine, no fault
	// armed); run is the call under test.
	setup func(t *testing.T, f *faultFixture)
	run   func(ctx context.Context, f *faultFixture) error
	// lostRetry is what a retry answers after a lost acknowledgement (the
	// write committed, the caller heard an error): nil when the retry
	// finds the write done and succeeds, else the error it answers (e.g.
	// ErrConflict: the proposal is accepted already).
	lostRetry error
	// lostDuplicates says a retry after a lost acknowledgement writes the
	// record again (a create without an idempotency key): not retried.
	lostDuplicates bool
	// retryExtra are state lines a retry may add to what one successful
	// call leaves (e.g. the audited rejection of a supersession that the
	// failed call had already made).
	retryExtra []string
	// partial says the call is several store transactions, not one: a
	// failure leaves those before it, each whole (consistent), and a
	// retry finishes the job.
	partial bool
}

// diffLines returns the lines of want missing from got and the lines of got
// not in want, as multisets.
func diffLines(want, got []string) (missing, extra []string) {
	n := map[string]int{}
	for _, l := range got {
		n[l]++
	}
	for _, l := range want {
		if n[l] > 0 {
			n[l]--
			continue
		}
		missing = append(missing, l)
	}
	for _, l := range got {
		if n[l] > 0 {
			n[l]--
			extra = append(extra, l)
		}
	}
	return missing, extra
}

// sameBut checks that got is want but for lines of want that may be
// missing and lines that may be extra.
func sameBut(t *testing.T, want, got, mayMiss, mayAdd []string, msg string) {
	t.Helper()
	missing, extra := diffLines(want, got)
	missing = slices.DeleteFunc(missing, func(l string) bool { return slices.Contains(mayMiss, l) })
	extra = slices.DeleteFunc(extra, func(l string) bool { return slices.Contains(mayAdd, l) })
	assert.Empty(t, missing, "%s: missing", msg)
	assert.Empty(t, extra, "%s: extra", msg)
}

// consistent checks a state's invariants, whatever calls wrote it: every
// active memory is found by the keyword index and has all its versions, the
// current one the newest and queued for the vector index (no drain runs in
// these fixtures); an erased memory keeps no content.
func consistent(t *testing.T, state []string) {
	t.Helper()
	versions := map[string]int{}
	for _, l := range state {
		var title, content string
		var n int
		if _, err := fmt.Sscanf(l, "version %q #%d %q", &title, &n, &content); err == nil {
			versions[title]++
			if title == "" {
				assert.Empty(t, content, "an erased version keeps no content")
			}
		}
		assert.False(t, strings.HasPrefix(l, "keyword-miss "), l)
	}
	for _, l := range state {
		var title, status, typ, user string
		var n, current int
		if _, err := fmt.Sscanf(l, "memory %q %s %s user=%q versions=%d current=#%d", &title, &status, &typ, &user, &n, &current); err != nil {
			continue
		}
		if status != string(graph.StatusActive) {
			continue
		}
		assert.Equal(t, n, current, "%s: the current version is the newest", l)
		assert.Equal(t, n, versions[title], "%s: every version is there", l)
		assert.Contains(t, state, fmt.Sprintf("outbox upsert %q #%d", title, n), "%s: queued for the vector index", l)
	}
}

// step is the nth call of a store method in a run.
type step struct {
	method string
	nth    int
}

// writes are the store methods that write.
var writes = map[string]bool{
	"CreateMemories": true, "AddVersion": true, "Archive": true, "Restore": true, "Erase": true, "Touch": true,
	"AppendAudit": true, "CreateGateRequest": true, "DecideGateRequest": true, "CreateContextReceipt": true,
	"AckOutbox": true, "FailOutbox": true, "RequeueOutbox": true,
	"CreateProposal": true, "AcceptProposal": true, "RejectProposal": true, "RebaseProposal": true, "PromoteBaseline": true,
	"CreateEdit": true, "DecideEdit": true, "CreateCapsule": true, "RevokeCapsule": true,
	"CreateRelation": true, "DeleteRelation": true,
}

// steps numbers the calls of log: the nth call of each method.
func steps(log []string) []step {
	n := map[string]int{}
	out := make([]step, len(log))
	for i, m := range log {
		n[m]++
		out[i] = step{m, n[m]}
	}
	return out
}

// runFaultCases runs each case once without faults to learn its store
// steps and the state it leaves, then, on a fresh fixture per step, fails
// that step (before the store acts, and — for a write — after it
// committed: a lost acknowledgement) and checks:
//   - the call returns the injected error, wrapped (errors.Is), or it
//     succeeded and everything is written;
//   - nothing partial is visible: the store holds what it held before the
//     call, or (after a lost acknowledgement) exactly what a successful
//     call leaves — memories with their versions, outbox entries, keyword
//     index and audit events together; every state is consistent;
//   - a retry once the fault is cleared succeeds and leaves what a
//     successful call leaves.
//
// A read is failed at its first call only: a failed read writes nothing.
func runFaultCases(t *testing.T, cases []faultCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultFixture(t)
			tc.setup(t, f)
			before := f.state(t)
			f.faults.ResetLog()
			ctx := ingCtx(t)
			require.NoError(t, tc.run(ctx, f))
			want := f.state(t)
			require.NotEqual(t, before, want, "the call writes something")
			consistent(t, want)
			for _, s := range steps(f.faults.Log()) {
				for _, lost := range []bool{false, true} {
					if !writes[s.method] && (lost || s.nth > 1) {
						continue // a failed read writes nothing: its first call is enough
					}
					name := fmt.Sprintf("%s-%d", s.method, s.nth)
					if lost {
						name += "-lost"
					}
					t.Run(name, func(t *testing.T) {
						tc.runStep(t, s, lost, before, want)
					})
				}
			}
		})
	}
}

// runStep runs the case with step s failed (after its commit when lost).
func (tc faultCase) runStep(t *testing.T, s step, lost bool, before, want []string) {
	f := newFaultFixture(t)
	tc.setup(t, f)
	require.Equal(t, before, f.state(t), "the setup is deterministic")
	ctx := ingCtx(t)
	f.faults.Arm(graphtest.Fault{Method: s.method, Nth: s.nth, Lost: lost})
	err := tc.run(ctx, f)
	got := f.state(t)
	f.faults.Clear()
	consistent(t, got)
	if err == nil {
		assert.Equal(t, want, got, "the call succeeded through the fault: all of it is written")
		return
	}
	require.ErrorIs(t, err, graphtest.ErrInjected)
	switch {
	case tc.partial:
		// Whole transactions before the failed one stay; consistent
		// checked each.
	case lost:
		assert.Equal(t, want, got, "the committed write is whole")
		if tc.lostDuplicates {
			return
		}
		err := tc.run(ctx, f)
		if tc.lostRetry != nil {
			require.ErrorIs(t, err, tc.lostRetry)
		} else {
			require.NoError(t, err, "a retry finds the write done")
		}
		sameBut(t, untouched(want), untouched(f.state(t)), nil, tc.retryExtra, "a retry after a lost acknowledgement")
		return
	default:
		assert.Equal(t, before, got, "nothing of a failed call is visible")
	}
	require.NoError(t, tc.run(ctx, f), "a retry once the fault clears")
	got = f.state(t)
	consistent(t, got)
	if tc.partial {
		sameBut(t, untouched(want), untouched(got), nil, tc.retryExtra, "the retry finishes the job")
		return
	}
	assert.Equal(t, want, got, "the retry leaves what a successful call leaves")
}

// TestFaultPartialWrites fails each store step of every multi-step write of
// the engine in turn (see runFaultCases), on the backend graphtest.Open
// selects.
func TestFaultPartialWrites(t *testing.T) {
	runFaultCases(t, []faultCase{
		{
			name:  "ingest",
			setup: func(t *testing.T, f *faultFixture) {},
			run:   ingests(note("Grafana runs on host mon-1.")),
		},
		{
			name: "ingest superseding",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "old", f.writer, note("The build cache lives on host cache-1."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				r := note("The build cache moved to host cache-2.")
				r.Supersedes = f.ids["old"]
				_, err := f.eng.Ingest(ctx, f.writer, r)
				return err
			},
			// A retry finds its target superseded already: rejected, audited.
			retryExtra: []string{"audit ingest.reject IngestRequest"},
		},
		{
			name: "ingest deduplicated",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "first", f.writer, note("Grafana runs on host mon-1."))
			},
			run: ingests(note("Grafana runs on host mon-1.")),
		},
		{
			name: "ingest a document's new version",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "doc", f.writer, runbook(""))
			},
			run: ingests(runbook("\n## Rollback\n\nRun make rollback.\n")),
		},
		{
			name: "batch ingest",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "doc", f.writer, runbook(""))
				f.ingest(t, "old", f.writer, note("The build cache lives on host cache-1."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				moved := note("The build cache moved to host cache-2.")
				moved.Supersedes = f.ids["old"]
				_, err := f.eng.IngestBatch(ctx, f.writer, []engine.IngestRequest{
					note("Grafana runs on host mon-1."),
					runbook("\n## Rollback\n\nRun make rollback.\n"),
					moved,
				})
				return err
			},
			// New memories, then each new version, one transaction each.
			partial:    true,
			retryExtra: []string{"audit ingest.reject IngestRequest"},
		},
		{
			name: "erase a memory",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "secret", f.writer, note("The staging root password is hunter2."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.Erase(ctx, f.admin, f.ids["secret"], "ticket-1")
				return err
			},
		},
		{
			name: "erase a user",
			setup: func(t *testing.T, f *faultFixture) {
				for i, c := range []string{"u2 lives in Lisbon.", "u2 prefers tea.", "u2 owns the billing service."} {
					r := note(c)
					r.Visibility = graph.VisibilityUser
					f.ingest(t, fmt.Sprint("u2-", i), f.other, r)
				}
				f.ingest(t, "kept", f.writer, note("Grafana runs on host mon-1."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.EraseUser(ctx, f.admin, "u2", "gdpr-7")
				return err
			},
			// Each memory's erase event is in its batch's transaction, and
			// the request's summary event in the last one's. A retry finds
			// nothing to erase and audits its own request.
			retryExtra: []string{"audit user.erase User"},
		},
		{
			name: "erase a user with nothing to erase",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "kept", f.writer, note("Grafana runs on host mon-1."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.EraseUser(ctx, f.admin, "u2", "gdpr-7")
				return err
			},
			// A retry after a lost acknowledgement audits the request again.
			lostDuplicates: true,
		},
		{
			name: "archive a memory",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "old", f.writer, note("The build cache lives on host cache-1."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.Archive(ctx, f.writer, f.ids["old"], "moved")
				return err
			},
			lostRetry: graph.ErrConflict, // archived already
		},
		{
			name: "restore a memory",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "old", f.writer, note("The build cache lives on host cache-1."))
				_, err := f.eng.Archive(ingCtx(t), f.writer, f.ids["old"], "moved")
				require.NoError(t, err)
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.Restore(ctx, f.writer, f.ids["old"], "back")
				return err
			},
			lostRetry: graph.ErrConflict, // active already
		},
		{
			name: "accept a proposal",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "pool", f.writer, note("The postgres pool size is 10."))
				p, err := f.eng.Propose(ingCtx(t), f.lib, engine.ProposalRequest{MemoryID: f.ids["pool"], VersionNumber: 1, Content: "The postgres pool size is 20."})
				require.NoError(t, err)
				f.ids["proposal"] = p.ID
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.AcceptProposal(ctx, f.lib, f.ids["proposal"], "")
				return err
			},
			lostRetry: graph.ErrConflict,
		},
		{
			name: "promote a baseline",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "pool", f.writer, note("The postgres pool size is 10."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.PromoteBaseline(ctx, f.lib, engine.PromoteRequest{Name: "release-1"})
				return err
			},
			lostDuplicates: true,
		},
		{
			name: "promote a baseline with an idempotency key",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "pool", f.writer, note("The postgres pool size is 10."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.PromoteBaseline(ctx, f.lib, engine.PromoteRequest{Name: "release-1", IdempotencyKey: "k1"})
				return err
			},
		},
		{
			name: "create a capsule",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "pool", f.writer, note("The postgres pool size is 10."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.CreateCapsule(ctx, f.writer, engine.CapsuleRequest{Subject: "handover", Audience: []string{"bot"},
					MemoryIDs: []string{f.ids["pool"]}, VersionIDs: []string{f.ids["pool.v"]}})
				return err
			},
			lostDuplicates: true,
		},
		{
			name: "create a capsule with an idempotency key",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "pool", f.writer, note("The postgres pool size is 10."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.CreateCapsule(ctx, f.writer, engine.CapsuleRequest{Subject: "handover", Audience: []string{"bot"},
					MemoryIDs: []string{f.ids["pool"]}, VersionIDs: []string{f.ids["pool.v"]}, IdempotencyKey: "k1"})
				return err
			},
		},
		{
			name: "approve an edit",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "pool", f.writer, note("The postgres pool size is 10."))
				r, err := f.eng.ProposeEdit(ingCtx(t), f.writer, f.ids["pool"], engine.EditRequest{Kind: graph.EditRetract, Reason: "wrong"})
				require.NoError(t, err)
				require.Equal(t, graph.EditPending, r.Edit.Status)
				f.ids["edit"] = r.Edit.ID
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.DecideEdit(ctx, f.lib, f.ids["edit"], true, "")
				return err
			},
			lostRetry: graph.ErrConflict,
		},
		{
			name: "create a relation",
			setup: func(t *testing.T, f *faultFixture) {
				f.ingest(t, "api", f.writer, note("The billing API calls the ledger service."))
				f.ingest(t, "ledger", f.writer, note("The ledger service runs on Postgres."))
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.Relate(ctx, f.writer, engine.RelationRequest{From: f.ids["api"], To: f.ids["ledger"], Type: graph.DependsOn, Reason: "calls"})
				return err
			},
		},
		{
			name: "approve a queued write",
			setup: func(t *testing.T, f *faultFixture) {
				r := note("Cache TTL could be 5 minutes.")
				r.SourceKind = graph.SourceProposed
				res := f.ingest(t, "queued", f.writer, r)
				require.Equal(t, engine.StatusPending, res.Status)
				f.ids["request"] = res.RequestID
			},
			run: func(ctx context.Context, f *faultFixture) error {
				_, err := f.eng.ApproveGateRequest(ctx, f.lib, f.ids["request"], "")
				return err
			},
			lostRetry: graph.ErrConflict,
		},
	})
}

// ingests is a case's run: the writer ingests r.
func ingests(r engine.IngestRequest) func(context.Context, *faultFixture) error {
	return func(ctx context.Context, f *faultFixture) error {
		_, err := f.eng.Ingest(ctx, f.writer, r)
		return err
	}
}

// runbook is a document whose content is the deploy runbook and then more.
func runbook(more string) engine.IngestRequest {
	return engine.IngestRequest{Type: "document", Title: "Deploy runbook", SourceKind: graph.SourceIngestedEvidence,
		Content: "# Deploy\n\nRun make deploy on Kubernetes.\n" + more}
}
