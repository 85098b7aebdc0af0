package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
)

// runReindex implements `mnemo reindex`: rebuild the vector index of one
// scope from the graph.
func runReindex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mnemo reindex", flag.ContinueOnError)
	var id identity
	id.register(fs, "admin")
	a, _, err := openWith(ctx, "mnemo reindex", fs, args, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	start := time.Now()
	st, err := a.engine.Reindex(ctx, id.principal(), func(s engine.ReindexStats) {
		if s.Memories%1024 == 0 {
			a.log.Info("reindex progress", "memories", s.Memories)
		}
	})
	if err != nil {
		return vectorsHint(err)
	}
	if a.cfg.Vector.Backend == "embedded" { // the model now matches every point of this scope
		if err := recordVectorModel(a.cfg.DataDir, a.embedder.ModelID()); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "reindexed %d memories, removed %d orphan points in %s\n", st.Memories, st.Removed, time.Since(start).Round(time.Millisecond))
	return nil
}

// runDoctor implements `mnemo doctor`: compare the graph with the vector
// index and say what disagrees. It exits non-zero when they disagree.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mnemo doctor", flag.ContinueOnError)
	var id identity
	id.register(fs, "admin")
	examples := fs.Int("examples", 10, "ids to list per problem")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	a, _, err := openWith(ctx, "mnemo doctor", fs, args, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	rep, err := a.engine.Doctor(ctx, id.principal(), *examples)
	if err != nil {
		return vectorsHint(err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "graph: %d active memories; index: %d points\n", rep.Memories, rep.Points)
		fmt.Fprintf(stdout, "missing from index: %d %v\nstale version in index: %d %v\nindex entries without a graph memory: %d %v\n",
			rep.MissingCount, rep.Missing, rep.StaleCount, rep.Stale, rep.OrphanCount, rep.Orphans)
	}
	if !rep.Healthy() {
		return errors.New("graph and vector index disagree: run `mnemo reindex`")
	}
	return nil
}

func vectorsHint(err error) error {
	if errors.Is(err, engine.ErrVectorsOff) {
		return fmt.Errorf("%w (install the model with `make model`; an embedded index held by a running `mnemo serve` cannot be opened beside it)", err)
	}
	return err
}
