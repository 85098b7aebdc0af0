//go:build cgo

package embed

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestONNXGolden compares the Go pipeline with the references in
// testdata/golden.json: the fp32 model the int8 one is built from (the
// reference) and the same int8 model.onnx run from Python. All sentences go in one call, so padding and sorting are exercised.
func TestONNXGolden(t *testing.T) {
	cfg := installedConfig(t)
	g := loadGolden(t)
	e := openInstalled(t, cfg)
	require.Equal(t, g.Dimensions, e.Dimensions())
	require.Equal(t, g.ModelID, e.ModelID())

	texts := make([]string, len(g.Cases))
	for i, c := range g.Cases {
		texts[i] = c.Text
	}
	got, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	require.Len(t, got, len(texts))

	minRef, minONNX := 1.0, 1.0
	for i, c := range g.Cases {
		t.Run(name(c.Text), func(t *testing.T) {
			require.Len(t, got[i], g.Dimensions)
			assert.InDelta(t, 1, l2norm(got[i]), 1e-5, "unit length")
			ref, onnx := cosine(got[i], c.Reference), cosine(got[i], c.ONNX)
			assert.GreaterOrEqual(t, ref, 0.99, "cosine with the fp32 model")
			assert.GreaterOrEqual(t, onnx, 0.9999, "cosine with the Python ONNX pipeline")
			minRef, minONNX = math.Min(minRef, ref), math.Min(minONNX, onnx)
		})
	}
	t.Logf("min cosine: %.6f vs the fp32 model, %.6f vs Python onnxruntime", minRef, minONNX)
}

// TestONNXBatchMatchesSingle checks that padding a text inside a batch does
// not change its vector.
func TestONNXBatchMatchesSingle(t *testing.T) {
	e := openInstalled(t, installedConfig(t))
	texts := []string{"short", "a somewhat longer sentence about dark mode", "", "mid length text here"}
	batch, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	for i, text := range texts {
		one, err := e.Embed(context.Background(), []string{text})
		require.NoError(t, err)
		assert.GreaterOrEqual(t, cosine(one[0], batch[i]), 0.99999, "text %q", text)
	}
}

func TestONNXSimilarityIsMeaningful(t *testing.T) {
	e := openInstalled(t, installedConfig(t))
	v, err := e.Embed(context.Background(), []string{
		"The user prefers dark mode in the editor.",
		"Which colour theme does the user like in the IDE?",
		"Quarterly revenue grew by twelve percent.",
	})
	require.NoError(t, err)
	assert.Greater(t, cosine(v[0], v[1]), cosine(v[0], v[2])+0.2)
}

func TestONNXEmptyInput(t *testing.T) {
	e := openInstalled(t, installedConfig(t))
	got, err := e.Embed(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestONNXMaxLengthTruncates(t *testing.T) {
	cfg := installedConfig(t)
	cfg.MaxLength = 8
	e := openInstalled(t, cfg)
	// Both texts share their first 6 word pieces, which is all that fits.
	v, err := e.Embed(context.Background(), []string{
		"one two three four five six seven eight",
		"one two three four five six completely different ending here",
	})
	require.NoError(t, err)
	assert.InDelta(t, 1, cosine(v[0], v[1]), 1e-6)
}

func TestONNXConcurrent(t *testing.T) {
	e := openInstalled(t, installedConfig(t))
	texts := shortTexts(8, 1)
	want, err := e.Embed(context.Background(), texts)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	got := make([][][]float32, 4)
	for w := range 4 {
		wg.Go(func() { got[w], errs[w] = e.Embed(context.Background(), texts) })
	}
	wg.Wait()
	for w := range 4 {
		require.NoError(t, errs[w])
		for i := range texts {
			assert.GreaterOrEqual(t, cosine(want[i], got[w][i]), 0.99999)
		}
	}
}

func TestONNXContext(t *testing.T) {
	e := openInstalled(t, installedConfig(t))
	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := e.Embed(ctx, []string{"hello"})
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("deadline during a long call", func(t *testing.T) {
		long := strings.Repeat("a long text about many things ", 60)
		texts := make([]string, 256)
		for i := range texts {
			texts[i] = long
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := e.Embed(ctx, texts)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("usable afterwards", func(t *testing.T) {
		v, err := e.Embed(context.Background(), []string{"hello"})
		require.NoError(t, err)
		assert.Len(t, v[0], e.Dimensions())
	})
}

func TestONNXClose(t *testing.T) {
	e, err := OpenONNX(installedConfig(t))
	require.NoError(t, err)
	require.NoError(t, e.Close())
	require.NoError(t, e.Close(), "second close")
	_, err = e.Embed(context.Background(), []string{"hello"})
	assert.ErrorIs(t, err, ErrClosed)
}

// TestONNXTwoEmbedders checks that embedders share the process-wide runtime.
func TestONNXTwoEmbedders(t *testing.T) {
	cfg := installedConfig(t)
	a := openInstalled(t, cfg)
	cfg.Threads = 1
	b := openInstalled(t, cfg)
	va, err := a.Embed(context.Background(), []string{"shared runtime"})
	require.NoError(t, err)
	vb, err := b.Embed(context.Background(), []string{"shared runtime"})
	require.NoError(t, err)
	assert.GreaterOrEqual(t, cosine(va[0], vb[0]), 0.99999)
}

func TestOpenONNXRefuses(t *testing.T) {
	cfg := installedConfig(t)

	tests := []struct {
		name   string
		modify func(t *testing.T, c *Config)
		want   error
	}{
		{"no model dir", func(t *testing.T, c *Config) { c.ModelDir = "" }, ErrModel},
		{"missing model dir", func(t *testing.T, c *Config) { c.ModelDir = t.TempDir() }, ErrModel},
		{"max length beyond positions", func(t *testing.T, c *Config) { c.MaxLength = 513 }, ErrModel},
		{"other library", func(t *testing.T, c *Config) { c.LibraryPath = filepath.Join(t.TempDir(), "libonnxruntime.so") }, ErrRuntime},
		{"max pooling", func(t *testing.T, c *Config) {
			c.ModelDir = copyModelDir(t, c.ModelDir)
			require.NoError(t, os.WriteFile(filepath.Join(c.ModelDir, "1_Pooling", "config.json"),
				[]byte(`{"pooling_mode_max_tokens": true}`), 0o644))
		}, ErrModel},
		{"vocab of another model", func(t *testing.T, c *Config) {
			c.ModelDir = copyModelDir(t, c.ModelDir)
			f, err := os.OpenFile(filepath.Join(c.ModelDir, "vocab.txt"), os.O_APPEND|os.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = f.WriteString("extra\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, ErrModel},
		{"no model.onnx", func(t *testing.T, c *Config) {
			c.ModelDir = copyModelDir(t, c.ModelDir)
			require.NoError(t, os.Remove(filepath.Join(c.ModelDir, "model.onnx")))
		}, ErrModel},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			tc.modify(t, &c)
			e, err := OpenONNX(c)
			assert.ErrorIs(t, err, tc.want)
			assert.Nil(t, e)
		})
	}
	t.Run("negative threads", func(t *testing.T) {
		c := cfg
		c.Threads = -1
		_, err := OpenONNX(c)
		assert.Error(t, err)
	})
}

// copyModelDir copies the small files of a model directory and links
// model.onnx, so a test can alter the copy.
func copyModelDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Name() == "model.onnx":
			return os.Symlink(path, target)
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}
	})
	require.NoError(t, err)
	return dst
}

func TestLoadRuntimeRefusesMissingLibrary(t *testing.T) {
	err := loadRuntime(filepath.Join(t.TempDir(), "nope.so"))
	assert.True(t, errors.Is(err, ErrRuntime), "got %v", err)
	assert.ErrorIs(t, loadRuntime(""), ErrRuntime)
}

func l2norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// openInstalled opens the installed model and closes it when the test ends.
func openInstalled(tb testing.TB, cfg Config) *ONNX {
	tb.Helper()
	e, err := OpenONNX(cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, e.Close()) })
	return e
}

// cosine is the cosine similarity of a and b.
func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}
