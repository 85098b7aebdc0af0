package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// testProposalsRoundTrip stores and reads back decisions, proposals (with
// their version edges) and baselines, in a repository (baselines are
// published per repository).
func testProposalsRoundTrip(t *testing.T, x *suite) {
	s := newScope(t)
	s.OrgID, s.RepoID = "o1", "r1"
	f := in(s)
	verID := x.create(t, memIn(s, "curated", "a memory to curate", "go")).Version.ID
	v2, err := x.s.AddVersion(ctx(t), s, x.activeCopy(t, s), graph.VersionInput{Content: "second"})
	require.NoError(t, err)

	dec := graph.Decision{ID: "d-" + graph.NewID(), Scope: s, Kind: "curation", Outcome: "reject",
		Rule: "dup", Reason: "duplicate", DecidedBy: "lib-1", CreatedAt: base}
	gotDec := x.decide(t, dec, verID)
	assert.Equal(t, dec.ID, gotDec.ID)
	rd, err := x.pr.GetDecision(ctx(t), f, dec.ID)
	require.NoError(t, err)
	x.sameTime(t, dec.CreatedAt, rd.CreatedAt, "decision.created_at")
	rd.CreatedAt = dec.CreatedAt
	assert.Equal(t, dec, rd)

	p := graph.Proposal{ID: "p-" + graph.NewID(), Scope: s, Title: "fix", Content: "better text",
		Status: graph.ProposalRejected, ProposedBy: "agent-1", TargetVersionID: verID,
		RebasedToVersionID: v2.ID, AcceptedVersionID: v2.ID, RejectedDecisionID: dec.ID, CreatedAt: base}
	_, err = x.pr.CreateProposal(ctx(t), p)
	require.NoError(t, err)
	rp, err := x.pr.GetProposal(ctx(t), f, p.ID)
	require.NoError(t, err)
	x.sameTime(t, p.CreatedAt, rp.CreatedAt, "proposal.created_at")
	rp.CreatedAt = p.CreatedAt
	assert.Equal(t, p, rp, "TARGETS_VERSION, REBASED_TO, ACCEPTED_AS, REJECTED_BECAUSE")

	b := graph.Baseline{ID: "b-" + graph.NewID(), Scope: s, Name: "release-1", VersionIDs: []string{verID, v2.ID},
		PublishedBy: "lib-1", CreatedAt: base}
	_, err = x.pr.PromoteBaseline(ctx(t), b)
	require.NoError(t, err)
	rb, err := x.pr.GetBaseline(ctx(t), f, b.ID)
	require.NoError(t, err)
	assert.ElementsMatch(t, b.VersionIDs, rb.VersionIDs, "PUBLISHES")
	assert.Equal(t, b.Name, rb.Name)
	assert.Equal(t, b.PublishedBy, rb.PublishedBy)
	assert.Equal(t, s, rb.Scope)
	b2 := graph.Baseline{ID: "b-" + graph.NewID(), Scope: s, Name: "release-2", VersionIDs: []string{v2.ID},
		PublishedBy: "lib-1", CreatedAt: base.Add(time.Hour)}
	_, err = x.pr.PromoteBaseline(ctx(t), b2)
	require.NoError(t, err)
	lb, err := x.pr.ListBaselines(ctx(t), f, 1)
	require.NoError(t, err)
	if assert.Len(t, lb, 1) {
		assert.Equal(t, b2.ID, lb[0].ID, "the newest baseline first")
	}
}

// decide writes decision d as the stores' users do: it rejects a new
// proposal on version verID (in d's scope) with it.
func (x *suite) decide(t *testing.T, d graph.Decision, verID string) graph.Decision {
	t.Helper()
	v, err := x.s.GetVersion(ctx(t), graph.Filter{Scope: d.Scope, Reader: graph.System}, verID)
	require.NoError(t, err)
	p, err := x.pr.CreateProposal(ctx(t), graph.Proposal{Scope: d.Scope, Title: "p", Content: "c", ProposedBy: "a",
		MemoryID: v.MemoryID, TargetVersionID: verID})
	require.NoError(t, err)
	_, got, err := x.pr.RejectProposal(ctx(t), d.Scope, p.ID, d)
	require.NoError(t, err)
	return got
}

// testEditsRoundTrip stores and reads back edits of every shape, and settles
// them once.
func testEditsRoundTrip(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	w := x.create(t, memIn(s, "curated", "a memory to curate", "go"))
	memID, verID := w.Memory.ID, w.Version.ID
	imp := 0.2
	e := graph.Edit{ID: "e-" + graph.NewID(), Scope: s, Kind: graph.EditAttenuate, TargetMemoryID: memID,
		TargetVersionID: verID, Importance: &imp, Reason: "stale", CreatedBy: "lib-1", CreatedAt: base}
	ce, err := x.ed.CreateEdit(ctx(t), e)
	require.NoError(t, err)
	assert.Equal(t, graph.EditPending, ce.Status, "new edits are pending")
	re, err := x.ed.GetEdit(ctx(t), f, e.ID)
	require.NoError(t, err)
	assert.Equal(t, graph.EditPending, re.Status)
	assert.Equal(t, memID, re.TargetMemoryID, "EDITS")
	assert.Equal(t, verID, re.TargetVersionID)
	require.NotNil(t, re.Importance)
	assert.InDelta(t, imp, *re.Importance, 1e-9)
	assert.Equal(t, e.Reason, re.Reason)
	assert.Equal(t, e.CreatedBy, re.CreatedBy)
	de, err := x.ed.DecideEdit(ctx(t), s, e.ID, graph.EditApproved, "lib-2", base.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, graph.EditApproved, de.Status)
	assert.Equal(t, "lib-2", de.DecidedBy)
	x.sameTime(t, base.Add(time.Minute), de.DecidedAt, "decided_at")
	_, err = x.ed.DecideEdit(ctx(t), s, e.ID, graph.EditRejected, "lib-2", base)
	assert.ErrorIs(t, err, graph.ErrConflict, "an edit is decided once")
	amend := graph.Edit{Scope: s, Kind: graph.EditAmend, TargetMemoryID: memID, Content: "amended", CreatedBy: "lib-1"}
	ca, err := x.ed.CreateEdit(ctx(t), amend)
	require.NoError(t, err)
	assert.NotEmpty(t, ca.ID, "edit id assigned")
	delta := -0.5
	cd, err := x.ed.CreateEdit(ctx(t), graph.Edit{Scope: s, Kind: graph.EditAttenuate, TargetMemoryID: memID, Delta: &delta, CreatedBy: "lib-1"})
	require.NoError(t, err)
	gd, err := x.ed.GetEdit(ctx(t), f, cd.ID)
	require.NoError(t, err)
	assert.Nil(t, gd.Importance, "an attenuate by delta has no importance")
	if assert.NotNil(t, gd.Delta, "delta") {
		assert.InDelta(t, delta, *gd.Delta, 1e-9)
	}
	all, err := x.ed.ListEdits(ctx(t), f, graph.EditQuery{MemoryIDs: []string{memID}})
	require.NoError(t, err)
	assert.Len(t, all, 3)
	approved, err := x.ed.ListEdits(ctx(t), f, graph.EditQuery{MemoryIDs: []string{memID}, Statuses: []graph.EditStatus{graph.EditApproved}})
	require.NoError(t, err)
	require.Len(t, approved, 1)
	assert.Equal(t, e.ID, approved[0].ID)

}

// invalidCase is one call that must be refused with ErrInvalid.
type invalidCase struct {
	name string
	call func() error
}

// refuses runs each case: it must return an error wrapping
// graph.ErrInvalid, never panic.
func refuses(t *testing.T, cases []invalidCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = c.call() })
			assert.ErrorIs(t, err, graph.ErrInvalid)
		})
	}
}

// testProposalsInvalid feeds bad curation records to graph.Proposals.
func testProposalsInvalid(t *testing.T, x *suite) {
	s := newScope(t)
	s.OrgID, s.RepoID = "o1", "r1"
	target := x.create(t, memIn(s, "target", "a memory to curate"))
	open, err := x.pr.CreateProposal(ctx(t), graph.Proposal{Scope: s, Title: "p", Content: "c", ProposedBy: "a",
		MemoryID: target.Memory.ID, TargetVersionID: target.Version.ID})
	require.NoError(t, err)
	refuses(t, []invalidCase{
		{"DecisionUnknownKind", func() error {
			_, _, err := x.pr.RejectProposal(ctx(t), s, open.ID, graph.Decision{Scope: s, Kind: "vibes", Outcome: "x", DecidedBy: "l"})
			return err
		}},
		{"ProposalUnknownStatus", func() error {
			_, err := x.pr.CreateProposal(ctx(t), graph.Proposal{Scope: s, Status: "maybe", ProposedBy: "a"})
			return err
		}},
		{"BaselineEmptyVersionID", func() error {
			_, err := x.pr.PromoteBaseline(ctx(t), graph.Baseline{Scope: s, VersionIDs: []string{""}, PublishedBy: "l"})
			return err
		}},
	})
	bs, err := x.pr.ListBaselines(ctx(t), in(s), 10)
	require.NoError(t, err)
	assert.Empty(t, bs, "nothing refused was written")
	p, err := x.pr.GetProposal(ctx(t), in(s), open.ID)
	require.NoError(t, err)
	assert.Equal(t, graph.ProposalOpen, p.Status, "nothing refused was written")
}

// testEditsInvalid feeds bad edits to graph.Edits.
func testEditsInvalid(t *testing.T, x *suite) {
	s := newScope(t)
	id := x.create(t, memIn(s, "target", "a memory to edit")).Memory.ID
	refuses(t, []invalidCase{
		{"EditUnknownKind", func() error {
			_, err := x.ed.CreateEdit(ctx(t), graph.Edit{Scope: s, Kind: "erase", TargetMemoryID: id, CreatedBy: "l"})
			return err
		}},
		{"EditEmptyTarget", func() error {
			_, err := x.ed.CreateEdit(ctx(t), graph.Edit{Scope: s, Kind: graph.EditRetract, CreatedBy: "l"})
			return err
		}},
		{"DecideEditBadStatus", func() error {
			e, err := x.ed.CreateEdit(ctx(t), graph.Edit{Scope: s, Kind: graph.EditRetract, TargetMemoryID: id, CreatedBy: "l"})
			require.NoError(t, err)
			_, err = x.ed.DecideEdit(ctx(t), s, e.ID, graph.EditPending, "l", base)
			return err
		}},
	})
	es, err := x.ed.ListEdits(ctx(t), in(s), graph.EditQuery{Statuses: []graph.EditStatus{graph.EditApproved, graph.EditRejected}})
	require.NoError(t, err)
	assert.Empty(t, es, "a refused decision settles nothing")
}

// testCapsulesInvalid feeds a bad capsule to graph.Capsules.
func testCapsulesInvalid(t *testing.T, x *suite) {
	s := newScope(t)
	refuses(t, []invalidCase{
		{"CapsuleInvalidUTF8", func() error {
			c := minCapsule(s, "m")
			c.Subject = "\xff"
			_, err := x.cp.CreateCapsule(ctx(t), c)
			return err
		}},
	})
}
