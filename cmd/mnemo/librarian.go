package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/mnemo-dev/mnemo/graph"
)

const librarianUsage = "usage: mnemo librarian list [--status pending|approved|rejected] | show ID | approve ID [--note TEXT] | reject ID [--reason TEXT]"

// runLibrarian implements `mnemo librarian list|show|approve|reject`: the
// review queue of writes the gate held back.
func runLibrarian(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	verb, err := verbOf(args, librarianUsage, stderr, "list", "show", "approve", "reject")
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("mnemo librarian "+verb, flag.ContinueOnError)
	var id identity
	id.register(fs, "librarian")
	status := fs.String("status", "pending", "list: requests with this status")
	limit := fs.Int("limit", 100, "list: at most this many")
	note := fs.String("note", "", "approve: a note recorded with the approval")
	reason := fs.String("reason", "", "reject: why, recorded and returned to the author")
	a, pos, err := openWith(ctx, "mnemo librarian "+verb, fs, args[1:], stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if verb == "list" {
		reqs, _, err := a.engine.ListGateRequests(ctx, p, graph.GateStatus(*status), graph.Page{Limit: *limit})
		if err != nil {
			return err
		}
		for _, g := range reqs {
			fmt.Fprintf(stdout, "%s  %-8s  %s  by %s  rule %s  %q\n", g.ID, g.Status, g.CreatedAt.Format("2006-01-02 15:04"), g.RequestedBy, g.Rule, g.Title)
		}
		return nil
	}
	if len(pos) != 1 {
		return errors.New(librarianUsage)
	}
	switch verb {
	case "show":
		v, err := a.engine.GetGateRequest(ctx, p, pos[0])
		if err != nil {
			return err
		}
		return enc.Encode(v)
	case "approve":
		d, err := a.engine.ApproveGateRequest(ctx, p, pos[0], *note)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "approved %s: %s %s\n", pos[0], d.Result.Status, d.Result.ID)
		return nil
	case "reject":
		d, err := a.engine.RejectGateRequest(ctx, p, pos[0], *reason)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "rejected %s: %s\nfix: %s\n", pos[0], d.Reason, d.Fix)
		return nil
	}
	return errors.New(librarianUsage)
}
