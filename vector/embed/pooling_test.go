package embed

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMeanPoolNormalize(t *testing.T) {
	tests := []struct {
		name   string
		hidden []float32 // rows of 2
		mask   []int64
		want   []float32
	}{
		{"one token", []float32{3, 4}, []int64{1}, []float32{0.6, 0.8}},
		{"mean of two", []float32{1, 0, 0, 1}, []int64{1, 1}, []float32{0.70710677, 0.70710677}},
		{"padding ignored", []float32{0, 2, 100, -100}, []int64{1, 0}, []float32{0, 1}},
		{"all masked stays zero", []float32{1, 1}, []int64{0}, []float32{0, 0}},
		{"zero vector stays zero", []float32{0, 0, 0, 0}, []int64{1, 1}, []float32{0, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := make([]float32, 2)
			meanPoolNormalize(got, tc.hidden, tc.mask)
			assert.InDeltaSlice(t, tc.want, got, 1e-6)
		})
	}
}
