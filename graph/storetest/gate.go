package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

func testGateRequests(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	const n = 7
	var ids []string
	for i := range n {
		g, err := x.s.CreateGateRequest(ctx(t), graph.GateRequest{Scope: s, Title: title("gate", i),
			Payload: json.RawMessage(`{"i":1}`), RequestedBy: "agent", CreatedAt: base.Add(time.Duration(i) * time.Second)},
			graph.AuditEvent{Scope: s, Action: "gate.queue", SubjectKind: "GateRequest", ActorID: "gate"})
		require.NoError(t, err)
		assert.Equal(t, graph.GatePending, g.Status)
		assert.NotEmpty(t, g.ID)
		ids = append(ids, g.ID)
	}

	t.Run("VersionAudited", func(t *testing.T) { testVersionAudit(t, x) })
	t.Run("QueueAudited", func(t *testing.T) {
		for _, id := range ids {
			evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{SubjectID: id}, graph.Page{})
			require.NoError(t, err)
			require.Len(t, evs, 1, "the queue audit event DECIDED the request (subject defaults to it)")
			assert.Equal(t, "gate.queue", evs[0].Action)
		}
	})
	t.Run("ListPendingPaged", func(t *testing.T) {
		var got []string
		p := graph.Page{Limit: 3}
		for range 10 {
			gs, next, err := x.s.ListGateRequests(ctx(t), f, graph.GatePending, p)
			require.NoError(t, err)
			for _, g := range gs {
				got = append(got, g.ID)
			}
			if next == "" {
				break
			}
			p.Cursor = next
		}
		assert.Equal(t, ids, got, "oldest first, each once")
	})

	decide := func(id string, st graph.GateStatus, mem string) (graph.GateRequest, error) {
		return x.s.DecideGateRequest(ctx(t), s, id, graph.GateDecision{Status: st, DecidedBy: "lib", Reason: "because",
			MemoryID: mem, At: base.Add(time.Hour)}, graph.AuditEvent{Scope: s, Action: "gate." + string(st), SubjectKind: "GateRequest",
			SubjectID: id, ActorID: "lib"})
	}
	t.Run("DecideOnce", func(t *testing.T) {
		mem := x.create(t, memIn(s, "approved write", "content")).Memory.ID
		g, err := decide(ids[0], graph.GateApproved, mem)
		require.NoError(t, err)
		assert.Equal(t, graph.GateApproved, g.Status)
		assert.Equal(t, "lib", g.DecidedBy)
		assert.Equal(t, mem, g.MemoryID)
		x.sameTime(t, base.Add(time.Hour), g.DecidedAt, "decided_at")
		got, err := x.s.GetGateRequest(ctx(t), f, ids[0])
		require.NoError(t, err)
		assert.Equal(t, graph.GateApproved, got.Status)
		assert.Equal(t, mem, got.MemoryID)

		_, err = decide(ids[0], graph.GateRejected, "")
		assert.ErrorIs(t, err, graph.ErrConflict, "second decision")
		_, err = decide(ids[1], graph.GateRejected, "")
		require.NoError(t, err)

		evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{SubjectID: ids[0]}, graph.Page{})
		require.NoError(t, err)
		require.Len(t, evs, 2, "queue + approve; the refused decision wrote nothing")
		assert.Equal(t, []string{"gate.queue", "gate.approved"}, []string{evs[0].Action, evs[1].Action})
	})
	t.Run("ListByStatus", func(t *testing.T) {
		count := func(st graph.GateStatus) int {
			gs, _, err := x.s.ListGateRequests(ctx(t), f, st, graph.Page{Limit: 100})
			require.NoError(t, err)
			return len(gs)
		}
		assert.Equal(t, n-2, count(graph.GatePending))
		assert.Equal(t, 1, count(graph.GateApproved))
		assert.Equal(t, 1, count(graph.GateRejected))
		assert.Equal(t, n, count(""), "empty status lists all")
	})
	t.Run("Missing", func(t *testing.T) {
		_, err := decide("missing", graph.GateApproved, "")
		assert.ErrorIs(t, err, graph.ErrNotFound)
	})
}

// testAuditUserRule: an event about a memory private to another user is
// not listed to a reader without AllUsers; events about shared memories
// and about other subjects are.
func testAuditUserRule(t *testing.T, x *suite) {
	s := newScope(t)
	write := func(user string, vis graph.Visibility) string {
		t.Helper()
		in := memIn(s, "audited", "audited memory of "+user)
		in.Memory.UserID, in.Memory.Visibility = user, vis
		in.Audit = []graph.AuditEvent{{Scope: s, Action: "test.write", ActorID: user, CreatedAt: base}}
		c, err := createOne(ctx(t), x.s, in)
		require.NoError(t, err)
		return c.Memory.ID
	}
	mine, theirs, shared := write("u1", graph.VisibilityUser), write("u2", graph.VisibilityUser), write("u2", graph.VisibilityProject)
	require.NoError(t, x.s.AppendAudit(ctx(t), graph.AuditEvent{Scope: s, Action: "test.write", SubjectKind: "GateRequest",
		SubjectID: "g1", ActorID: "u2", CreatedAt: base}))
	subjects := func(r graph.Reader) []string {
		t.Helper()
		evs, _, err := x.s.ListAudit(ctx(t), graph.Filter{Scope: s, Reader: r}, graph.AuditQuery{Action: "test.write"}, graph.Page{})
		require.NoError(t, err)
		var out []string
		for _, e := range evs {
			out = append(out, e.SubjectID)
		}
		return out
	}
	assert.ElementsMatch(t, []string{mine, shared, "g1"}, subjects(graph.Reader{UserID: "u1"}))
	assert.ElementsMatch(t, []string{mine, theirs, shared, "g1"}, subjects(graph.Reader{UserID: "u1", AllUsers: true}))
	assert.ElementsMatch(t, []string{theirs, shared, "g1"}, subjects(graph.Reader{UserID: "u2"}))
}

func testAudit(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	const n = 9
	var want []string
	for i := range n {
		e := graph.AuditEvent{ID: "a-" + graph.NewID(), Scope: s, Action: "test.step", SubjectKind: "Memory",
			SubjectID: fmt.Sprintf("subj-%d", i%2), ActorID: "actor", CreatedAt: base.Add(time.Duration(i) * time.Second)}
		if i == 4 {
			e.Action = "test.other"
		}
		require.NoError(t, x.s.AppendAudit(ctx(t), e))
		want = append(want, e.ID)
	}
	t.Run("OldestFirstPaged", func(t *testing.T) {
		var got []string
		p := graph.Page{Limit: 4}
		for range 10 {
			evs, next, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{}, p)
			require.NoError(t, err)
			for _, e := range evs {
				got = append(got, e.ID)
			}
			if next == "" {
				break
			}
			p.Cursor = next
		}
		assert.Equal(t, want, got)
	})
	t.Run("Query", func(t *testing.T) {
		evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{Action: "test.other"}, graph.Page{})
		require.NoError(t, err)
		require.Len(t, evs, 1)
		assert.Equal(t, want[4], evs[0].ID)
		evs, _, err = x.s.ListAudit(ctx(t), f, graph.AuditQuery{SubjectID: "subj-1"}, graph.Page{})
		require.NoError(t, err)
		assert.Len(t, evs, 4)
	})
	t.Run("ActorAndTime", func(t *testing.T) {
		other := graph.AuditEvent{ID: "a-" + graph.NewID(), Scope: s, Action: "test.step", SubjectKind: "Memory",
			SubjectID: "subj-x", ActorID: "someone", CreatedAt: base.Add(time.Hour)}
		require.NoError(t, x.s.AppendAudit(ctx(t), other))
		ids := func(q graph.AuditQuery) []string {
			t.Helper()
			evs, _, err := x.s.ListAudit(ctx(t), f, q, graph.Page{})
			require.NoError(t, err)
			var out []string
			for _, e := range evs {
				out = append(out, e.ID)
			}
			return out
		}
		assert.Equal(t, []string{other.ID}, ids(graph.AuditQuery{ActorID: "someone"}))
		assert.Equal(t, want, ids(graph.AuditQuery{ActorID: "actor"}))
		assert.Equal(t, want[2:5], ids(graph.AuditQuery{From: base.Add(2 * time.Second), To: base.Add(5 * time.Second)}),
			"from inclusive, to exclusive")
		assert.Equal(t, []string{other.ID}, ids(graph.AuditQuery{From: base.Add(time.Minute)}))
	})
	t.Run("AppendOnly", func(t *testing.T) {
		err := x.s.AppendAudit(ctx(t), graph.AuditEvent{ID: want[0], Scope: s, Action: "test.overwrite", ActorID: "x"})
		assert.ErrorIs(t, err, graph.ErrConflict, "an event id is written once")
		evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{}, graph.Page{Limit: 1})
		require.NoError(t, err)
		require.Len(t, evs, 1)
		assert.Equal(t, "test.step", evs[0].Action)
	})
}

// outboxFor returns the live outbox items of the given memories, due or
// not (the outbox is global, so other cases' items are skipped).
func (x *suite) outboxFor(t *testing.T, memoryIDs ...string) []graph.OutboxItem {
	t.Helper()
	return x.dueFor(t, time.Now().Add(1000*time.Hour), memoryIDs...)
}

// dueFor returns the outbox items of the given memories due at at.
func (x *suite) dueFor(t *testing.T, at time.Time, memoryIDs ...string) []graph.OutboxItem {
	t.Helper()
	items, err := x.s.DueOutbox(ctx(t), at, 0, 10000)
	require.NoError(t, err)
	var out []graph.OutboxItem
	for _, it := range items {
		if slices.Contains(memoryIDs, it.MemoryID) {
			out = append(out, it)
		}
	}
	return out
}

// deadFor returns the dead letters of the given memories.
func (x *suite) deadFor(t *testing.T, memoryIDs ...string) []graph.OutboxItem {
	t.Helper()
	st, err := x.s.OutboxStatus(ctx(t), time.Now(), 10000)
	require.NoError(t, err)
	var out []graph.OutboxItem
	for _, it := range st.DeadLetters {
		if slices.Contains(memoryIDs, it.MemoryID) {
			out = append(out, it)
		}
	}
	return out
}

func testOutbox(t *testing.T, x *suite) {
	s := newScope(t)
	indexed := memIn(s, "indexed", "content")
	indexed.Version.Index = true
	a := x.create(t, indexed)
	b := x.create(t, indexed2(s))
	plain := x.create(t, memIn(s, "not indexed", "content")).Memory.ID

	items := x.outboxFor(t, a.Memory.ID, b.Memory.ID, plain)
	require.Len(t, items, 2, "one item per indexed write, none for the plain one")
	assert.Equal(t, a.Memory.ID, items[0].MemoryID, "oldest first")
	assert.Equal(t, a.Version.ID, items[0].VersionID)
	assert.Equal(t, "upsert", items[0].Op)
	assert.Equal(t, 0, items[0].Attempts)
	assert.False(t, items[0].Dead)
	assert.NotEmpty(t, items[0].ID)
	assert.True(t, items[0].NextAttemptAt.IsZero(), "a new item is due at once, whatever the clock")

	require.NoError(t, x.s.AckOutbox(ctx(t), []string{items[0].ID}))
	require.NoError(t, x.s.AckOutbox(ctx(t), []string{items[0].ID}), "ack is idempotent")
	left := x.outboxFor(t, a.Memory.ID, b.Memory.ID)
	require.Len(t, left, 1)
	assert.Equal(t, b.Memory.ID, left[0].MemoryID)

	v, err := x.s.AddVersion(ctx(t), s, a.Memory.ID, graph.VersionInput{Content: "v2", Index: true})
	require.NoError(t, err)
	items = x.outboxFor(t, a.Memory.ID)
	require.Len(t, items, 1, "AddVersion with Index enqueues too")
	assert.Equal(t, v.ID, items[0].VersionID)
}

// testOutboxRetry: a failed delivery counts an attempt, keeps its error and
// is not due again before its retry time; items behind it stay due; a dead
// letter is never due, is listed with its error, and comes back live when
// requeued.
func testOutboxRetry(t *testing.T, x *suite) {
	s := newScope(t)
	a := x.create(t, indexed2(s)).Memory.ID
	b := x.create(t, indexed2(s)).Memory.ID
	c := x.create(t, indexed2(s)).Memory.ID
	now := time.Now().UTC()
	due := x.dueFor(t, now.Add(time.Second), a, b, c)
	require.Len(t, due, 3)
	require.Equal(t, a, due[0].MemoryID, "oldest first")
	ia, ib := due[0].ID, due[1].ID

	retryAt := now.Add(time.Hour)
	require.NoError(t, x.s.FailOutbox(ctx(t), []graph.OutboxFailure{
		{ID: ia, Error: "index down", RetryAt: retryAt},
		{ID: "missing", Error: "ignored", RetryAt: retryAt},
	}))
	t.Run("BackedOff", func(t *testing.T) {
		due := x.dueFor(t, now.Add(time.Minute), a, b, c)
		require.Len(t, due, 2, "the failed item waits; the ones behind it do not")
		assert.Equal(t, []string{b, c}, []string{due[0].MemoryID, due[1].MemoryID})
		later := x.dueFor(t, retryAt.Add(time.Second), a, b, c)
		require.Len(t, later, 3)
		got := later[2]
		assert.Equal(t, a, got.MemoryID, "earliest due first")
		assert.Equal(t, 1, got.Attempts)
		assert.Equal(t, "index down", got.LastError)
		x.sameTime(t, retryAt, got.NextAttemptAt, "next_attempt_at")
	})

	require.NoError(t, x.s.FailOutbox(ctx(t), []graph.OutboxFailure{{ID: ia, Error: "still down", RetryAt: retryAt, Dead: true}}))
	t.Run("DeadLetter", func(t *testing.T) {
		assert.Empty(t, x.dueFor(t, now.Add(1000*time.Hour), a), "a dead letter is never due")
		dead := x.deadFor(t, a, b, c)
		require.Len(t, dead, 1)
		assert.Equal(t, ia, dead[0].ID)
		assert.True(t, dead[0].Dead)
		assert.Equal(t, 2, dead[0].Attempts)
		assert.Equal(t, "still down", dead[0].LastError)
		st, err := x.s.OutboxStatus(ctx(t), now.Add(time.Minute), 0)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, st.Dead, 1)
		assert.GreaterOrEqual(t, st.Pending, 2)
		assert.GreaterOrEqual(t, st.Due, 2)
		assert.Empty(t, st.DeadLetters, "none asked for")
		assert.False(t, st.Oldest.IsZero())
	})
	t.Run("Requeue", func(t *testing.T) {
		n, err := x.s.RequeueOutbox(ctx(t), now, []string{ib})
		require.NoError(t, err)
		assert.Zero(t, n, "a live item is not a dead letter")
		n, err = x.s.RequeueOutbox(ctx(t), now, []string{ia, "missing"})
		require.NoError(t, err)
		assert.Equal(t, 1, n)
		assert.Empty(t, x.deadFor(t, a))
		due := x.dueFor(t, now, a)
		require.Len(t, due, 1, "due again at once")
		assert.Equal(t, 0, due[0].Attempts, "attempts start over")
		assert.False(t, due[0].Dead)
	})
	t.Run("RequeueAll", func(t *testing.T) {
		require.NoError(t, x.s.FailOutbox(ctx(t), []graph.OutboxFailure{
			{ID: ia, Error: "x", RetryAt: now, Dead: true}, {ID: ib, Error: "y", RetryAt: now, Dead: true},
		}))
		require.Len(t, x.deadFor(t, a, b), 2)
		n, err := x.s.RequeueOutbox(ctx(t), now, nil)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, n, 2)
		assert.Empty(t, x.deadFor(t, a, b))
		require.NoError(t, x.s.AckOutbox(ctx(t), []string{ia, ib}))
		assert.Len(t, x.outboxFor(t, a, b, c), 1)
	})
}

func indexed2(s graph.Scope) graph.MemoryInput {
	in := memIn(s, "indexed too", "content")
	in.Version.Index = true
	return in
}

// testVersionAudit: AddVersion writes VersionInput.Audit in its own
// transaction (subject defaulting to the memory), and an invalid event
// writes neither the event nor the version.
func testVersionAudit(t *testing.T, x *suite) {
	s := newScope(t)
	f := in(s)
	m := x.create(t, memIn(s, "doc", "v1")).Memory
	_, err := x.s.AddVersion(ctx(t), s, m.ID, graph.VersionInput{Content: "v2",
		Audit: []graph.AuditEvent{{Scope: s, Action: "gate.approve_version", ActorID: "gate", Rule: "docs"}}})
	require.NoError(t, err)
	evs, _, err := x.s.ListAudit(ctx(t), f, graph.AuditQuery{SubjectID: m.ID}, graph.Page{})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Equal(t, "gate.approve_version", evs[0].Action)
	assert.Equal(t, "docs", evs[0].Rule)
	assert.Equal(t, "Memory", evs[0].SubjectKind)

	_, err = x.s.AddVersion(ctx(t), s, m.ID, graph.VersionInput{Content: "v3",
		Audit: []graph.AuditEvent{{Scope: s, ActorID: "gate"}}}) // no action
	require.ErrorIs(t, err, graph.ErrInvalid)
	got, err := x.s.GetMemory(ctx(t), f, m.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, got.VersionCount, "nothing written")

	bad := memIn(s, "x", "y")
	bad.Version.Audit = []graph.AuditEvent{{Scope: s, Action: "a", ActorID: "b"}}
	_, err = createOne(ctx(t), x.s, bad)
	require.ErrorIs(t, err, graph.ErrInvalid, "a new memory's events go in MemoryInput.Audit")
}
