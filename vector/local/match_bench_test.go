package local

import (
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// BenchmarkMatchSlot is the filter test a graph search makes at every node
// it visits: "slot" rebuilds the payload from the compact slot and matches
// it, "payload" matches a payload already built (the cost of
// vector.Filter.Matches alone).
//
//	go test ./vector/local -run '^$' -bench MatchSlot -count 3
func BenchmarkMatchSlot(b *testing.B) {
	s := newState(2, 0)
	p := vector.Payload{MemoryID: "m1", VersionID: "v1", TenantID: "bench", UserID: "u3", Visibility: "user", Type: "note", Tags: []string{"a"}, SessionID: "s1", CreatedAt: time.Now()}
	s.put(p, []float32{1, 0})
	f := vector.Filter{TenantID: "bench", AllUsers: true, Subscopes: true, ReaderUserID: "admin"}
	m := &s.meta[0]
	b.Run("slot", func(b *testing.B) {
		n := 0
		for range b.N {
			if s.match(m, &f) {
				n++
			}
		}
		_ = n
	})
	b.Run("payload", func(b *testing.B) {
		n := 0
		q := s.payload(m)
		for range b.N {
			if f.Matches(&q) {
				n++
			}
		}
		_ = n
	})
}
