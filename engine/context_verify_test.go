package engine

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/graph"
)

func TestCheckCitation(t *testing.T) {
	ip := func(x int) *int { return &x }
	given := []graph.Citation{
		{RepositoryID: "r", ElementID: "m1", VersionID: "v1", Start: ip(0), End: ip(100)},
		{RepositoryID: "r", ElementID: "m1", VersionID: "v1", ChunkKey: "Intro", Start: ip(0), End: ip(40)},
	}
	tests := []struct {
		name string
		c    graph.Citation
		want string
	}{
		{"whole version", graph.Citation{RepositoryID: "r", ElementID: "m1", VersionID: "v1"}, ""},
		{"chunk", graph.Citation{RepositoryID: "r", ElementID: "m1", VersionID: "v1", ChunkKey: "Intro"}, ""},
		{"range inside", graph.Citation{ElementID: "m1", VersionID: "v1", Start: ip(10), End: ip(90)}, ""},
		{"invented element", graph.Citation{RepositoryID: "r", ElementID: "m9", VersionID: "v1"}, "element not in this context"},
		{"other version", graph.Citation{RepositoryID: "r", ElementID: "m1", VersionID: "v2"}, "version not in this context"},
		{"invented chunk", graph.Citation{ElementID: "m1", VersionID: "v1", ChunkKey: "Nope"}, "chunk not in this context"},
		{"range outside", graph.Citation{ElementID: "m1", VersionID: "v1", Start: ip(10), End: ip(200)}, "range outside what the context returned"},
		{"chunk range outside", graph.Citation{ElementID: "m1", VersionID: "v1", ChunkKey: "Intro", Start: ip(30), End: ip(50)}, "range outside what the context returned"},
		{"wrong repository", graph.Citation{RepositoryID: "x", ElementID: "m1", VersionID: "v1"}, "repository_id does not match the context"},
		{"half a range", graph.Citation{ElementID: "m1", VersionID: "v1", Start: ip(1)}, "start and end must come together with 0 <= start <= end"},
		{"missing ids", graph.Citation{ElementID: "m1"}, "element_id and version_id are required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, checkCitation(given, tc.c)) })
	}
}

// FuzzCheckCitation feeds arbitrary receipts and citations (as JSON) to
// checkCitation. It never panics; every citation a receipt holds (with ids
// and a well-formed range) verifies against it; an accepted citation names
// an element and version of the receipt; and a citation that verifies
// still does with its range narrowed, its chunk key or repository left out,
// or the receipt reordered.
//
//	go test ./engine -run '^$' -fuzz '^FuzzCheckCitation$' -fuzztime 30s
func FuzzCheckCitation(f *testing.F) {
	f.Add(`[{"repository_id":"r","element_id":"m1","version_id":"v1","start":0,"end":100}]`,
		`{"repository_id":"r","element_id":"m1","version_id":"v1","start":10,"end":90}`)
	f.Add(`[{"element_id":"m1","version_id":"v1","chunk_key":"Intro","start":0,"end":40}]`,
		`{"element_id":"m1","version_id":"v1","chunk_key":"Intro"}`)
	f.Add(`[{"element_id":"m1","version_id":"v1","start":5}]`, `{"element_id":"m1","version_id":"v1","start":1,"end":2}`)
	f.Add(`[{"element_id":"m1","version_id":"v1","end":5}]`, `{"element_id":"m1","version_id":"v1","start":1,"end":2}`)
	f.Add(`[{"element_id":"m1","version_id":"v1","start":9,"end":2}]`, `{"element_id":"m1","version_id":"v1","start":3,"end":4}`)
	f.Add(`[{"element_id":"m1","version_id":"v1","start":0}]`, `{"element_id":"m1","version_id":"v1","start":1,"end":2}`)
	f.Add(`[]`, `{"element_id":"m1","version_id":"v1","start":-1,"end":0}`)
	f.Add(`[{"element_id":"","version_id":""}]`, `{}`)
	f.Fuzz(func(t *testing.T, receipt, citation string) {
		var (
			given []graph.Citation
			c     graph.Citation
		)
		if json.Unmarshal([]byte(receipt), &given) != nil || json.Unmarshal([]byte(citation), &c) != nil {
			t.Skip()
		}
		reason := checkCitation(given, c)
		for _, g := range given {
			if g.ElementID != "" && g.VersionID != "" && (g.Start == nil) == (g.End == nil) &&
				(g.Start == nil || (*g.Start >= 0 && *g.Start <= *g.End)) {
				assert.Empty(t, checkCitation(given, g), "the receipt's own citation %+v", g)
			}
		}
		if reason != "" {
			return
		}
		assert.True(t, slices.ContainsFunc(given, func(g graph.Citation) bool {
			return g.ElementID == c.ElementID && g.VersionID == c.VersionID
		}), "accepted %+v, which names no element and version of the receipt", c)
		wider := c
		wider.ChunkKey, wider.RepositoryID = "", ""
		assert.Empty(t, checkCitation(given, wider), "less specific than an accepted citation")
		if c.Start != nil && *c.End > *c.Start {
			narrow := c
			s, e := *c.Start+1, *c.End
			narrow.Start, narrow.End = &s, &e
			assert.Empty(t, checkCitation(given, narrow), "a range inside an accepted one")
		}
		reversed := slices.Clone(given)
		slices.Reverse(reversed)
		assert.Empty(t, checkCitation(reversed, c), "the receipt's order does not matter")
	})
}
