package engine

import (
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
