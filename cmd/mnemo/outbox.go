package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"
)

// runOutbox implements `mnemo outbox status` (pending, due and dead
// vector-index writes, with the dead letters' last errors), `mnemo outbox
// drain` (deliver what is due now; `mnemo serve` also drains in the
// background) and `mnemo outbox retry [ID...]` (requeue dead letters: the
// ones named, or all).
func runOutbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "usage: mnemo outbox status [--dead N] | drain [--batch N] | retry [ID...]"
	if _, err := verbOf(args, usage, stderr, "status", "drain", "retry"); err != nil {
		return err
	}
	fs := flag.NewFlagSet("mnemo outbox "+args[0], flag.ContinueOnError)
	batch := fs.Int("batch", 256, "items per pass (drain)")
	dead := fs.Int("dead", 20, "dead letters to list (status)")
	a, pos, err := openWith(ctx, "mnemo outbox "+args[0], fs, args[1:], stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	switch args[0] {
	case "status":
		return outboxStatus(ctx, a, *dead, stdout)
	case "retry":
		n, err := a.engine.RequeueDeadLetters(ctx, pos)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "requeued %d dead letters; the server's next drain (or `mnemo outbox drain`) delivers them\n", n)
		return nil
	}
	var total, embedded, failed, died int
	for {
		st, err := a.engine.DrainOutbox(ctx, *batch)
		if err != nil {
			return vectorsHint(err)
		}
		total, embedded, failed, died = total+st.Seen, embedded+st.Embedded, failed+st.Failed, died+st.Dead
		if st.Seen < *batch {
			break
		}
	}
	fmt.Fprintf(stdout, "drained %d items (%d embedded)\n", total-failed, embedded)
	if failed > 0 {
		return fmt.Errorf("%d items failed (see the log and `mnemo outbox status`); %d of them are now dead letters", failed, died)
	}
	return nil
}

func outboxStatus(ctx context.Context, a *app, deadLimit int, w io.Writer) error {
	st, err := a.engine.OutboxStatus(ctx, deadLimit)
	if err != nil {
		return err
	}
	if st.Pending == 0 && st.Dead == 0 {
		fmt.Fprintln(w, "outbox empty")
		return nil
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
	return nil
}
