package engine_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/stretchr/testify/require"
)

// benchCache returns a fresh copy, under b.TempDir(), of the directory
// name in the benchmark cache (the user cache directory's mnemo/bench,
// MNEMO_BENCH_CACHE overrides), which build fills once when it is missing:
// loading a 100k corpus takes minutes on a loaded machine, copying it
// seconds. Each run gets its own copy, so no run searches a store an
// earlier run has written to. name carries a version the caller bumps when
// what build writes changes (the corpus, the SQLite migrations, the
// vector index format).
func benchCache(b *testing.B, name string, build func(dir string)) string {
	b.Helper()
	cache := os.Getenv("MNEMO_BENCH_CACHE")
	if cache == "" {
		d, err := os.UserCacheDir()
		require.NoError(b, err)
		cache = filepath.Join(d, "mnemo", "bench")
	}
	dir := filepath.Join(cache, name)
	if _, err := os.Stat(dir); err != nil {
		require.NoError(b, os.MkdirAll(cache, 0o755))
		tmp, err := os.MkdirTemp(cache, "building-")
		require.NoError(b, err)
		defer os.RemoveAll(tmp)
		build(tmp)
		require.NoError(b, os.Rename(tmp, dir))
	} else {
		b.Logf("loaded corpus from cache %s", dir)
	}
	run := b.TempDir()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(run, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(run, rel), data, 0o644)
	})
	require.NoError(b, err)
	return run
}

// benchSizes returns the corpus sizes a benchmark runs at
// (stats.Sizes: MNEMO_BENCH_SIZES, else def).
func benchSizes(b *testing.B, def ...int) []int {
	sizes, err := stats.Sizes(def...)
	require.NoError(b, err)
	return sizes
}
