package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// runReindex implements `mnemo reindex`: rebuild the vector index of one
// scope from the graph.
func runReindex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo reindex", "mnemo reindex [flags]   (the scope is --tenant/--org/--repo)", stdout, stderr).withConfig()
	id := c.identity("admin")
	a, _, err := c.open(ctx, args, 0)
	if err != nil {
		return err
	}
	defer a.Close()
	start := time.Now()
	// The total is the active memories the store counts: every scope's,
	// so on a store of several scopes the bar ends short of full (unknown
	// when the store cannot count).
	var total int
	if s, err := a.engine.Stats(ctx); err == nil && s.Counted {
		total = s.Counts.Memories[graph.StatusActive]
	}
	bar := newProgress(stderr, "reindex", "memories", c.json)
	st, err := a.engine.Reindex(ctx, id.principal(), func(s engine.ReindexStats) { bar.update(s.Memories, max(total, s.Memories), "") })
	bar.done()
	if err != nil {
		return vectorsHint(err)
	}
	if a.cfg.Vector.Backend == "embedded" { // the model now matches every point of this scope
		if err := recordVectorModel(a.cfg.DataDir, a.embedder.ModelID()); err != nil {
			return err
		}
	}
	took := time.Since(start)
	return c.print(struct {
		engine.ReindexStats
		TookMS int64 `json:"took_ms"`
	}{st, took.Milliseconds()}, func(w io.Writer) {
		fmt.Fprintf(w, "reindexed %d memories, removed %d orphan points in %s\n", st.Memories, st.Removed, took.Round(time.Millisecond))
	})
}

// runDoctor implements `mnemo doctor`: compare the graph with the vector
// index and say what disagrees. It exits non-zero when they disagree.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo doctor", "mnemo doctor [flags]   (the scope is --tenant/--org/--repo)", stdout, stderr).withConfig()
	id := c.identity("admin")
	examples := c.fs.Int("examples", 10, "ids to list per problem")
	a, _, err := c.open(ctx, args, 0)
	if err != nil {
		return err
	}
	defer a.Close()
	rep, err := a.engine.Doctor(ctx, id.principal(), *examples)
	if err != nil {
		return vectorsHint(err)
	}
	err = c.print(rep, func(w io.Writer) {
		fmt.Fprintf(w, "graph: %d active memories; index: %d points\n", rep.Memories, rep.Points)
		fmt.Fprintf(w, "missing from index: %d %v\nstale version in index: %d %v\nindex entries without a graph memory: %d %v\n",
			rep.MissingCount, rep.Missing, rep.StaleCount, rep.Stale, rep.OrphanCount, rep.Orphans)
	})
	if err != nil {
		return err
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
