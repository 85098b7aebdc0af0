// Package embedtest holds a small deterministic embed.Embedder for tests of
// the packages above vector: the write and read paths' plumbing and access
// rules are under test there, not the quality of the vectors, so a bag of
// hashed words stands in for the ONNX model.
package embedtest

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
)

// Bag embeds a text as the unit-length bag of its lower-cased words, each
// hashed into one of Dim components (plus a small constant, so no vector is
// all zeros). Texts sharing words are close; the same text always gives
// the same vector.
type Bag struct{ Dim int }

// Embed implements embed.Embedder.
func (b Bag) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = b.Vector(s)
	}
	return out, nil
}

// Vector is the vector of one text.
func (b Bag) Vector(s string) []float32 {
	v := make([]float32, b.Dim)
	v[0] = 0.01
	for _, w := range strings.Fields(strings.ToLower(s)) {
		h := fnv.New32a()
		_, _ = h.Write([]byte(w))
		v[int(h.Sum32())%b.Dim]++
	}
	var n float64
	for _, c := range v {
		n += float64(c) * float64(c)
	}
	for j := range v {
		v[j] /= float32(math.Sqrt(n))
	}
	return v
}

// Dimensions implements embed.Embedder.
func (b Bag) Dimensions() int { return b.Dim }

// ModelID implements embed.Embedder.
func (b Bag) ModelID() string { return "test/hash-bag" }
