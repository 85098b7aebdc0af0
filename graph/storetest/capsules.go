package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// capsuleReader reads capsules as agent "a" (minCapsule's creator and
// audience) at base, before any capsule of minCapsule expires.
var capsuleReader = graph.CapsuleQuery{Agent: "a", At: base}

// minCapsule is a valid capsule in s holding memories ids, created by and
// addressed to agent "a", live from base for a year.
func minCapsule(s graph.Scope, ids ...string) graph.Capsule {
	return graph.Capsule{Scope: s, Subject: "c", Audience: []string{"a"}, MemoryIDs: ids, CreatedBy: "a",
		CreatedAt: base, ExpiresAt: base.Add(365 * 24 * time.Hour)}
}

// testCapsules holds graph.Capsules: what a capsule reads back, who reads
// it (its audience and creator; nobody else, nor another scope), liveness
// (expiry exclusive, revocation) pushed into every read, listing pages,
// items in another tenant refused with nothing written, audit events in the
// write's transaction, and an erase taking its memories (and their
// versions) out of every capsule.
//
//	capsule "handover" in s, by "lead", for "a1" and "a2", expires base+24h:
//	  CONTAINS m1 (memory), v2 (version of m2), d (decision)
func testCapsules(t *testing.T, x *suite) {
	cs := x.cp
	require.NotNil(t, x.pr, "decision items need graph.Proposals")
	s := newScope(t)
	m1 := x.create(t, memIn(s, "first", "one")).Memory.ID
	c2 := x.create(t, memIn(s, "second", "two"))
	m3 := x.create(t, memIn(s, "third", "three")).Memory.ID
	d := x.decide(t, graph.Decision{Scope: s, Kind: "curation", Outcome: "reject", DecidedBy: "lib"}, c2.Version.ID)
	f := graph.Filter{Scope: s, Reader: graph.Reader{UserID: "u"}}
	c := graph.Capsule{ID: "c-" + graph.NewID(), Scope: s, Subject: "handover", Audience: []string{"a1", "a2"},
		MemoryIDs: []string{m1, m3}, VersionIDs: []string{c2.Version.ID}, DecisionIDs: []string{d.ID},
		CreatedBy: "lead", CreatedAt: base, ExpiresAt: base.Add(24 * time.Hour)}
	audit := graph.AuditEvent{Scope: s, Action: "capsule.create", SubjectKind: "Capsule", SubjectID: c.ID, ActorID: "lead"}
	_, err := cs.CreateCapsule(ctx(t), c, audit)
	require.NoError(t, err)

	t.Run("ReadBack", func(t *testing.T) {
		for _, agent := range []string{"a1", "a2", "lead"} {
			rc, err := cs.GetCapsule(ctx(t), f, graph.CapsuleQuery{Agent: agent, At: base.Add(time.Hour)}, c.ID)
			require.NoError(t, err, agent)
			assert.Equal(t, c.Subject, rc.Subject)
			assert.Equal(t, c.Audience, rc.Audience)
			assert.Equal(t, c.MemoryIDs, rc.MemoryIDs, "CONTAINS memories, in order")
			assert.Equal(t, c.VersionIDs, rc.VersionIDs, "CONTAINS version")
			assert.Equal(t, c.DecisionIDs, rc.DecisionIDs, "CONTAINS decision")
			assert.Equal(t, c.CreatedBy, rc.CreatedBy)
			assert.Equal(t, s, rc.Scope)
			x.sameTime(t, c.ExpiresAt, rc.ExpiresAt, "expires_at")
			assert.True(t, rc.RevokedAt.IsZero())
		}
		evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{SubjectID: c.ID}, graph.Page{})
		require.NoError(t, err)
		require.Len(t, evs, 1, "the audit event is written with the capsule")
		assert.Equal(t, "capsule.create", evs[0].Action)
	})

	t.Run("NotTheAudience", func(t *testing.T) {
		_, err := cs.GetCapsule(ctx(t), f, graph.CapsuleQuery{Agent: "a3", At: base}, c.ID)
		assert.ErrorIs(t, err, graph.ErrNotFound)
		got, _, err := cs.ListCapsules(ctx(t), f, graph.CapsuleQuery{Agent: "a3", At: base}, graph.Page{})
		require.NoError(t, err)
		assert.Empty(t, got)
		other := graph.Filter{Scope: newScope(t), Reader: graph.Reader{AllUsers: true, Subscopes: true}}
		_, err = cs.GetCapsule(ctx(t), other, graph.CapsuleQuery{Agent: "a1", At: base}, c.ID)
		assert.ErrorIs(t, err, graph.ErrNotFound, "another tenant")
		narrow := graph.Scope{TenantID: s.TenantID, OrgID: "o1"}
		inOrg := minCapsule(narrow, m1)
		inOrg.Audience = []string{"a1"}
		_, err = cs.CreateCapsule(ctx(t), inOrg)
		require.NoError(t, err)
		got, _, err = cs.ListCapsules(ctx(t), f, graph.CapsuleQuery{Agent: "a1", At: base}, graph.Page{})
		require.NoError(t, err)
		assert.Equal(t, []string{c.ID}, capsuleIDs(got), "a capsule beneath the reader's scope is not read")
	})

	t.Run("Expiry", func(t *testing.T) {
		q := graph.CapsuleQuery{Agent: "a1", At: c.ExpiresAt.Add(-time.Nanosecond)}
		_, err := cs.GetCapsule(ctx(t), f, q, c.ID)
		require.NoError(t, err, "live until expires_at")
		q.At = c.ExpiresAt
		_, err = cs.GetCapsule(ctx(t), f, q, c.ID)
		assert.ErrorIs(t, err, graph.ErrNotFound, "expires_at is exclusive")
		got, _, err := cs.ListCapsules(ctx(t), f, q, graph.Page{})
		require.NoError(t, err)
		assert.Empty(t, got, "expired capsules are not listed")
	})

	t.Run("Listing", func(t *testing.T) {
		ls := newScope(t)
		lm := x.create(t, memIn(ls, "listed", "x")).Memory.ID
		lf := graph.Filter{Scope: ls, Reader: graph.Reader{UserID: "u"}}
		var want []string
		for i := range 5 {
			k := minCapsule(ls, lm)
			k.Subject, k.CreatedAt, k.CreatedBy = title("capsule", i), base.Add(time.Duration(i)*time.Minute), "lead"
			k.Audience = []string{"a", "b"}
			if i == 2 {
				k.Audience = []string{"b"}
			}
			k, err := cs.CreateCapsule(ctx(t), k)
			require.NoError(t, err)
			if i != 2 {
				want = append([]string{k.ID}, want...)
			}
		}
		var got []string
		p := graph.Page{Limit: 2}
		for range 10 {
			page, next, err := cs.ListCapsules(ctx(t), lf, graph.CapsuleQuery{Agent: "a", At: base.Add(time.Hour)}, p)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(page), 2)
			for _, k := range page {
				assert.Equal(t, []string{lm}, k.MemoryIDs, "items read back in a listing")
			}
			got = append(got, capsuleIDs(page)...)
			if next == "" {
				break
			}
			p.Cursor = next
		}
		assert.Equal(t, want, got, "addressed to a, newest first, each once")
		sent, _, err := cs.ListCapsules(ctx(t), lf, graph.CapsuleQuery{Agent: "lead", At: base.Add(time.Hour), Sent: true}, graph.Page{})
		require.NoError(t, err)
		assert.Len(t, sent, 5, "the capsules lead created")
		none, _, err := cs.ListCapsules(ctx(t), lf, graph.CapsuleQuery{Agent: "lead", At: base.Add(time.Hour)}, graph.Page{})
		require.NoError(t, err)
		assert.Empty(t, none, "none is addressed to lead")
	})

	t.Run("ItemsInScope", func(t *testing.T) {
		foreign := x.create(t, memIn(newScope(t), "foreign", "x"))
		for name, k := range map[string]graph.Capsule{
			"memory":   minCapsule(s, m1, foreign.Memory.ID),
			"version":  func() graph.Capsule { k := minCapsule(s, m1); k.VersionIDs = []string{foreign.Version.ID}; return k }(),
			"decision": func() graph.Capsule { k := minCapsule(s, m1); k.DecisionIDs = []string{"missing-decision"}; return k }(),
		} {
			k.ID = "c-" + graph.NewID()
			_, err := cs.CreateCapsule(ctx(t), k)
			assert.ErrorIs(t, err, graph.ErrNotFound, name)
			_, err = cs.GetCapsule(ctx(t), f, capsuleReader, k.ID)
			assert.ErrorIs(t, err, graph.ErrNotFound, "%s: nothing written", name)
		}
	})

	t.Run("Invalid", func(t *testing.T) {
		for name, mod := range map[string]func(k *graph.Capsule){
			"no subject":       func(k *graph.Capsule) { k.Subject = " " },
			"no audience":      func(k *graph.Capsule) { k.Audience = nil },
			"no items":         func(k *graph.Capsule) { k.MemoryIDs = nil },
			"no expiry":        func(k *graph.Capsule) { k.ExpiresAt = time.Time{} },
			"expired at birth": func(k *graph.Capsule) { k.ExpiresAt = k.CreatedAt },
			"twice":            func(k *graph.Capsule) { k.MemoryIDs = []string{m1, m1} },
			"bad agent":        func(k *graph.Capsule) { k.Audience = []string{"a b"} },
		} {
			k := minCapsule(s, m1)
			mod(&k)
			_, err := cs.CreateCapsule(ctx(t), k)
			assert.ErrorIs(t, err, graph.ErrInvalid, name)
		}
		_, err := cs.GetCapsule(ctx(t), f, graph.CapsuleQuery{Agent: "a1"}, c.ID)
		assert.ErrorIs(t, err, graph.ErrInvalid, "a read names its instant")
		_, _, err = cs.ListCapsules(ctx(t), f, graph.CapsuleQuery{At: base}, graph.Page{})
		assert.ErrorIs(t, err, graph.ErrInvalid, "a read names its agent")
	})

	t.Run("Revoke", func(t *testing.T) {
		k := minCapsule(s, m1)
		k, err := cs.CreateCapsule(ctx(t), k)
		require.NoError(t, err)
		_, err = cs.RevokeCapsule(ctx(t), newScope(t), k.ID, "a", base)
		assert.ErrorIs(t, err, graph.ErrNotFound, "another tenant cannot revoke")
		ev := graph.AuditEvent{Scope: s, Action: "capsule.revoke", SubjectKind: "Capsule", SubjectID: k.ID, ActorID: "a"}
		r, err := cs.RevokeCapsule(ctx(t), s, k.ID, "a", base.Add(time.Minute), ev)
		require.NoError(t, err)
		assert.Equal(t, "a", r.RevokedBy)
		assert.Equal(t, []string{m1}, r.MemoryIDs)
		x.sameTime(t, base.Add(time.Minute), r.RevokedAt, "revoked_at")
		_, err = cs.GetCapsule(ctx(t), f, capsuleReader, k.ID)
		assert.ErrorIs(t, err, graph.ErrNotFound, "a revoked capsule is not read")
		got, _, err := cs.ListCapsules(ctx(t), f, capsuleReader, graph.Page{})
		require.NoError(t, err)
		assert.NotContains(t, capsuleIDs(got), k.ID, "nor listed")
		_, err = cs.RevokeCapsule(ctx(t), s, k.ID, "a", base.Add(time.Minute))
		assert.ErrorIs(t, err, graph.ErrConflict, "revoked once")
		evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{SubjectID: k.ID}, graph.Page{})
		require.NoError(t, err)
		require.Len(t, evs, 1, "the revocation's audit event, once")
	})

	t.Run("EraseLeavesCapsules", func(t *testing.T) {
		_, err := x.s.Erase(ctx(t), s, graph.EraseInput{IDs: []string{m1, c2.Memory.ID}})
		require.NoError(t, err)
		rc, err := cs.GetCapsule(ctx(t), f, graph.CapsuleQuery{Agent: "a1", At: base}, c.ID)
		require.NoError(t, err)
		assert.Equal(t, []string{m3}, rc.MemoryIDs, "the erased memory left the capsule")
		assert.Empty(t, rc.VersionIDs, "so did the erased memory's version")
		assert.Equal(t, []string{d.ID}, rc.DecisionIDs)
	})
}

func capsuleIDs(cs []graph.Capsule) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}
