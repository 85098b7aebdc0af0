package local

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/vector"
)

// TestPackedPayloadRoundTrip: a slot's compact form gives back the payload
// it was made from, field for field, for payloads drawn from small alphabets
// (so strings and tag lists repeat, share symbols and include the empty
// string), through replacement, deletion and compaction. Filters are matched
// against what payload rebuilds, so this equality is what keeps every filter
// decision the one vector.Filter.Match makes on the payload as written.
func TestPackedPayloadRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	random := func(id string) vector.Payload {
		p := vector.Payload{
			MemoryID:    id,
			VersionID:   pick("", "v-"+id, "v-"+id+"-2"),
			TenantID:    pick("t1", "t2"),
			OrgID:       pick("", "o1", "o2"),
			RepoID:      pick("", "r1"),
			UserID:      pick("", "alice", "bob"),
			Visibility:  pick("", "user", "session", "project", "global"),
			Type:        pick("note", "doc", "task"),
			SubjectType: pick("", "person"),
			SubjectID:   pick("", "s1", "s2"),
			ProjectID:   pick("", "p1"),
			SessionID:   pick("", "x1", "x2", "x3"),
			CreatedAt:   pick2(r, time.Time{}, at.Add(time.Duration(r.IntN(1e6))*time.Millisecond)),
		}
		for range r.IntN(4) {
			p.Tags = append(p.Tags, pick("a", "b", "c", ""))
		}
		return p
	}
	s := newState(2, 0)
	want := map[string]vector.Payload{}
	for i := range 2000 {
		id := string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
		if r.IntN(10) == 0 {
			s.remove(id)
			delete(want, id)
			continue
		}
		p := random(id)
		s.put(p, []float32{1, float32(r.IntN(2))}) // half the replacements keep the vector: updated in place
		if len(p.Tags) == 0 {
			p.Tags = nil
		}
		want[id] = p
	}
	check := func(s *state) {
		t.Helper()
		require.Equal(t, len(want), s.nLive)
		for id, p := range want {
			slot, ok := s.byID[id]
			require.True(t, ok, id)
			require.False(t, s.meta[slot].dead, id)
			require.Equal(t, p, s.payload(&s.meta[slot]), id)
		}
	}
	check(s)
	check(s.compacted())
}

func pick2[T any](r *rand.Rand, a, b T) T {
	if r.IntN(2) == 0 {
		return a
	}
	return b
}

// TestSlotMetaIsCompact guards the point of the compact form: at 1M points
// every byte of a slot is a megabyte of heap (and about two of RSS).
func TestSlotMetaIsCompact(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(slotMeta{}), uintptr(64))
}
