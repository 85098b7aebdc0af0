package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// runOutbox implements `mnemo outbox status` (pending vector-index writes)
// and `mnemo outbox drain` (deliver them now; `mnemo serve` also drains in
// the background).
func runOutbox(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "usage: mnemo outbox status|drain [--batch N]"
	if len(args) == 0 || (args[0] != "status" && args[0] != "drain") {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("mnemo outbox "+args[0], flag.ContinueOnError)
	batch := fs.Int("batch", 256, "items per pass")
	a, _, err := openWith(ctx, "mnemo outbox "+args[0], fs, args[1:], stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	if args[0] == "status" {
		items, err := a.store.PendingOutbox(ctx, 10000)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			fmt.Fprintln(stdout, "outbox empty")
			return nil
		}
		n := fmt.Sprint(len(items))
		if len(items) == 10000 {
			n = "at least " + n
		}
		fmt.Fprintf(stdout, "%s pending, oldest %s ago\n", n, time.Since(items[0].CreatedAt).Round(time.Second))
		return nil
	}
	var total, embedded int
	for {
		st, err := a.engine.DrainOutbox(ctx, *batch)
		if err != nil {
			return err
		}
		total, embedded = total+st.Seen, embedded+st.Embedded
		if st.Failed > 0 {
			return fmt.Errorf("%d items failed (see the log); %d delivered", st.Failed, total-st.Failed)
		}
		if st.Seen < *batch {
			break
		}
	}
	fmt.Fprintf(stdout, "drained %d items (%d embedded)\n", total, embedded)
	return nil
}
