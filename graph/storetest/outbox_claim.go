package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testOutboxClaim: drainers claiming at once (on two clients of the data
// when the backend has a second one: two replicas, in effect) never get
// the same item, and together get every due item; a claimed item is not
// due again before its lease runs out, and is due after it.
func testOutboxClaim(t *testing.T, x *suite) {
	second := x.otherClient(t)
	s := newScope(t)
	const n = 24
	mine := map[string]bool{}
	for range n {
		mine[x.create(t, indexed2(s)).Memory.ID] = true
	}
	at, lease := time.Now().UTC(), time.Hour
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		got = map[string]int{} // item id -> times claimed
		ids []string
	)
	for w := range 4 {
		store := x.s
		if w%2 == 1 {
			store = second
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 4 * n { // bounded: a store that does not claim would hand out the same items forever
				items, err := store.DueOutbox(ctx(t), at, lease, 5)
				if !assert.NoError(t, err) || len(items) == 0 {
					return
				}
				mu.Lock()
				for _, it := range items {
					if mine[it.MemoryID] {
						got[it.ID]++
						ids = append(ids, it.ID)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, got, n, "every due item is claimed")
	for id, times := range got {
		assert.Equal(t, 1, times, "item %s claimed by one drainer only", id)
	}
	memIDs := make([]string, 0, n)
	for id := range mine {
		memIDs = append(memIDs, id)
	}
	assert.Empty(t, x.dueFor(t, at.Add(lease-time.Second), memIDs...), "not due while leased")
	assert.Len(t, x.dueFor(t, at.Add(lease+time.Second), memIDs...), n, "due again once the lease runs out")
	require.NoError(t, x.s.AckOutbox(ctx(t), ids))
	assert.Empty(t, x.outboxFor(t, memIDs...), "acknowledged")
}
