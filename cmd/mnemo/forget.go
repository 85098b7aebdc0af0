package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
)

const forgetUsage = "mnemo forget ID... (archive) | --restore ID... | --erase ID... | --user USER (erase every memory of USER) [--reason TEXT]"

// runForget implements `mnemo forget`: archive (hidden, restorable),
// restore, erase for good (docs/forgetting.md), or erase a whole user.
func runForget(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo forget", forgetUsage, stdout, stderr).withConfig()
	id := c.scope("admin")
	fs := c.fs
	restore := fs.Bool("restore", false, "restore archived memories instead of archiving")
	erase := fs.Bool("erase", false, "erase the memories' content for good, leaving tombstones")
	user := fs.String("user", "", "erase every memory of this user")
	reason := fs.String("reason", "", "recorded in the audit events (never quote the content)")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if (*user != "" && (len(pos) > 0 || *restore || *erase)) || (*user == "" && len(pos) == 0) || (*restore && *erase) {
		return c.usageErr("")
	}
	a, err := c.openParsed(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	if *user != "" {
		start := time.Now()
		res, err := a.engine.EraseUser(ctx, p, *user, *reason)
		if err != nil {
			return err
		}
		return c.print(res, func(w io.Writer) {
			fmt.Fprintf(w, "erased user %s: %d memories, %d versions, %d chunks, %d entities, %d outbox items in %s",
				*user, res.Memories, res.Versions, res.Chunks, res.Entities, res.Outbox, time.Since(start).Round(time.Millisecond))
			if res.Skipped > 0 {
				fmt.Fprintf(w, "; %d left (in a scope above yours)", res.Skipped)
			}
			fmt.Fprintln(w)
		})
	}
	// Each memory is reported as it is done (text) or in one document at
	// the end (--json); a failure stops the run, with the done ones said.
	var done []forgotten
	report := func(f forgotten) {
		done = append(done, f)
		if !c.json {
			fmt.Fprintln(stdout, f.text())
		}
	}
	for _, mid := range pos {
		switch {
		case *erase:
			res, err := a.engine.Erase(ctx, p, mid, *reason)
			if err != nil {
				return err
			}
			report(forgotten{ID: mid, Action: "erased", Erasure: &res})
		case *restore:
			if _, err := a.engine.Restore(ctx, p, mid, *reason); err != nil {
				return err
			}
			report(forgotten{ID: mid, Action: "restored"})
		default:
			if _, err := a.engine.Archive(ctx, p, mid, *reason); err != nil {
				return err
			}
			report(forgotten{ID: mid, Action: "archived"})
		}
	}
	if c.json {
		return printJSON(stdout, struct {
			Results []forgotten `json:"results"`
		}{done})
	}
	return nil
}

// forgotten is what `mnemo forget` did to one memory.
type forgotten struct {
	ID      string              `json:"id"`
	Action  string              `json:"action"` // archived, restored or erased
	Erasure *engine.EraseResult `json:"erasure,omitempty"`
}

func (f forgotten) text() string {
	switch {
	case f.Action == "archived":
		return fmt.Sprintf("archived %s (mnemo forget --restore %s brings it back)", f.ID, f.ID)
	case f.Action == "restored":
		return "restored " + f.ID
	case f.Erasure.Memories == 0:
		return f.ID + " was erased already"
	}
	r := f.Erasure
	return fmt.Sprintf("erased %s: %d versions, %d chunks, %d entities, %d outbox items", f.ID, r.Versions, r.Chunks, r.Entities, r.Outbox)
}
