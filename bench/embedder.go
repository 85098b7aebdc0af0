package bench

import (
	"context"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/vector/embed"
)

// OpenEmbedder opens the ONNX embedder from MNEMO_ORT_LIB and
// MNEMO_MODEL_DIR (read with getenv), else from cacheDir (the project's
// .cache/mnemo) when it is installed there; it returns nil (vectors off)
// when neither is present.
func OpenEmbedder(getenv func(string) string, cacheDir string) (*embed.ONNX, error) {
	cfg := embed.Config{LibraryPath: getenv("MNEMO_ORT_LIB"), ModelDir: getenv("MNEMO_MODEL_DIR")}
	if cfg.LibraryPath == "" || cfg.ModelDir == "" {
		def := embed.InstalledConfig(filepath.Clean(cacheDir))
		if _, err := os.Stat(def.LibraryPath); err != nil {
			return nil, nil
		}
		cfg = def
	}
	return embed.OpenONNX(cfg)
}

// DefaultVectorCache is where benchmark runs keep the vectors of the texts
// they embedded (one file per model), so a rerun embeds only new texts:
// <user cache dir>/mnemo/bench-vectors.
func DefaultVectorCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "mnemo", "bench-vectors")
}

// CachedEmbedder remembers the vector of every text it embeds, so each
// question is embedded once however many modes search it and, with a file,
// a corpus is embedded once across runs. A vector depends only on the model
// and the text (the model id names the file), so a cached one is the one
// the model would compute.
type CachedEmbedder struct {
	engine.Embedder
	file  string
	mu    sync.Mutex
	cache map[[32]byte][]float32
	added int
}

// NewCachedEmbedder wraps e; with dir set it loads the vectors cached for
// e's model there, and Save writes them back.
func NewCachedEmbedder(e engine.Embedder, dir string) (*CachedEmbedder, error) {
	c := &CachedEmbedder{Embedder: e, cache: map[[32]byte][]float32{}}
	if dir == "" {
		return c, nil
	}
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == ' ' {
			return '_'
		}
		return r
	}, e.ModelID())
	c.file = filepath.Join(dir, fmt.Sprintf("%s-%d.gob", name, e.Dimensions()))
	f, err := os.Open(c.file)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := gob.NewDecoder(f).Decode(&c.cache); err != nil {
		// A torn or foreign file only costs the embeddings: start over.
		c.cache = map[[32]byte][]float32{}
	}
	for k, v := range c.cache {
		if len(v) != e.Dimensions() {
			delete(c.cache, k)
		}
	}
	return c, nil
}

// Embed returns the vectors of texts, embedding in one call those not
// cached.
func (c *CachedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	keys := make([][32]byte, len(texts))
	var missing []string
	var at []int
	c.mu.Lock()
	for i, t := range texts {
		keys[i] = sha256.Sum256([]byte(t))
		if v, ok := c.cache[keys[i]]; ok {
			out[i] = v
		} else {
			missing, at = append(missing, t), append(at, i)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	vs, err := c.Embedder.Embed(ctx, missing)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(missing) {
		return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vs), len(missing))
	}
	c.mu.Lock()
	for j, i := range at {
		out[i] = vs[j]
		c.cache[keys[i]] = vs[j]
	}
	c.added += len(missing)
	c.mu.Unlock()
	return out, nil
}

// Save writes the cache to its file when it learnt new vectors (replacing
// the file atomically, so concurrent runs never read a torn one); without
// a file it does nothing.
func (c *CachedEmbedder) Save() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == "" || c.added == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(c.file), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(c.file), filepath.Base(c.file)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := gob.NewEncoder(tmp).Encode(c.cache); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), c.file); err != nil {
		return err
	}
	c.added = 0
	return nil
}
