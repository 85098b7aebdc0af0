package storetest

import (
	"time"

	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// loop is one memory with a proposal in a given state.
type loop struct {
	s        graph.Scope
	mem, v1  string
	proposal graph.Proposal
}

func (x *suite) auditOf(t *testing.T, s graph.Scope, subject string) []string {
	t.Helper()
	evs, _, err := x.s.ListAudit(ctx(t), in(s), graph.AuditQuery{SubjectID: subject}, graph.Page{Limit: 100})
	require.NoError(t, err)
	var out []string
	for _, e := range evs {
		out = append(out, e.Action)
	}
	return out
}

func event(s graph.Scope, action, subject string) graph.AuditEvent {
	return graph.AuditEvent{ID: "a-" + graph.NewID(), Scope: s, Action: action, SubjectKind: "Proposal",
		SubjectID: subject, ActorID: "curator", Outcome: action}
}

// propose writes an open proposal on l's memory targeting version target.
func (x *suite) propose(t *testing.T, s graph.Scope, mem, target, content string) graph.Proposal {
	t.Helper()
	id := "p-" + graph.NewID()
	p, err := x.pr.CreateProposal(ctx(t), graph.Proposal{ID: id, Scope: s, MemoryID: mem, Title: "fix", Content: content,
		ProposedBy: "agent-1", TargetVersionID: target}, event(s, "proposal.create", id))
	require.NoError(t, err)
	assert.Equal(t, graph.ProposalOpen, p.Status)
	return p
}

func rejection(s graph.Scope) graph.Decision {
	return graph.Decision{Scope: s, Kind: "curation", Outcome: "rejected", Reason: "wrong", DecidedBy: "curator"}
}

// setUp builds a proposal in state: open (pinned to the current version),
// stale (open, but the memory moved on), accepted, rejected or rebased.
func (x *suite) setUp(t *testing.T, state string) loop {
	t.Helper()
	s := newScope(t)
	c := x.create(t, memIn(s, "pool", "postgres pool size is 10", "postgres"))
	l := loop{s: s, mem: c.Memory.ID, v1: c.Version.ID}
	l.proposal = x.propose(t, s, l.mem, l.v1, "postgres pool size is 20")
	var err error
	switch state {
	case "open":
	case "stale", "rebased":
		_, err = x.s.AddVersion(ctx(t), s, l.mem, graph.VersionInput{Content: "postgres pool size is 15"})
		require.NoError(t, err)
		if state == "rebased" {
			_, err = x.pr.RebaseProposal(ctx(t), s, l.proposal.ID, x.successor(t, l))
		}
	case "accepted":
		_, _, err = x.pr.AcceptProposal(ctx(t), s, l.proposal.ID, graph.VersionInput{Content: l.proposal.Content})
	case "rejected":
		_, _, err = x.pr.RejectProposal(ctx(t), s, l.proposal.ID, rejection(s))
	default:
		t.Fatalf("unknown state %q", state)
	}
	require.NoError(t, err, "set up %s", state)
	return l
}

// successor is the rebase of l's proposal onto its memory's current version.
func (x *suite) successor(t *testing.T, l loop) graph.Proposal {
	t.Helper()
	m, err := x.s.GetMemory(ctx(t), in(l.s), l.mem)
	require.NoError(t, err)
	return graph.Proposal{ID: "p-" + graph.NewID(), Scope: l.s, MemoryID: l.mem, Title: "fix", Content: l.proposal.Content,
		ProposedBy: "agent-1", TargetVersionID: m.CurrentVersionID}
}

// testProposalTransitions: every transition (accept, reject, rebase) from
// every state. Allowed: accept of an open proposal pinned to the current
// version, reject of any open one, rebase of an open one whose memory moved
// on. Everything else is ErrConflict and writes nothing (no version, no
// decision, no audit event, the state unchanged).
func testProposalTransitions(t *testing.T, x *suite) {
	ok := map[string]map[string]bool{
		"open":     {"accept": true, "reject": true, "rebase": false},
		"stale":    {"accept": false, "reject": true, "rebase": true},
		"accepted": {},
		"rejected": {},
		"rebased":  {},
	}
	for _, state := range []string{"open", "stale", "accepted", "rejected", "rebased"} {
		for _, op := range []string{"accept", "reject", "rebase"} {
			t.Run(state+"/"+op, func(t *testing.T) {
				l := x.setUp(t, state)
				before, err := x.pr.GetProposal(ctx(t), in(l.s), l.proposal.ID)
				require.NoError(t, err)
				versions, err := x.s.ListVersions(ctx(t), in(l.s), l.mem)
				require.NoError(t, err)
				trail := x.auditOf(t, l.s, l.proposal.ID)
				var got graph.Proposal
				switch op {
				case "accept":
					vin := graph.VersionInput{Content: l.proposal.Content, Audit: []graph.AuditEvent{event(l.s, "proposal.accept", l.proposal.ID)}}
					var v graph.Version
					got, v, err = x.pr.AcceptProposal(ctx(t), l.s, l.proposal.ID, vin)
					if err == nil {
						assert.Equal(t, graph.ProposalAccepted, got.Status)
						assert.Equal(t, v.ID, got.AcceptedVersionID, "ACCEPTED_AS")
						assert.Equal(t, len(versions)+1, v.Number)
						m, err := x.s.GetMemory(ctx(t), in(l.s), l.mem)
						require.NoError(t, err)
						assert.Equal(t, v.ID, m.CurrentVersionID, "the accepted version is current")
					}
				case "reject":
					var d graph.Decision
					got, d, err = x.pr.RejectProposal(ctx(t), l.s, l.proposal.ID, rejection(l.s), event(l.s, "proposal.reject", l.proposal.ID))
					if err == nil {
						assert.Equal(t, graph.ProposalRejected, got.Status)
						assert.Equal(t, d.ID, got.RejectedDecisionID, "REJECTED_BECAUSE")
						rd, err := x.pr.GetDecision(ctx(t), in(l.s), d.ID)
						require.NoError(t, err)
						assert.Equal(t, "wrong", rd.Reason)
					}
				case "rebase":
					next := x.successor(t, l)
					got, err = x.pr.RebaseProposal(ctx(t), l.s, l.proposal.ID, next, event(l.s, "proposal.rebase", l.proposal.ID))
					if err == nil {
						assert.Equal(t, graph.ProposalOpen, got.Status)
						assert.Equal(t, next.TargetVersionID, got.TargetVersionID)
						old, err := x.pr.GetProposal(ctx(t), in(l.s), l.proposal.ID)
						require.NoError(t, err)
						assert.Equal(t, graph.ProposalRebased, old.Status)
						assert.Equal(t, got.ID, old.RebasedToID, "REBASED_TO")
						assert.Equal(t, next.TargetVersionID, old.RebasedToVersionID)
						_, _, err = x.pr.AcceptProposal(ctx(t), l.s, got.ID, graph.VersionInput{Content: got.Content})
						assert.NoError(t, err, "the rebased proposal is accepted")
					}
				}
				if ok[state][op] {
					require.NoError(t, err)
					assert.Len(t, x.auditOf(t, l.s, l.proposal.ID), len(trail)+1, "the audit event is written with the change")
					return
				}
				require.ErrorIs(t, err, graph.ErrConflict)
				if state == "stale" && op == "accept" {
					assert.Contains(t, err.Error(), "rebase", "a stale accept says to rebase")
				}
				after, err := x.pr.GetProposal(ctx(t), in(l.s), l.proposal.ID)
				require.NoError(t, err)
				x.sameTime(t, before.CreatedAt, after.CreatedAt, "created_at")
				after.CreatedAt = before.CreatedAt
				assert.Equal(t, before, after, "a refused transition changes nothing")
				now, err := x.s.ListVersions(ctx(t), in(l.s), l.mem)
				require.NoError(t, err)
				assert.Len(t, now, len(versions), "a refused transition adds no version")
				assert.Equal(t, trail, x.auditOf(t, l.s, l.proposal.ID), "a refused transition writes no audit event")
			})
		}
	}
}

// testProposalReach: a proposal in another tenant is not found by any
// transition; a proposal must target a version of its memory; a memory
// no longer active cannot take an accept.
func testProposalReach(t *testing.T, x *suite) {
	l := x.setUp(t, "open")
	other := newScope(t)
	_, _, err := x.pr.AcceptProposal(ctx(t), other, l.proposal.ID, graph.VersionInput{Content: "x"})
	assert.ErrorIs(t, err, graph.ErrNotFound, "accept from another tenant")
	_, _, err = x.pr.RejectProposal(ctx(t), other, l.proposal.ID, rejection(other))
	assert.ErrorIs(t, err, graph.ErrNotFound, "reject from another tenant")
	_, err = x.pr.RebaseProposal(ctx(t), other, l.proposal.ID, x.successor(t, l))
	assert.ErrorIs(t, err, graph.ErrNotFound, "rebase from another tenant")
	_, err = x.pr.GetProposal(ctx(t), in(other), l.proposal.ID)
	assert.ErrorIs(t, err, graph.ErrNotFound)

	c2 := x.create(t, memIn(l.s, "other", "another memory"))
	_, err = x.pr.CreateProposal(ctx(t), graph.Proposal{Scope: l.s, MemoryID: l.mem, Title: "t", Content: "c",
		ProposedBy: "a", TargetVersionID: c2.Version.ID})
	assert.ErrorIs(t, err, graph.ErrInvalid, "a version of another memory")

	require.NoError(t, x.s.Archive(ctx(t), l.s, l.mem))
	_, _, err = x.pr.AcceptProposal(ctx(t), l.s, l.proposal.ID, graph.VersionInput{Content: "x"})
	assert.ErrorIs(t, err, graph.ErrConflict, "accept on an archived memory")
}

// testProposalList: newest first, by memory and status, and the user rule:
// a proposal about another user's private memory is left out.
func testProposalList(t *testing.T, x *suite) {
	s := newScope(t)
	a := x.create(t, memIn(s, "a", "memory a"))
	priv := memIn(s, "b", "memory b")
	priv.Memory.UserID, priv.Memory.Visibility = "bob", graph.VisibilityUser
	b := x.create(t, priv)
	p1 := x.propose(t, s, a.Memory.ID, a.Version.ID, "a1")
	p2 := x.propose(t, s, a.Memory.ID, a.Version.ID, "a2")
	p3 := x.propose(t, s, b.Memory.ID, b.Version.ID, "b1")
	_, _, err := x.pr.RejectProposal(ctx(t), s, p1.ID, rejection(s))
	require.NoError(t, err)
	ids := func(f graph.Filter, q graph.ProposalQuery) []string {
		t.Helper()
		q.Limit = 10
		got, err := x.pr.ListProposals(ctx(t), f, q)
		require.NoError(t, err)
		var out []string
		for _, p := range got {
			out = append(out, p.ID)
		}
		return out
	}
	assert.Equal(t, []string{p3.ID, p2.ID, p1.ID}, ids(in(s), graph.ProposalQuery{}), "newest first")
	assert.Equal(t, []string{p2.ID, p1.ID}, ids(in(s), graph.ProposalQuery{MemoryID: a.Memory.ID}))
	assert.Equal(t, []string{p1.ID}, ids(in(s), graph.ProposalQuery{Status: graph.ProposalRejected}))
	alice := graph.Filter{Scope: s, Reader: graph.Reader{UserID: "alice"}}
	assert.Equal(t, []string{p2.ID, p1.ID}, ids(alice, graph.ProposalQuery{}), "bob's private memory's proposals")
	bob := graph.Filter{Scope: s, Reader: graph.Reader{UserID: "bob"}}
	assert.Equal(t, []string{p3.ID, p2.ID, p1.ID}, ids(bob, graph.ProposalQuery{}))
	assert.Empty(t, ids(in(newScope(t)), graph.ProposalQuery{}), "another tenant")
	_, err = x.pr.ListProposals(ctx(t), in(s), graph.ProposalQuery{Limit: 0})
	assert.ErrorIs(t, err, graph.ErrInvalid)
}

// testBaselinePromote: a promote snapshots the current version of every
// active memory of its exact repository, with its audit event; the newest
// baseline of each repository is its published one.
func testBaselinePromote(t *testing.T, x *suite) {
	tenant := newScope(t)
	r1 := graph.Scope{TenantID: tenant.TenantID, OrgID: "o", RepoID: "r1"}
	r2 := graph.Scope{TenantID: tenant.TenantID, OrgID: "o", RepoID: "r2"}
	a := x.create(t, memIn(r1, "a", "memory a"))
	b := x.create(t, memIn(r1, "b", "memory b"))
	gone := x.create(t, memIn(r1, "gone", "archived memory"))
	require.NoError(t, x.s.Archive(ctx(t), r1, gone.Memory.ID))
	x.create(t, memIn(r2, "c", "memory c"))
	x.create(t, memIn(tenant, "wide", "tenant-wide memory"))
	b2, err := x.s.AddVersion(ctx(t), r1, b.Memory.ID, graph.VersionInput{Content: "memory b, second"})
	require.NoError(t, err)

	_, err = x.pr.PromoteBaseline(ctx(t), graph.Baseline{Scope: tenant, Name: "x", PublishedBy: "l"})
	assert.ErrorIs(t, err, graph.ErrInvalid, "a tenant-wide baseline")
	_, err = x.pr.PromoteBaseline(ctx(t), graph.Baseline{Scope: graph.Scope{TenantID: tenant.TenantID, OrgID: "o", RepoID: "empty"},
		Name: "x", PublishedBy: "l"})
	assert.ErrorIs(t, err, graph.ErrInvalid, "nothing to publish")

	id := "b-" + graph.NewID()
	first, err := x.pr.PromoteBaseline(ctx(t), graph.Baseline{ID: id, Scope: r1, Name: "release-1", PublishedBy: "l"},
		graph.AuditEvent{ID: "a-" + graph.NewID(), Scope: r1, Action: "baseline.promote", SubjectKind: "Baseline", SubjectID: id, ActorID: "l"})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{a.Version.ID, b2.ID}, first.VersionIDs, "current versions of r1's active memories")
	got, err := x.pr.GetBaseline(ctx(t), in(r1), id)
	require.NoError(t, err)
	assert.ElementsMatch(t, first.VersionIDs, got.VersionIDs, "PUBLISHES")
	assert.Equal(t, []string{"baseline.promote"}, x.auditOf(t, r1, id))

	_, err = x.pr.PromoteBaseline(ctx(t), graph.Baseline{Scope: r1, Name: "x", VersionIDs: []string{"v-" + graph.NewID()}, PublishedBy: "l"})
	assert.ErrorIs(t, err, graph.ErrNotFound, "an unknown version")
	rollback, err := x.pr.PromoteBaseline(ctx(t), graph.Baseline{Scope: r1, Name: "rollback", VersionIDs: []string{a.Version.ID, b.Version.ID}, PublishedBy: "l"})
	require.NoError(t, err)
	second, err := x.pr.PromoteBaseline(ctx(t), graph.Baseline{Scope: r2, Name: "r2-1", PublishedBy: "l"})
	require.NoError(t, err)

	pub, err := x.pr.PublishedBaselines(ctx(t), graph.Filter{Scope: tenant, Reader: graph.Reader{AllUsers: true, Subscopes: true}})
	require.NoError(t, err)
	var pubIDs []string
	for _, p := range pub {
		pubIDs = append(pubIDs, p.ID)
	}
	assert.ElementsMatch(t, []string{rollback.ID, second.ID}, pubIDs, "the newest baseline of each repository")
	pub, err = x.pr.PublishedBaselines(ctx(t), in(r1))
	require.NoError(t, err)
	require.Len(t, pub, 1)
	assert.Equal(t, rollback.ID, pub[0].ID)
	assert.ElementsMatch(t, []string{a.Version.ID, b.Version.ID}, pub[0].VersionIDs)
	pub, err = x.pr.PublishedBaselines(ctx(t), in(newScope(t)))
	require.NoError(t, err)
	assert.Empty(t, pub, "another tenant")

	// As known at an instant between the first promote and the rollback,
	// the first is r1's published baseline; before it, r1 has none.
	require.True(t, rollback.CreatedAt.After(first.CreatedAt), "first %v, rollback %v", first.CreatedAt, rollback.CreatedAt)
	between := in(r1)
	between.KnownAt = first.CreatedAt.Add(rollback.CreatedAt.Sub(first.CreatedAt) / 2)
	pub, err = x.pr.PublishedBaselines(ctx(t), between)
	require.NoError(t, err)
	require.Len(t, pub, 1, "as known between the promotes")
	assert.Equal(t, first.ID, pub[0].ID)
	before := in(r1)
	before.KnownAt = first.CreatedAt.Add(-time.Second)
	pub, err = x.pr.PublishedBaselines(ctx(t), before)
	require.NoError(t, err)
	assert.Empty(t, pub, "as known before any promote")

	list, err := x.pr.ListBaselines(ctx(t), in(r1), 10)
	require.NoError(t, err)
	var listIDs []string
	for _, l := range list {
		listIDs = append(listIDs, l.ID)
	}
	assert.Equal(t, []string{rollback.ID, first.ID}, listIDs, "r1's baselines, newest first")
}

// testProposalErase: erasing a memory empties the proposals on it and the
// reasons of the decisions that rejected them.
func testProposalErase(t *testing.T, x *suite) {
	l := x.setUp(t, "open")
	rejected := x.propose(t, l.s, l.mem, l.v1, "postgres pool size is 30")
	_, d, err := x.pr.RejectProposal(ctx(t), l.s, rejected.ID, graph.Decision{Scope: l.s, Kind: "curation",
		Outcome: "rejected", Reason: "30 is the postgres pool size of staging", DecidedBy: "curator"})
	require.NoError(t, err)
	_, err = x.s.Erase(ctx(t), l.s, graph.EraseInput{IDs: []string{l.mem}})
	require.NoError(t, err)
	for _, id := range []string{l.proposal.ID, rejected.ID} {
		p, err := x.pr.GetProposal(ctx(t), in(l.s), id)
		require.NoError(t, err)
		assert.Empty(t, p.Content, "proposal content")
		assert.Empty(t, p.Title, "proposal title")
	}
	rd, err := x.pr.GetDecision(ctx(t), in(l.s), d.ID)
	require.NoError(t, err)
	assert.Empty(t, rd.Reason, "the rejection's reason")
}
