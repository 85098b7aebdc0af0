package main

import (
	"context"
	"fmt"
	"io"

	"github.com/mnemo-dev/mnemo/graph"
)

const librarianUsage = "mnemo librarian list [--status pending|approved|rejected] | show ID | approve ID [--note TEXT] | reject ID [--reason TEXT]"

// runLibrarian implements `mnemo librarian list|show|approve|reject`: the
// review queue of writes the gate held back.
func runLibrarian(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo librarian", librarianUsage, stdout, stderr).withConfig()
	id := c.identity("librarian")
	status := c.fs.String("status", "pending", "list: requests with this status")
	limit := c.fs.Int("limit", 100, "list: at most this many")
	note := c.fs.String("note", "", "approve: a note recorded with the approval")
	reason := c.fs.String("reason", "", "reject: why, recorded and returned to the author")
	verb, a, pos, err := c.openVerb(ctx, args, map[string]int{"list": 0, "show": 1, "approve": 1, "reject": 1})
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	switch verb {
	case "list":
		reqs, _, err := a.engine.ListGateRequests(ctx, p, graph.GateStatus(*status), graph.Page{Limit: *limit})
		if err != nil {
			return err
		}
		return c.print(nonNil(reqs), func(w io.Writer) {
			for _, g := range reqs {
				fmt.Fprintf(w, "%s  %-8s  %s  by %s  rule %s  %q\n", g.ID, g.Status, g.CreatedAt.Format("2006-01-02 15:04"), g.RequestedBy, g.Rule, g.Title)
			}
		})
	case "show":
		v, err := a.engine.GetGateRequest(ctx, p, pos[0])
		if err != nil {
			return err
		}
		return c.print(v, nil)
	case "approve":
		d, err := a.engine.ApproveGateRequest(ctx, p, pos[0], *note)
		if err != nil {
			return err
		}
		return c.print(d, func(w io.Writer) { fmt.Fprintf(w, "approved %s: %s %s\n", pos[0], d.Result.Status, d.Result.ID) })
	default: // reject
		d, err := a.engine.RejectGateRequest(ctx, p, pos[0], *reason)
		if err != nil {
			return err
		}
		return c.print(d, func(w io.Writer) { fmt.Fprintf(w, "rejected %s: %s\nfix: %s\n", pos[0], d.Reason, d.Fix) })
	}
}
