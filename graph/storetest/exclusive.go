package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
)

// keyed is a memory input with a canonical key in the namespace (scope,
// user u1, type note), exclusive or not.
func keyed(s graph.Scope, title, key string, exclusive bool) graph.MemoryInput {
	in := memIn(s, title, title+" content")
	in.Memory.UserID, in.Memory.CanonicalKey, in.ExclusiveKey = "u1", key, exclusive
	return in
}

func testExclusiveKey(t *testing.T, x *suite) {
	s := newScope(t)
	a := x.create(t, keyed(s, "a", "Self-Pref-DarkMode", true))

	// A second active memory under the key is refused, and nothing of it is
	// written.
	_, err := createOne(ctx(t), x.s, keyed(s, "b", "Self-Pref-DarkMode", true))
	require.ErrorIs(t, err, graph.ErrConflict)
	_, err = x.s.CreateMemories(ctx(t), []graph.MemoryInput{keyed(s, "c", "Other-Key", true), keyed(s, "d", "Self-Pref-DarkMode", true)})
	require.ErrorIs(t, err, graph.ErrConflict, "in a batch")
	assert.Equal(t, []string{a.Memory.ID}, x.listAll(t, in(s), 10), "the refused writes left nothing")

	// Superseding the holder hands the key on.
	next := keyed(s, "b", "Self-Pref-DarkMode", true)
	next.Supersedes = a.Memory.ID
	b := x.create(t, next)
	again := keyed(s, "c", "Self-Pref-DarkMode", true)
	again.Supersedes = a.Memory.ID // a is no longer active
	_, err = createOne(ctx(t), x.s, again)
	require.ErrorIs(t, err, graph.ErrConflict)

	// Another namespace, or an input that does not ask, is not affected.
	other := keyed(s, "e", "Self-Pref-DarkMode", true)
	other.Memory.UserID = "u2"
	x.create(t, other)
	other = keyed(s, "f", "Self-Pref-DarkMode", true)
	other.Memory.Type = "belief"
	x.create(t, other)
	x.create(t, keyed(s, "g", "Self-Pref-DarkMode", false))
	x.create(t, keyed(newScope(t), "h", "Self-Pref-DarkMode", true))

	// Archiving the holder frees the key.
	require.NoError(t, x.s.Archive(ctx(t), s, b.Memory.ID))
	x.create(t, keyed(s, "i", "Self-Pref-DarkMode", true))
}

// testExclusiveKeyRace: writers on two clients of the same data (two
// processes, in effect) race to write the first memory under one key;
// exactly one wins, the others get ErrConflict.
func testExclusiveKeyRace(t *testing.T, x *suite) {
	if x.cfg.OpenSecond == nil {
		t.Skip("backend has no Config.OpenSecond")
	}
	second := x.cfg.OpenSecond(t, x.s)
	for round := range 5 {
		s := newScope(t)
		const writers = 6
		var (
			wg        sync.WaitGroup
			mu        sync.Mutex
			won, lost int
		)
		for w := range writers {
			store := x.s
			if w%2 == 1 {
				store = second
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := createOne(ctx(t), store, keyed(s, title("w", w), "Server-Config-Binding", true))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case errors.Is(err, graph.ErrConflict):
					lost++
				default:
					t.Errorf("round %d writer %d: %v", round, w, err)
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, 1, won, "round %d: exactly one first write wins", round)
		assert.Equal(t, writers-1, lost, "round %d", round)
		assert.Len(t, x.listAll(t, in(s), 10), 1, "round %d: one active memory under the key", round)
	}
}
