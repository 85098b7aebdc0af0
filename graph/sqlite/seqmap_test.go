package sqlite

import (
	"maps"
	"slices"
	"testing"
)

// TestSeqMap: entries are served only at the sequence they were read at;
// entries read at an older sequence are dropped, a newer sequence or the
// row bound starts the map over, and keep decides replacements.
func TestSeqMap(t *testing.T) {
	longer := func(old, v []int) bool { return len(old) >= len(v) }
	type put struct {
		g    uint64
		k    string
		v    []int
		keep bool // use longer
	}
	for _, c := range []struct {
		name string
		puts []put
		at   uint64
		want map[string][]int // what get at sequence at serves
	}{
		{"served at its sequence", []put{{2, "a", []int{1}, false}}, 2, map[string][]int{"a": {1}}},
		{"not at another", []put{{2, "a", []int{1}, false}}, 3, map[string][]int{}},
		{"an older read is dropped", []put{{2, "a", []int{1}, false}, {1, "b", []int{1}, false}}, 2, map[string][]int{"a": {1}}},
		{"a newer read starts over", []put{{2, "a", []int{1}, false}, {3, "b", []int{2}, false}}, 3, map[string][]int{"b": {2}}},
		{"replaced", []put{{2, "a", []int{1}, false}, {2, "a", []int{1, 2}, false}}, 2, map[string][]int{"a": {1, 2}}},
		{"keep holds the longer", []put{{2, "a", []int{1, 2}, false}, {2, "a", []int{3}, true}}, 2, map[string][]int{"a": {1, 2}}},
		{"the bound starts over", []put{{2, "a", []int{1, 2}, false}, {2, "b", []int{1, 2}, false}, {2, "c", []int{1}, false}}, 2, map[string][]int{"c": {1}}},
		{"empty values count one row", []put{{2, "a", nil, false}, {2, "b", nil, false}}, 2, map[string][]int{"a": nil, "b": nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := newSeqMap[string](4, func(v []int) int { return len(v) })
			for _, p := range c.puts {
				var keep func(old, v []int) bool
				if p.keep {
					keep = longer
				}
				m.put(p.g, map[string][]int{p.k: p.v}, keep)
			}
			keys := []string{"a", "b", "c"}
			got, miss := m.getAll(c.at, keys)
			if !maps.EqualFunc(got, c.want, slices.Equal) {
				t.Fatalf("getAll(%d) = %v, want %v", c.at, got, c.want)
			}
			for _, k := range keys {
				v, ok := m.get(c.at, k)
				want, held := c.want[k]
				if ok != held || !slices.Equal(v, want) {
					t.Fatalf("get(%d, %s) = %v %v, want %v %v", c.at, k, v, ok, want, held)
				}
				if held == slices.Contains(miss, k) {
					t.Fatalf("getAll(%d) misses %v: %s held %v", c.at, miss, k, held)
				}
			}
		})
	}
}

// openTemp opens a store in a temporary directory, closed when t ends.
func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
