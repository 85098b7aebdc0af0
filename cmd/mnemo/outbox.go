package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// runOutbox implements `mnemo outbox status` (pending, due and dead
// vector-index writes, with the dead letters' last errors), `mnemo outbox
// drain` (deliver what is due now; `mnemo serve` also drains in the
// background) and `mnemo outbox retry [ID...]` (requeue dead letters: the
// ones named, or all).
func runOutbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo outbox", "mnemo outbox status [--dead N] | drain [--batch N] | retry [ID...]", stdout, stderr).withConfig()
	batch := c.fs.Int("batch", 256, "items per pass (drain)")
	dead := c.fs.Int("dead", 20, "dead letters to list (status)")
	verb, a, pos, err := c.openVerb(ctx, args, map[string]int{"status": 0, "drain": 0, "retry": anyArgs})
	if err != nil {
		return err
	}
	defer a.Close()
	switch verb {
	case "status":
		st, err := a.engine.OutboxStatus(ctx, *dead)
		if err != nil {
			return err
		}
		return c.print(st, func(w io.Writer) { printOutboxStatus(w, st) })
	case "retry":
		n, err := a.engine.RequeueDeadLetters(ctx, pos)
		if err != nil {
			return err
		}
		return c.print(map[string]int{"requeued": n}, func(w io.Writer) {
			fmt.Fprintf(w, "requeued %d dead letters; the server's next drain (or `mnemo outbox drain`) delivers them\n", n)
		})
	}
	var d drained
	for {
		st, err := a.engine.DrainOutbox(ctx, *batch)
		if err != nil {
			return vectorsHint(err)
		}
		d.Seen, d.Embedded, d.Failed, d.Dead = d.Seen+st.Seen, d.Embedded+st.Embedded, d.Failed+st.Failed, d.Dead+st.Dead
		if st.Seen < *batch {
			break
		}
	}
	d.Drained = d.Seen - d.Failed
	if err := c.print(d, func(w io.Writer) { fmt.Fprintf(w, "drained %d items (%d embedded)\n", d.Drained, d.Embedded) }); err != nil {
		return err
	}
	if d.Failed > 0 {
		return fmt.Errorf("%d items failed (see the log and `mnemo outbox status`); %d of them are now dead letters", d.Failed, d.Dead)
	}
	return nil
}

// drained is what `mnemo outbox drain` did.
type drained struct {
	Seen     int `json:"seen"`
	Drained  int `json:"drained"`
	Embedded int `json:"embedded"`
	Failed   int `json:"failed"`
	Dead     int `json:"dead"`
}

func printOutboxStatus(w io.Writer, st graph.OutboxStatus) {
	if st.Pending == 0 && st.Dead == 0 {
		fmt.Fprintln(w, "outbox empty")
		return
	}
	fmt.Fprintf(w, "%d pending (%d due now, %d waiting to retry), %d dead letters\n", st.Pending, st.Due, st.Pending-st.Due, st.Dead)
	if !st.Oldest.IsZero() {
		fmt.Fprintf(w, "oldest pending: %s ago\n", time.Since(st.Oldest).Round(time.Second))
	}
	for _, it := range st.DeadLetters {
		fmt.Fprintf(w, "dead %s memory=%s version=%s tenant=%s attempts=%d: %s\n",
			it.ID, it.MemoryID, it.VersionID, it.Scope.TenantID, it.Attempts, it.LastError)
	}
	if st.Dead > len(st.DeadLetters) {
		fmt.Fprintf(w, "... and %d more dead letters (--dead N lists more)\n", st.Dead-len(st.DeadLetters))
	}
	if st.Dead > 0 {
		fmt.Fprintln(w, "`mnemo outbox retry` requeues dead letters")
	}
}
