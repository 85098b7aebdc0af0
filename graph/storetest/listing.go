package storetest

import (
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

func testPagination(t *testing.T, x *suite) {
	s := newScope(t)
	const n = 23
	batch := make([]graph.MemoryInput, n)
	for i := range batch {
		batch[i] = memIn(s, title("page", i), "content")
		// Pairs share a created_at so the id breaks ties.
		batch[i].Memory.CreatedAt = base.Add(time.Duration(i/2) * time.Second)
	}
	created, err := x.s.CreateMemories(ctx(t), batch)
	require.NoError(t, err)
	require.Len(t, created, n)
	// Expected order: created_at desc, then id desc.
	sort.Slice(created, func(i, j int) bool {
		a, b := created[i].Memory, created[j].Memory
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID > b.ID
	})
	expect := make([]string, n)
	for i, c := range created {
		expect[i] = c.Memory.ID
	}
	for _, limit := range []int{1, 4, 7, 23, 50} {
		t.Run(title("limit", limit), func(t *testing.T) {
			assert.Equal(t, expect, x.listAll(t, in(s), limit))
		})
	}
	t.Run("DefaultLimit", func(t *testing.T) {
		l, err := x.s.ListMemories(ctx(t), in(s), graph.Page{})
		require.NoError(t, err)
		assert.Len(t, l.Memories, n)
		assert.Empty(t, l.NextCursor)
	})
	t.Run("BadCursor", func(t *testing.T) {
		_, err := x.s.ListMemories(ctx(t), in(s), graph.Page{Limit: 5, Cursor: "not a cursor!"})
		assert.ErrorIs(t, err, graph.ErrInvalid)
	})
}

// testPaginationConcurrent lists page by page while writers insert: every
// memory that existed before the listing began appears exactly once.
func testPaginationConcurrent(t *testing.T, x *suite) {
	s := newScope(t)
	const n = 60
	batch := make([]graph.MemoryInput, n)
	for i := range batch {
		batch[i] = memIn(s, title("pre", i), "content")
	}
	created, err := x.s.CreateMemories(ctx(t), batch)
	require.NoError(t, err)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	var mu sync.Mutex
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := createOne(ctx(t), x.s, memIn(s, title("concurrent", w*1000+i), "content")); err != nil {
					mu.Lock()
					writeErr = err
					mu.Unlock()
					return
				}
			}
		}()
	}
	got := x.listAll(t, in(s), 7)
	close(stop)
	wg.Wait()
	require.NoError(t, writeErr)

	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	for id, c := range seen {
		assert.Equal(t, 1, c, "memory %s listed %d times", id, c)
	}
	for _, c := range created {
		assert.Equal(t, 1, seen[c.Memory.ID], "pre-existing memory %s listed once", c.Memory.ID)
	}
}

func testConcurrentWriters(t *testing.T, x *suite) {
	s := newScope(t)
	const writers, each = 8, 12
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				// Every writer mentions the same entities, so entity creation races too.
				_, err := createOne(ctx(t), x.s, memIn(s, title("w", w*100+i), "content", "shared", title("own", w)))
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Len(t, x.listAll(t, in(s), 1000), writers*each)
	got, err := x.s.Candidates(ctx(t), in(s), []string{"shared"}, 1000)
	require.NoError(t, err)
	assert.Len(t, got, writers*each, "one shared entity, mentioned by every memory")
}

func testReopen(t *testing.T, x *suite) {
	if x.cfg.Reopen == nil {
		t.Skip("backend has no Config.Reopen")
	}
	fx := x.buildFixture(t, newScope(t))
	s := fx.scope
	v2, err := x.s.AddVersion(ctx(t), s, fx.ids["m1"], graph.VersionInput{Content: "go and postgres, second edition",
		Entities: []graph.EntityRef{{Name: "go"}, {Name: "postgres"}}})
	require.NoError(t, err)
	require.NoError(t, x.s.AppendAudit(ctx(t), graph.AuditEvent{Scope: s, Action: "test.reopen", SubjectID: fx.ids["m1"], ActorID: "a"}))
	before := x.readAll(t, fx, in(s))

	x.s = x.cfg.Reopen(t, x.s)
	require.NoError(t, x.s.Health(ctx(t)))
	after := x.readAll(t, fx, in(s))
	assert.Equal(t, before, after)
	m := x.getMemory(t, in(s), fx.ids["m1"])
	assert.Equal(t, v2.ID, m.CurrentVersionID)
	assert.Equal(t, 2, m.VersionCount)
	evs, _, err := x.s.ListAudit(ctx(t), in(s), graph.AuditQuery{Action: "test.reopen"}, graph.Page{})
	require.NoError(t, err)
	assert.Len(t, evs, 1)
	// Still writable after reopening.
	x.create(t, memIn(s, "after reopen", "content", "go"))
}
