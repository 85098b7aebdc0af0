package bench

import (
	"os"
	"path/filepath"
)

// DataDir returns the directory of the shared bench data: $MNEMO_BENCH_DIR
// when set, else the first shared/bench found beside the working directory
// or one of its parents (../shared/bench from a checkout, ../../shared/bench
// from a worktree under wt/, more from a package directory). When none is
// found it returns ../shared/bench, for the error to name.
func DataDir() string {
	if d := os.Getenv("MNEMO_BENCH_DIR"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			cand := filepath.Join(filepath.Dir(dir), "shared", "bench")
			if st, err := os.Stat(cand); err == nil && st.IsDir() {
				if rel, err := filepath.Rel(wd, cand); err == nil {
					return rel
				}
				return cand
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return filepath.Join("..", "shared", "bench")
}
