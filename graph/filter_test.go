package graph

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRankNeighbours(t *testing.T) {
	at := func(min int) time.Time { return time.Date(2026, 1, 1, 0, min, 0, 0, time.UTC) }
	n := func(id string, min int) Neighbour {
		return Neighbour{SeedID: "s", Memory: Memory{ID: id, CreatedAt: at(min)}}
	}
	rare, common := SharedEntity{Name: "orca", Mentions: 2}, SharedEntity{Name: "sea", Mentions: 50}
	type want struct {
		id     string
		shared []string
		weight float64
	}
	for _, tc := range []struct {
		name    string
		ns      []Neighbour
		shared  [][]SharedEntity
		perSeed int
		want    []want
	}{
		{
			name:    "a rare entity outweighs a common one; one named twice counts once",
			ns:      []Neighbour{n("a", 1), n("b", 2)},
			shared:  [][]SharedEntity{{common, common}, {rare}},
			perSeed: 2,
			want: []want{
				{"b", []string{"orca"}, EntityWeight(2)},
				{"a", []string{"sea"}, EntityWeight(50)},
			},
		},
		{
			name:    "weights add over distinct entities, names sorted",
			ns:      []Neighbour{n("a", 1), n("b", 2)},
			shared:  [][]SharedEntity{{common, rare, common}, {rare}},
			perSeed: 2,
			want: []want{
				{"a", []string{"orca", "sea"}, EntityWeight(2) + EntityWeight(50)},
				{"b", []string{"orca"}, EntityWeight(2)},
			},
		},
		{
			name:    "ties: newest first, then the greater id; perSeed cuts",
			ns:      []Neighbour{n("a", 1), n("c", 3), n("b", 3)},
			shared:  [][]SharedEntity{{rare}, {rare}, {rare}},
			perSeed: 2,
			want: []want{
				{"c", []string{"orca"}, EntityWeight(2)},
				{"b", []string{"orca"}, EntityWeight(2)},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := RankNeighbours(tc.ns, tc.shared, tc.perSeed)
			if !assert.Len(t, got, len(tc.want)) {
				return
			}
			for i, w := range tc.want {
				assert.Equal(t, w.id, got[i].Memory.ID, "rank %d", i)
				assert.Equal(t, w.shared, got[i].Shared, w.id)
				assert.InDelta(t, w.weight, got[i].Weight, 1e-12, w.id)
				assert.Equal(t, "s", got[i].SeedID)
			}
		})
	}
}
