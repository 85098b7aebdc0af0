package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// errVectorModel reports an embedded vector index whose vectors came from
// another embedding model than the one configured: its similarities would be
// meaningless, so nothing but `mnemo reindex` may use it.
var errVectorModel = errors.New("vector index was written by another embedding model")

// vectorModelFile is where, beside the embedded index, mnemo records which
// embedding model wrote it.
func vectorModelFile(dataDir string) string { return filepath.Join(dataDir, "vectors.model") }

// unrecorded names the model of an index written before mnemo recorded it.
const unrecorded = "unrecorded (an index from before the model was recorded: all-MiniLM-L6-v2)"

// checkVectorModel binds the embedded index in dataDir to model: an empty
// index records model; an index recorded with model passes; any other is
// refused with errVectorModel and the way out, unless reindexing
// (then the caller records model once the rebuild succeeded).
func checkVectorModel(dataDir string, idx *local.Index, model string, reindexing bool) error {
	if idx.Stats().Points == 0 {
		return recordVectorModel(dataDir, model) // nothing to mix up
	}
	path := vectorModelFile(dataDir)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b = []byte(unrecorded)
	case err != nil:
		return fmt.Errorf("read %s: %w", path, err)
	}
	have := strings.TrimSpace(string(b))
	if have == model || reindexing {
		return nil
	}
	return fmt.Errorf("%w: %s holds vectors of %s, the embedder is %s; stop the server and run `mnemo reindex` "+
		"once for each scope (tenant/org/repo) to rebuild them from the graph, which is untouched "+
		"(meanwhile `--vector off` runs on graph and keywords alone)",
		errVectorModel, filepath.Join(dataDir, "vectors"), have, model)
}

// explainVectorFormat adds the way out to an index refused because it was
// written in an older format (vector.ErrOldFormat): its points lack the
// owner, visibility and other fields the access filter reads, so reading
// it would show private memories to everyone. where names the index.
func explainVectorFormat(err error, where string) error {
	if !errors.Is(err, vector.ErrOldFormat) {
		return err
	}
	return fmt.Errorf("%w; stop the server and run `mnemo reindex` once for each scope (tenant/org/repo): "+
		"the first run empties %s and each run rebuilds its scope from the graph, which is untouched "+
		"(meanwhile `--vector off` runs on graph and keywords alone)", err, where)
}

// recordVectorModel writes model as the one that wrote the embedded index,
// atomically.
func recordVectorModel(dataDir, model string) error {
	path := vectorModelFile(dataDir)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(model+"\n"), 0o644); err != nil {
		return fmt.Errorf("record vector model: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("record vector model: %w", err)
	}
	return nil
}
