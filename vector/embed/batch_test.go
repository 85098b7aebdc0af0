package embed

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPlanBatches(t *testing.T) {
	tests := []struct {
		name    string
		lengths []int // ascending
		want    [][]int
	}{
		{"none", nil, nil},
		{"one", []int{5}, [][]int{{0}}},
		{"similar lengths stay together", []int{10, 12, 14, 15}, [][]int{{0, 1, 2, 3}}},
		{"one long text runs alone", []int{10, 12, 14, 256}, [][]int{{0, 1, 2}, {3}}},
		{"padding up to a third is fine", []int{2, 6}, [][]int{{0, 1}}},
		{"padding over a third cuts", []int{2, 7}, [][]int{{0}, {1}}},
		{"at most batchSize", make([]int, batchSize+1), [][]int{seq(0, batchSize), {batchSize}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			order := seq(0, len(tc.lengths))
			got := planBatches(order, func(i int) int { return tc.lengths[i] })
			assert.Equal(t, tc.want, got)
		})
	}
}

// seq returns from, from+1, ..., to-1.
func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}
