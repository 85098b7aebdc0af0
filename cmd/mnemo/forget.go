package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

const forgetUsage = "usage: mnemo forget ID... (archive) | --restore ID... | --erase ID... | --user USER (erase every memory of USER) [--reason TEXT]"

// runForget implements `mnemo forget`: archive (hidden, restorable),
// restore, erase for good (docs/forgetting.md), or erase a whole user.
func runForget(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mnemo forget", flag.ContinueOnError)
	var id identity
	id.registerScope(fs, "admin")
	restore := fs.Bool("restore", false, "restore archived memories instead of archiving")
	erase := fs.Bool("erase", false, "erase the memories' content for good, leaving tombstones")
	user := fs.String("user", "", "erase every memory of this user")
	reason := fs.String("reason", "", "recorded in the audit events (never quote the content)")
	a, pos, err := openWith(ctx, "mnemo forget", fs, args, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	switch {
	case *user != "":
		if len(pos) > 0 || *restore || *erase {
			return errors.New(forgetUsage)
		}
		start := time.Now()
		res, err := a.engine.EraseUser(ctx, p, *user, *reason)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "erased user %s: %d memories, %d versions, %d chunks, %d entities, %d outbox items in %s",
			*user, res.Memories, res.Versions, res.Chunks, res.Entities, res.Outbox, time.Since(start).Round(time.Millisecond))
		if res.Skipped > 0 {
			fmt.Fprintf(stdout, "; %d left (in a scope above yours)", res.Skipped)
		}
		fmt.Fprintln(stdout)
		return nil
	case len(pos) == 0 || (*restore && *erase):
		return errors.New(forgetUsage)
	}
	for _, mid := range pos {
		switch {
		case *erase:
			res, err := a.engine.Erase(ctx, p, mid, *reason)
			if err != nil {
				return err
			}
			if res.Memories == 0 {
				fmt.Fprintf(stdout, "%s was erased already\n", mid)
				continue
			}
			fmt.Fprintf(stdout, "erased %s: %d versions, %d chunks, %d entities, %d outbox items\n",
				mid, res.Versions, res.Chunks, res.Entities, res.Outbox)
		case *restore:
			if _, err := a.engine.Restore(ctx, p, mid, *reason); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "restored %s\n", mid)
		default:
			if _, err := a.engine.Archive(ctx, p, mid, *reason); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "archived %s (mnemo forget --restore %s brings it back)\n", mid, mid)
		}
	}
	return nil
}
