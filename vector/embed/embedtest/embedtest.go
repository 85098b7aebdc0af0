// Package embedtest holds a small deterministic embed.Embedder for tests of
// the packages above vector: the write and read paths' plumbing and access
// rules are under test there, not the quality of the vectors, so a bag of
// hashed words stands in for the ONNX model.
package embedtest

import (
	"context"
	"hash/fnv"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector/embed"
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

// ONNX opens the real embedder for a benchmark: the one MNEMO_ORT_LIB and
// MNEMO_MODEL_DIR name, else the one `make model` installed in cacheDir.
// It returns nil, and says so in tb's log, when none is installed: the
// benchmarks then measure the graph and keyword signals only.
func ONNX(tb testing.TB, cacheDir string) *embed.ONNX {
	tb.Helper()
	cfg := Config(cacheDir)
	if _, err := os.Stat(cfg.LibraryPath); err != nil {
		tb.Logf("ONNX embedder not installed (%v): graph + keyword only", err)
		return nil
	}
	emb, err := embed.OpenONNX(cfg)
	if err != nil {
		tb.Fatalf("open the ONNX embedder: %v", err)
	}
	return emb
}

// Config is the embedder configuration ONNX opens: the runtime
// MNEMO_ORT_LIB names and the model MNEMO_MODEL_DIR names, each else the
// one `make model` installed in cacheDir. Each variable counts alone, so
// MNEMO_ORT_LIB=/missing turns the embedder off (ONNX returns nil): until
// 2026-11-29 one variable without the other was ignored, and a benchmark
// meant to run without vectors built an HNSW index of the installed model.
func Config(cacheDir string) embed.Config {
	cfg := embed.InstalledConfig(cacheDir)
	if v := os.Getenv("MNEMO_ORT_LIB"); v != "" {
		cfg.LibraryPath = v
	}
	if v := os.Getenv("MNEMO_MODEL_DIR"); v != "" {
		cfg.ModelDir = v
	}
	return cfg
}

// Uncalibrated sets r for vectors the default relevance calibration
// (policy.DefaultCosineMid, fitted on bge-small-en-v1.5) was not fitted
// on: Bag's, or seeded random corpus vectors, which sit within about ±0.25
// of any query. Abstention is off, and the calibration moves below every
// such cosine, so that the vector floor (engine.vectorFloor) cuts no hit
// and the vector signal runs on each, as on real data.
func Uncalibrated(r *policy.Retrieval) {
	r.AbstentionThreshold = 0
	r.Relevance.CosineMid = -0.5
}
