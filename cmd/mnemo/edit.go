package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

const editUsage = "mnemo edit propose MEMORY_ID --kind retract|amend|quarantine|attenuate|block --reason TEXT " +
	"[--content TEXT] [--importance X] [--delta X] [--channel C] [--version V] | list MEMORY_ID [--status S] | " +
	"approve EDIT_ID [--note TEXT] | reject EDIT_ID [--reason TEXT]"

// runEdit implements `mnemo edit propose|list|approve|reject`: memory
// surgery (docs/curation.md), in process, as `mnemo librarian` does.
func runEdit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo edit", editUsage, stdout, stderr).withConfig()
	id := c.identity("librarian")
	fs := c.fs
	kind := fs.String("kind", "", "propose: retract, amend, quarantine, attenuate or block")
	reason := fs.String("reason", "", "propose, reject: why")
	note := fs.String("note", "", "approve: a note recorded with the approval")
	content := fs.String("content", "", "propose amend: the new text")
	importance := fs.String("importance", "", "propose amend or attenuate: the new importance in [0, 1]")
	delta := fs.String("delta", "", "propose attenuate: lower the importance by this (e.g. -0.5)")
	channel := fs.String("channel", "", "propose block: the channel to hide the memory on")
	versionID := fs.String("version", "", "propose: pin the edit to this version")
	status := fs.String("status", "", "list: edits with this status (pending, approved, rejected)")
	verb, a, pos, err := c.openVerb(ctx, args, map[string]int{"propose": 1, "list": 1, "approve": 1, "reject": 1})
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	switch verb {
	case "propose":
		r := engine.EditRequest{Kind: graph.EditKind(*kind), Content: *content, Channel: *channel,
			VersionID: *versionID, Reason: *reason}
		if r.Importance, err = optFloat("importance", *importance); err != nil {
			return err
		}
		if r.Delta, err = optFloat("delta", *delta); err != nil {
			return err
		}
		res, err := a.engine.ProposeEdit(ctx, p, pos[0], r)
		if err != nil {
			return err
		}
		return c.print(res, nil)
	case "list":
		eds, err := a.engine.ListMemoryEdits(ctx, p, pos[0], graph.EditStatus(*status))
		if err != nil {
			return err
		}
		return c.print(nonNil(eds), func(w io.Writer) {
			for _, e := range eds {
				fmt.Fprintf(w, "%s  %-10s  %-8s  %s  by %s  %q\n", e.ID, e.Kind, e.Status,
					e.CreatedAt.Format("2006-01-02 15:04"), e.CreatedBy, e.Reason)
			}
		})
	default: // approve, reject
		why := *note
		if verb == "reject" {
			why = *reason
		}
		res, err := a.engine.DecideEdit(ctx, p, pos[0], verb == "approve", why)
		if err != nil {
			return err
		}
		return c.print(res, nil)
	}
}

func optFloat(name, v string) (*float64, error) {
	if v == "" {
		return nil, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil, fmt.Errorf("--%s: %q is not a number", name, v)
	}
	return &x, nil
}

const auditUsage = "mnemo audit [--memory ID] [--actor A] [--action X] [--from T] [--to T] [--limit N] [--cursor C]"

// runAudit implements `mnemo audit`: the audit trail, oldest first, one
// page at a time (permission audit_read).
func runAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo audit", auditUsage, stdout, stderr).withConfig()
	id := c.identity("librarian")
	fs := c.fs
	memory := fs.String("memory", "", "events about this memory")
	actor := fs.String("actor", "", "events by this principal")
	action := fs.String("action", "", "events with this action (e.g. edit.approve)")
	from := fs.String("from", "", "events at or after this time (RFC 3339 or YYYY-MM-DD)")
	to := fs.String("to", "", "events before this time (RFC 3339 or YYYY-MM-DD)")
	limit := fs.Int("limit", 100, "at most this many")
	cursor := fs.String("cursor", "", "the next page's cursor, as the previous page printed it")
	a, _, err := c.open(ctx, args, 0)
	if err != nil {
		return err
	}
	defer a.Close()
	r := engine.AuditRequest{MemoryID: *memory, ActorID: *actor, Action: *action, Limit: *limit, Cursor: *cursor}
	if r.From, err = cliTime("from", *from); err != nil {
		return err
	}
	if r.To, err = cliTime("to", *to); err != nil {
		return err
	}
	evs, next, err := a.engine.ListAudit(ctx, id.principal(), r)
	if err != nil {
		return err
	}
	return c.print(pageOf(evs, next), func(w io.Writer) {
		for _, ev := range evs {
			fmt.Fprintf(w, "%s  %-22s  %s %s  by %s  %s  %q\n", ev.CreatedAt.Format(time.RFC3339), ev.Action,
				ev.SubjectKind, ev.SubjectID, ev.ActorID, ev.Outcome, ev.Reason)
		}
		printNext(w, next)
	})
}

func cliTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("--%s: %q is not RFC 3339 or YYYY-MM-DD", name, v)
}
