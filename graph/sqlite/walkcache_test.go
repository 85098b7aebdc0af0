package sqlite

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPostingValid: the first n memories valid at an instant, and whether
// they are what the store would read under ValidAt. The result may share
// the cached list's array; appending to it must not write into the cache.
func TestPostingValid(t *testing.T) {
	m := func(rid, from, to int64) postingMem { return postingMem{rid: rid, from: from, to: to} }
	open := []postingMem{m(1, 0, 0), m(2, 5, 0), m(3, 0, 20), m(4, 0, 0)}
	windowed := []postingMem{m(1, 0, 0), m(2, 50, 0), m(3, 0, 20), m(4, 0, 0)}
	for _, tc := range []struct {
		name     string
		p        posting
		at       int64
		n        int
		want     []int64
		complete bool
	}{
		{"no instant: the first n", posting{mems: open}, 0, 2, []int64{1, 2}, true},
		{"all valid: the first n", posting{mems: open}, 10, 3, []int64{1, 2, 3}, true},
		{"one not yet valid is skipped", posting{mems: windowed}, 10, 3, []int64{1, 3, 4}, true},
		{"one expired is skipped", posting{mems: open}, 30, 3, []int64{1, 2, 4}, true},
		{"fewer than n in a partial list: read again", posting{mems: windowed}, 30, 3, []int64{1, 4}, false},
		{"fewer than n in a complete list: all there is", posting{mems: windowed, complete: true}, 30, 3, []int64{1, 4}, true},
		{"a partial list shorter than n", posting{mems: open[:2]}, 10, 3, []int64{1, 2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]postingMem(nil), tc.p.mems...)
			got, ok := tc.p.valid(tc.at, tc.n)
			var rids []int64
			for _, x := range got {
				rids = append(rids, x.rid)
			}
			assert.Equal(t, tc.want, rids)
			assert.Equal(t, tc.complete, ok)
			_ = append(got, m(99, 0, 0))
			assert.Equal(t, before, tc.p.mems, "the cached list is unchanged")
		})
	}
}
