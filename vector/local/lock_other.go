//go:build !unix

package local

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir opens dir/LOCK; without flock this platform relies on the
// operator running one process per data directory.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open vector lock: %w", err)
	}
	return f, nil
}
