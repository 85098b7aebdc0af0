package sqlite

import (
	"maps"
	"slices"
	"testing"
)

// TestSeqMap: entries are served only at the sequence of their tenant
// they were read at; entries read at an older sequence are dropped, a
// newer sequence starts its tenant's entries over and leaves the other
// tenants' as they are, the row bound (over all tenants) starts the map
// over, and keep decides replacements.
func TestSeqMap(t *testing.T) {
	longer := func(old, v []int) bool { return len(old) >= len(v) }
	type put struct {
		g    seq
		k    string
		v    []int
		keep bool // use longer
	}
	a2, a3, b2, b3 := seq{"a", 2}, seq{"a", 3}, seq{"b", 2}, seq{"b", 3}
	for _, c := range []struct {
		name string
		puts []put
		at   seq
		want map[string][]int // what get at sequence at serves
	}{
		{"served at its sequence", []put{{a2, "a", []int{1}, false}}, a2, map[string][]int{"a": {1}}},
		{"not at another", []put{{a2, "a", []int{1}, false}}, a3, map[string][]int{}},
		{"not to another tenant at the same number", []put{{a2, "a", []int{1}, false}}, b2, map[string][]int{}},
		{"an older read is dropped", []put{{a2, "a", []int{1}, false}, {seq{"a", 1}, "b", []int{1}, false}}, a2, map[string][]int{"a": {1}}},
		{"a newer read starts over", []put{{a2, "a", []int{1}, false}, {a3, "b", []int{2}, false}}, a3, map[string][]int{"b": {2}}},
		{"another tenant's newer read keeps this one's", []put{{a2, "a", []int{1}, false}, {b2, "b", []int{2}, false}, {b3, "c", []int{3}, false}}, a2, map[string][]int{"a": {1}}},
		{"and serves its own", []put{{a2, "a", []int{1}, false}, {b2, "b", []int{2}, false}, {b3, "c", []int{3}, false}}, b3, map[string][]int{"c": {3}}},
		{"replaced", []put{{a2, "a", []int{1}, false}, {a2, "a", []int{1, 2}, false}}, a2, map[string][]int{"a": {1, 2}}},
		{"keep holds the longer", []put{{a2, "a", []int{1, 2}, false}, {a2, "a", []int{3}, true}}, a2, map[string][]int{"a": {1, 2}}},
		{"the bound starts over", []put{{a2, "a", []int{1, 2}, false}, {a2, "b", []int{1, 2}, false}, {a2, "c", []int{1}, false}}, a2, map[string][]int{"c": {1}}},
		{"the bound counts every tenant", []put{{b2, "a", []int{1, 2, 3}, false}, {a2, "b", []int{1}, false}, {a2, "c", []int{1}, false}}, a2, map[string][]int{"c": {1}}},
		{"a tenant started over gives its rows back", []put{{b2, "a", []int{1, 2, 3}, false}, {b3, "a", []int{1}, false}, {a2, "b", []int{1}, false}, {a2, "c", []int{1}, false}}, a2, map[string][]int{"b": {1}, "c": {1}}},
		{"empty values count one row", []put{{a2, "a", nil, false}, {a2, "b", nil, false}}, a2, map[string][]int{"a": nil, "b": nil}},
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
				t.Fatalf("getAll(%v) = %v, want %v", c.at, got, c.want)
			}
			for _, k := range keys {
				v, ok := m.get(c.at, k)
				want, held := c.want[k]
				if ok != held || !slices.Equal(v, want) {
					t.Fatalf("get(%v, %s) = %v %v, want %v %v", c.at, k, v, ok, want, held)
				}
				if held == slices.Contains(miss, k) {
					t.Fatalf("getAll(%v) misses %v: %s held %v", c.at, miss, k, held)
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
