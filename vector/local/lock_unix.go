//go:build unix

package local

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive advisory lock on dir/LOCK so that two processes
// never append to the same log. The kernel drops it when the process dies.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open vector lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("vector index %s is in use by another process (another mnemo on this data directory?): "+
			"the embedded index serves one process; replicas share Neo4j and an external vector index (docs/scale.md): %w", dir, err)
	}
	return f, nil
}
