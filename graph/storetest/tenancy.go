package storetest

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// world is one tenant's copy of identical content: the fixture plus one of
// every curation record.
type world struct {
	fx                                           fixture
	verID, proposal, decision, baseline, capsule string
	edit, gate, key, receipt                     string
}

func (x *suite) buildWorld(t *testing.T, s graph.Scope) world {
	t.Helper()
	w := world{fx: x.buildFixture(t, s), key: "Shared-Key-One"}
	m1 := w.fx.ids["m1"]
	keyed := memIn(s, "keyed", "keyed content", "go")
	keyed.Memory.UserID, keyed.Memory.CanonicalKey = "u1", w.key
	keyed.Version.Chunks = []graph.ChunkInput{{Key: "all", Start: 0, End: 5}}
	c := x.create(t, keyed)
	w.verID = c.Version.ID
	w.decision, w.proposal, w.baseline, w.capsule, w.edit = x.buildCuration(t, s, c.Version.ID, m1, time.Time{})
	g, err := x.s.CreateGateRequest(ctx(t), graph.GateRequest{Scope: s, Title: "g", Payload: json.RawMessage(`{}`), RequestedBy: "a"},
		graph.AuditEvent{Scope: s, Action: "gate.queue", ActorID: "gate"})
	require.NoError(t, err)
	w.gate = g.ID
	r, err := x.s.CreateContextReceipt(ctx(t), graph.ContextReceipt{Scope: s, PrincipalID: "a", Query: "q",
		Citations: []graph.Citation{{ElementID: m1, VersionID: w.verID}}})
	require.NoError(t, err)
	w.receipt = r.ID
	require.NoError(t, x.s.AppendAudit(ctx(t), graph.AuditEvent{Scope: s, Action: "test.event", SubjectID: m1, ActorID: "a"}))
	return w
}

// testTenantIsolation builds identical content in two tenants and checks
// that no read method of one tenant sees anything of the other.
func testTenantIsolation(t *testing.T, x *suite) {
	a, b := newScope(t), newScope(t)
	wa, wb := x.buildWorld(t, a), x.buildWorld(t, b)
	for _, dir := range []struct {
		name      string
		own       graph.Scope
		mine, its world
	}{{"AseesNothingOfB", a, wa, wb}, {"BseesNothingOfA", b, wb, wa}} {
		t.Run(dir.name, func(t *testing.T) { x.checkIsolation(t, dir.own, dir.mine, dir.its) })
	}
}

func (x *suite) checkIsolation(t *testing.T, own graph.Scope, mine, its world) {
	f := in(own)
	all := f
	all.Statuses = []graph.Status{graph.StatusActive, graph.StatusSuperseded, graph.StatusArchived, graph.StatusRetracted}
	theirIDs := map[string]bool{}
	for _, id := range its.fx.ids {
		theirIDs[id] = true
	}
	noneOfTheirs := func(t *testing.T, method string, ids []string) {
		t.Helper()
		for _, id := range ids {
			assert.False(t, theirIDs[id], "%s returned the other tenant's memory %s", method, id)
		}
	}
	m1, theirM1 := mine.fx.ids["m1"], its.fx.ids["m1"]
	notFound := func(t *testing.T, err error) { t.Helper(); assert.ErrorIs(t, err, graph.ErrNotFound) }

	t.Run("GetMemory", func(t *testing.T) {
		_, err := x.s.GetMemory(ctx(t), all, theirM1)
		notFound(t, err)
		_, err = x.s.GetMemory(ctx(t), f, m1)
		require.NoError(t, err)
	})
	t.Run("GetMemories", func(t *testing.T) {
		ms, err := x.s.GetMemories(ctx(t), all, []string{theirM1, m1})
		require.NoError(t, err)
		assert.Equal(t, []string{m1}, memIDs(ms))
	})
	t.Run("Versions", func(t *testing.T) {
		_, err := x.s.GetVersion(ctx(t), all, its.verID)
		notFound(t, err)
		vs, err := x.s.GetVersions(ctx(t), all, []string{its.verID})
		require.NoError(t, err)
		assert.Empty(t, vs)
		cs, err := x.s.GetChunks(ctx(t), all, its.verID)
		if err == nil {
			assert.Empty(t, cs)
		} else {
			notFound(t, err)
		}
	})
	t.Run("FindActiveByKey", func(t *testing.T) {
		m, err := x.s.FindActiveByKey(ctx(t), graph.Namespace{Scope: own, UserID: "u1", Type: "note"}, mine.key)
		require.NoError(t, err)
		assert.False(t, theirIDs[m.ID])
		assert.Equal(t, own, m.Scope)
	})
	t.Run("Resolve", func(t *testing.T) {
		_, err := x.s.Resolve(ctx(t), all, theirM1)
		notFound(t, err)
	})
	t.Run("ListMemories", func(t *testing.T) {
		got := x.listAll(t, all, 100)
		noneOfTheirs(t, "ListMemories", got)
		assert.Len(t, got, 8)
	})
	t.Run("Candidates", func(t *testing.T) {
		cs, err := x.s.Candidates(ctx(t), all, []string{"go", "postgres", "redis", "k8s", "alice"}, 100)
		require.NoError(t, err)
		noneOfTheirs(t, "Candidates", candIDs(cs))
		assert.Len(t, cs, 7)
	})
	t.Run("Neighbours", func(t *testing.T) {
		ns, err := x.s.Neighbours(ctx(t), all, []string{m1, theirM1}, 100)
		require.NoError(t, err)
		for _, n := range ns {
			assert.NotEqual(t, theirM1, n.SeedID, "no neighbours for the other tenant's seed")
			assert.False(t, theirIDs[n.Memory.ID])
		}
		assert.NotEmpty(t, ns)
	})
	t.Run("KeywordSearch", func(t *testing.T) {
		ks, err := x.s.KeywordSearch(ctx(t), all, "postgres go kubernetes lunch keyed", 100)
		require.NoError(t, err)
		noneOfTheirs(t, "KeywordSearch", scoredIDs(ks))
		assert.Len(t, ks, 8)
	})
	t.Run("Audit", func(t *testing.T) {
		evs, _, err := x.s.ListAudit(ctx(t), all, graph.AuditQuery{}, graph.Page{Limit: 1000})
		require.NoError(t, err)
		assert.NotEmpty(t, evs)
		for _, e := range evs {
			assert.Equal(t, own.TenantID, e.Scope.TenantID)
		}
		evs, _, err = x.s.ListAudit(ctx(t), all, graph.AuditQuery{SubjectID: theirM1}, graph.Page{})
		require.NoError(t, err)
		assert.Empty(t, evs)
	})
	t.Run("CurationRecords", func(t *testing.T) {
		if x.pr != nil {
			_, err := x.pr.GetProposal(ctx(t), f, its.proposal)
			notFound(t, err)
			_, err = x.pr.GetDecision(ctx(t), f, its.decision)
			notFound(t, err)
			if its.baseline != "" {
				_, err = x.pr.GetBaseline(ctx(t), f, its.baseline)
				notFound(t, err)
			}
			lb, err := x.pr.ListBaselines(ctx(t), f, 1000)
			require.NoError(t, err)
			for _, b := range lb {
				assert.Equal(t, mine.baseline, b.ID, "only its own tenant's baselines")
			}
		}
		if x.ed != nil {
			_, err := x.ed.GetEdit(ctx(t), f, its.edit)
			notFound(t, err)
			es, err := x.ed.ListEdits(ctx(t), f, graph.EditQuery{})
			require.NoError(t, err)
			require.Len(t, es, 1)
			assert.Equal(t, mine.edit, es[0].ID)
			es, err = x.ed.ListEdits(ctx(t), f, graph.EditQuery{MemoryIDs: []string{theirM1}})
			require.NoError(t, err)
			assert.Empty(t, es)
		}
		if x.cp != nil {
			_, err := x.cp.GetCapsule(ctx(t), f, capsuleReader, its.capsule)
			notFound(t, err)
		}
		_, err := x.s.GetGateRequest(ctx(t), f, its.gate)
		notFound(t, err)
		_, err = x.s.GetContextReceipt(ctx(t), f, its.receipt)
		notFound(t, err)
		_, err = x.s.GetContextReceipt(ctx(t), f, mine.receipt)
		require.NoError(t, err)
		gs, _, err := x.s.ListGateRequests(ctx(t), f, "", graph.Page{})
		require.NoError(t, err)
		require.Len(t, gs, 1)
		assert.Equal(t, mine.gate, gs[0].ID)
	})
	t.Run("WritesRefused", func(t *testing.T) {
		_, err := x.s.AddVersion(ctx(t), own, theirM1, graph.VersionInput{Content: "hijack"})
		notFound(t, err)
		notFound(t, x.s.Archive(ctx(t), own, theirM1))
		if x.ed != nil {
			_, err = x.ed.DecideEdit(ctx(t), own, its.edit, graph.EditApproved, "x", base)
			notFound(t, err)
		}
		_, err = x.s.DecideGateRequest(ctx(t), own, its.gate, graph.GateDecision{Status: graph.GateApproved, DecidedBy: "x", At: base},
			graph.AuditEvent{Scope: own, Action: "gate.approve", ActorID: "x"})
		notFound(t, err)
	})
}

// testScopeInheritance checks the scope half of the access rule on memories
// and on every other record read by filter: a plain reader sees its own
// scope and those above it (Scope.Sees), never beneath; a reader with
// Subscopes also sees beneath (Scope.Contains). Writes reach the writer's
// scope and beneath.
func testScopeInheritance(t *testing.T, x *suite) {
	tenant := newScope(t).TenantID
	sc := func(org, repo string) graph.Scope { return graph.Scope{TenantID: tenant, OrgID: org, RepoID: repo} }
	records := map[string]graph.Scope{
		"tenant": sc("", ""), "o1": sc("o1", ""), "o1r1": sc("o1", "r1"), "o1r2": sc("o1", "r2"), "o2r1": sc("o2", "r1"),
		"r1": sc("", "r1"), // a repo with no org: seen by {T, "", r1} only, not by {T, o1, r1}
	}
	// Broadest first: each record is newer than the broader ones, so the
	// newest baseline a reader sees is its narrowest.
	order := []string{"tenant", "o1", "r1", "o1r1", "o1r2", "o2r1"}
	require.ElementsMatch(t, order, slices.Collect(maps.Keys(records)))
	ids := map[string]string{}
	recs := map[string]scopedRecords{}
	for i, name := range order {
		s := records[name]
		c := x.create(t, memIn(s, "scoped "+name, "scope test", "scoped"))
		ids[name] = c.Memory.ID
		recs[name] = x.buildRecords(t, s, c, base.Add(time.Duration(i)*time.Minute))
	}
	plain, sub := graph.Reader{UserID: "u1"}, graph.Reader{UserID: "u1", Subscopes: true}
	for _, c := range []struct {
		name   string
		scope  graph.Scope
		reader graph.Reader
		want   []string
	}{
		{"TenantWideSeesTenantOnly", sc("", ""), plain, []string{"tenant"}},
		{"OrgSeesOrgAndBroader", sc("o1", ""), plain, []string{"tenant", "o1"}},
		{"RepoSeesRepoAndBroader", sc("o1", "r1"), plain, []string{"tenant", "o1", "o1r1"}},
		{"OtherOrgSameRepoName", sc("o2", "r1"), plain, []string{"tenant", "o2r1"}},
		{"RepoWithoutOrg", sc("", "r1"), plain, []string{"tenant", "r1"}},
		{"UnknownOrg", sc("o9", ""), plain, []string{"tenant"}},
		{"SubscopesTenantWideSeesAll", sc("", ""), sub, []string{"tenant", "o1", "o1r1", "o1r2", "o2r1", "r1"}},
		{"SubscopesOrgSeesBeneath", sc("o1", ""), sub, []string{"tenant", "o1", "o1r1", "o1r2", "r1"}},
		{"SubscopesRepo", sc("o1", "r1"), sub, []string{"tenant", "o1", "o1r1", "r1"}},
		{"SubscopesAnyOrgOneRepo", sc("", "r1"), sub, []string{"tenant", "o1", "o1r1", "o2r1", "r1"}},
		{"SubscopesUnknownOrg", sc("o9", ""), sub, []string{"tenant", "r1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := graph.Filter{Scope: c.scope, Reader: c.reader}
			seen := map[string]bool{}
			var want []string
			for _, n := range c.want {
				seen[n] = true
				want = append(want, ids[n])
			}
			for name, s := range records {
				assert.Equal(t, seen[name], f.Admits(graph.Memory{Scope: s}), "Filter.Admits disagrees on %s", name)
			}
			assert.ElementsMatch(t, want, x.listAll(t, f, 100), "ListMemories")
			cs, err := x.s.Candidates(ctx(t), f, []string{"scoped"}, 100)
			require.NoError(t, err)
			assert.ElementsMatch(t, want, candIDs(cs), "Candidates")
			ks, err := x.s.KeywordSearch(ctx(t), f, "scoped", 100)
			require.NoError(t, err)
			assert.ElementsMatch(t, want, scoredIDs(ks), "KeywordSearch")
			for name, id := range ids {
				_, err := x.s.GetMemory(ctx(t), f, id)
				if seen[name] {
					assert.NoError(t, err, "GetMemory %s", name)
				} else {
					assert.ErrorIs(t, err, graph.ErrNotFound, "GetMemory %s", name)
				}
			}
			x.checkRecords(t, f, order, recs, seen)
		})
	}
	t.Run("WriteOutsideScope", func(t *testing.T) {
		// A repo-scoped writer cannot archive an org-wide record of another org.
		assert.ErrorIs(t, x.s.Archive(ctx(t), sc("o2", "r1"), ids["o1r1"]), graph.ErrNotFound)
		// Writes reach beneath the writer's scope (whether a principal may
		// write there is the engine's check: permission subscopes).
		assert.NoError(t, x.s.Archive(ctx(t), sc("o1", ""), ids["o1r1"]))
	})
}

// scopedRecords is one of every record read by filter, in one scope.
type scopedRecords struct {
	proposal, decision, baseline, capsule, edit, gate, receipt, audit string
}

// buildRecords writes one of every record into scope s around memory c
// (the baseline dated at, so that the newest visible one is known).
func (x *suite) buildRecords(t *testing.T, s graph.Scope, c graph.Created, at time.Time) scopedRecords {
	t.Helper()
	var r scopedRecords
	r.decision, r.proposal, r.baseline, r.capsule, r.edit = x.buildCuration(t, s, c.Version.ID, c.Memory.ID, at)
	g, err := x.s.CreateGateRequest(ctx(t), graph.GateRequest{Scope: s, Title: "g", Payload: json.RawMessage(`{}`), RequestedBy: "a"},
		graph.AuditEvent{Scope: s, Action: "gate.queue", ActorID: "gate"})
	require.NoError(t, err)
	r.gate = g.ID
	rc, err := x.s.CreateContextReceipt(ctx(t), graph.ContextReceipt{Scope: s, PrincipalID: "a", Query: "q",
		Citations: []graph.Citation{{ElementID: c.Memory.ID, VersionID: c.Version.ID}}})
	require.NoError(t, err)
	r.receipt = rc.ID
	r.audit = graph.NewID()
	require.NoError(t, x.s.AppendAudit(ctx(t), graph.AuditEvent{Scope: s, Action: "test.scoped", SubjectID: r.audit, ActorID: "a"}))
	return r
}

// buildCuration writes one of every record of the capabilities the store
// implements into scope s (the decision rejects a proposal on verID; the
// baseline pins verID and is dated at, only when s is a repository's:
// baselines are published per repository; the capsule and edit are on
// memory memID) and returns their ids, "" for a record not written.
func (x *suite) buildCuration(t *testing.T, s graph.Scope, verID, memID string, at time.Time) (decision, proposal, baseline, capsule, edit string) {
	t.Helper()
	if x.pr != nil {
		d := x.decide(t, graph.Decision{Scope: s, Kind: "curation", Outcome: "reject", DecidedBy: "l"}, verID)
		p, err := x.pr.CreateProposal(ctx(t), graph.Proposal{Scope: s, Title: "p", Content: "c", ProposedBy: "a", TargetVersionID: verID})
		require.NoError(t, err)
		decision, proposal = d.ID, p.ID
		if s.RepoID != "" {
			b, err := x.pr.PromoteBaseline(ctx(t), graph.Baseline{Scope: s, Name: "b", VersionIDs: []string{verID}, PublishedBy: "l", CreatedAt: at})
			require.NoError(t, err)
			baseline = b.ID
		}
	}
	if x.cp != nil {
		cp, err := x.cp.CreateCapsule(ctx(t), minCapsule(s, memID))
		require.NoError(t, err)
		capsule = cp.ID
	}
	if x.ed != nil {
		e, err := x.ed.CreateEdit(ctx(t), graph.Edit{Scope: s, Kind: graph.EditRetract, TargetMemoryID: memID, CreatedBy: "l"})
		require.NoError(t, err)
		edit = e.ID
	}
	return decision, proposal, baseline, capsule, edit
}

// checkRecords asserts that every record read under f returns exactly the
// records of the scopes named in seen (order: oldest first).
func (x *suite) checkRecords(t *testing.T, f graph.Filter, order []string, recs map[string]scopedRecords, seen map[string]bool) {
	t.Helper()
	var wantEdits, wantGates, wantAudit []string
	newest := ""
	for _, name := range order {
		r := recs[name]
		type get struct {
			kind string
			err  error
		}
		gets := []get{
			{"gate request", err1(x.s.GetGateRequest(ctx(t), f, r.gate))},
			{"context receipt", err1(x.s.GetContextReceipt(ctx(t), f, r.receipt))},
		}
		if x.pr != nil {
			gets = append(gets, get{"proposal", err1(x.pr.GetProposal(ctx(t), f, r.proposal))},
				get{"decision", err1(x.pr.GetDecision(ctx(t), f, r.decision))})
			if r.baseline != "" {
				gets = append(gets, get{"baseline", err1(x.pr.GetBaseline(ctx(t), f, r.baseline))})
			}
		}
		if x.cp != nil {
			gets = append(gets, get{"capsule", err1(x.cp.GetCapsule(ctx(t), f, capsuleReader, r.capsule))})
		}
		if x.ed != nil {
			gets = append(gets, get{"edit", err1(x.ed.GetEdit(ctx(t), f, r.edit))})
		}
		for _, g := range gets {
			if seen[name] {
				assert.NoError(t, g.err, "%s of %s", g.kind, name)
			} else {
				assert.ErrorIs(t, g.err, graph.ErrNotFound, "%s of %s", g.kind, name)
			}
		}
		if seen[name] {
			wantEdits, wantGates, wantAudit = append(wantEdits, r.edit), append(wantGates, r.gate), append(wantAudit, r.audit)
			if r.baseline != "" {
				newest = r.baseline
			}
		}
	}
	var got []string
	if x.ed != nil {
		es, err := x.ed.ListEdits(ctx(t), f, graph.EditQuery{})
		require.NoError(t, err)
		for _, e := range es {
			got = append(got, e.ID)
		}
		assert.ElementsMatch(t, wantEdits, got, "ListEdits")
	}
	gs, _, err := x.s.ListGateRequests(ctx(t), f, "", graph.Page{Limit: 1000})
	require.NoError(t, err)
	got = nil
	for _, g := range gs {
		got = append(got, g.ID)
	}
	assert.ElementsMatch(t, wantGates, got, "ListGateRequests")
	evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{Action: "test.scoped"}, graph.Page{Limit: 1000})
	require.NoError(t, err)
	got = nil
	for _, e := range evs {
		got = append(got, e.SubjectID)
	}
	assert.ElementsMatch(t, wantAudit, got, "ListAudit")
	if x.pr != nil {
		bs, err := x.pr.ListBaselines(ctx(t), f, 1)
		require.NoError(t, err)
		if newest == "" {
			assert.Empty(t, bs, "ListBaselines")
		} else if assert.Len(t, bs, 1, "ListBaselines") {
			assert.Equal(t, newest, bs[0].ID, "ListBaselines: the newest visible one first")
		}
	}
}

// err1 keeps the error of a two-value call.
func err1[T any](_ T, err error) error { return err }
