//go:build cgo

package embed

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	ort "github.com/yalue/onnxruntime_go"
)

// ortRuntime tracks onnxruntime_go's environment. That environment is
// process-global by construction: the library dlopens one libonnxruntime.so
// and keeps one OrtEnv in package variables of its own. This package-level
// state only mirrors it, so that several embedders (and tests) in one process
// share it instead of failing on a second InitializeEnvironment. It is never
// torn down: sessions may still exist in other embedders, and the OS frees it
// at exit. Unlike a sync.Once, a failed load (wrong path) can be retried.
var ortRuntime struct {
	mu   sync.Mutex
	path string // library the environment was loaded from; "" until loaded
}

// loadRuntime loads the ONNX Runtime shared library at path into the process
// once. Later calls with the same library are no-ops; a different library is
// refused with ErrRuntime, since only one can be loaded.
func loadRuntime(path string) error {
	if path == "" {
		return fmt.Errorf("no library path given: %w", ErrRuntime)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("library path %s: %w", path, err)
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	ortRuntime.mu.Lock()
	defer ortRuntime.mu.Unlock()
	if ortRuntime.path != "" {
		if ortRuntime.path != abs {
			return fmt.Errorf("onnxruntime already loaded from %s, cannot load %s: %w",
				ortRuntime.path, abs, ErrRuntime)
		}
		return nil
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("%w: %w", ErrRuntime, err)
	}
	ort.SetSharedLibraryPath(abs)
	if err := ort.InitializeEnvironment(ort.WithLogLevelError()); err != nil {
		return fmt.Errorf("load %s (onnxruntime >= 1.24 needed): %w: %w", abs, ErrRuntime, err)
	}
	ortRuntime.path = abs
	return nil
}
