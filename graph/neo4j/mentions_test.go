package neo4j

import (
	"fmt"
	"testing"
)

// TestMentionIndexApply: each entity's list stays newest first (created_at,
// then id) through creates, new versions that add or drop an entity, and
// erases, in one catch-up or several; a list handed out earlier keeps what
// it held.
func TestMentionIndexApply(t *testing.T) {
	k := func(at int64, id string) kwKey { return kwKey{at: at, id: id} }
	put := func(key kwKey, es ...string) mentionRow { return mentionRow{key: key, entities: es} }
	gone := func(key kwKey) mentionRow { return mentionRow{key: key, gone: true} }
	a, b, c, d := k(1, "a"), k(2, "b"), k(2, "c"), k(3, "d")
	for _, tc := range []struct {
		name    string
		batches [][]mentionRow
		want    map[string]string // entity -> ids, newest first
		seeds   map[string]string // memory -> its entities
	}{
		{"OneCatchUp", [][]mentionRow{{put(a, "x"), put(d, "x", "y"), put(b, "x"), put(c, "y", "x", "y")}},
			map[string]string{"x": "[d c b a]", "y": "[d c]"}, map[string]string{"c": "[x y]"}},
		{"OneAtATime", [][]mentionRow{{put(b, "x")}, {put(a, "x")}, {put(d, "x")}, {put(c, "x")}},
			map[string]string{"x": "[d c b a]"}, nil},
		{"NewVersionMovesEntities", [][]mentionRow{{put(a, "x"), put(b, "x", "y")}, {put(b, "y", "z")}},
			map[string]string{"x": "[a]", "y": "[b]", "z": "[b]"}, map[string]string{"b": "[y z]"}},
		{"EraseEmptiesAList", [][]mentionRow{{put(a, "x"), put(b, "x", "y")}, {gone(b)}, {gone(k(9, "never"))}},
			map[string]string{"x": "[a]"}, map[string]string{"b": "[]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newMentionIndex()
			for _, rows := range tc.batches {
				x.apply("t1", rows)
			}
			got := map[string]string{}
			for e, list := range x.tenants["t1"].byEntity {
				ids := make([]string, len(list))
				for i, key := range list {
					ids[len(list)-1-i] = key.id // newest first
				}
				got[e] = fmt.Sprint(ids)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("lists = %v, want %v", got, tc.want)
			}
			for id, want := range tc.seeds {
				es, _ := x.seedLists("t1", []string{id})
				if g := fmt.Sprint(es[id]); g != want {
					t.Errorf("entities of %s = %s, want %s", id, g, want)
				}
			}
			if es, lists := x.seedLists("t2", []string{"a"}); len(es)+len(lists) != 0 {
				t.Errorf("another tenant sees %v %v", es, lists)
			}
		})
	}
	t.Run("ListsHandedOutStay", func(t *testing.T) {
		for name, next := range map[string][]mentionRow{
			"Append":  {put(d, "x")},          // past the end, into the spare capacity
			"Rebuild": {put(k(0, "z"), "x")},  // older than the rest: merged
			"Erase":   {gone(a)},              // dropped
			"Both":    {put(d, "x"), gone(b)}, // merged
		} {
			x := newMentionIndex()
			for _, r := range []mentionRow{put(a, "x"), put(b, "x"), put(c, "x")} { // one at a time: capacity 4
				x.apply("t1", []mentionRow{r})
			}
			_, lists := x.seedLists("t1", []string{"a"})
			before := fmt.Sprint(lists["x"])
			x.apply("t1", next)
			if after := fmt.Sprint(lists["x"]); after != before {
				t.Errorf("%s: a list handed out changed: %s, was %s", name, after, before)
			}
			if _, now := x.seedLists("t1", []string{"c"}); fmt.Sprint(now["x"]) == before {
				t.Errorf("%s: the index did not change", name)
			}
		}
	})
}
