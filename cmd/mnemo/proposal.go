package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

const proposalUsage = "mnemo proposal create MEMORY_ID (--version V | --version-number N) --content TEXT [--title T] | " +
	"accept ID [--note TEXT] | reject ID --reason TEXT | rebase ID [--content TEXT] [--title T] | show ID | " +
	"list [--memory ID] [--status S] [--limit N]"

// runProposal implements `mnemo proposal create|accept|reject|rebase|show|list`:
// the curation loop's proposals (docs/curation.md), in process, as `mnemo
// edit` does.
func runProposal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo proposal", proposalUsage, stdout, stderr).withConfig()
	id := c.identity("librarian")
	fs := c.fs
	version := fs.String("version", "", "create: the version id the proposal was written against")
	number := fs.Int("version-number", 0, "create: the version number the proposal was written against")
	content := fs.String("content", "", "create: the proposed text; rebase: a new text")
	title := fs.String("title", "", "create, rebase: a title (default: the memory's)")
	note := fs.String("note", "", "accept: a note recorded with the acceptance")
	reason := fs.String("reason", "", "reject: why")
	memory := fs.String("memory", "", "list: the proposals on this memory")
	status := fs.String("status", "", "list: proposals with this status (open, accepted, rejected, rebased)")
	limit := fs.Int("limit", 50, "list: at most this many")
	verb, a, pos, err := c.openVerb(ctx, args, map[string]int{"create": 1, "accept": 1, "reject": 1, "rebase": 1, "show": 1, "list": 0})
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	if verb == "list" {
		prs, err := a.engine.ListProposals(ctx, p, engine.ProposalList{MemoryID: *memory, Status: graph.ProposalStatus(*status), Limit: *limit})
		if err != nil {
			return err
		}
		return c.print(nonNil(prs), func(w io.Writer) {
			for _, pr := range prs {
				fmt.Fprintf(w, "%s  %-8s  memory %s at %s  by %s  %s\n", pr.ID, pr.Status, pr.MemoryID,
					pr.TargetVersionID, pr.ProposedBy, pr.CreatedAt.Format(time.RFC3339))
			}
		})
	}
	var out any
	switch verb {
	case "create":
		out, err = a.engine.Propose(ctx, p, engine.ProposalRequest{MemoryID: pos[0], VersionID: *version,
			VersionNumber: *number, Title: *title, Content: *content})
	case "accept":
		out, err = a.engine.AcceptProposal(ctx, p, pos[0], *note)
	case "reject":
		out, err = a.engine.RejectProposal(ctx, p, pos[0], *reason)
	case "rebase":
		out, err = a.engine.RebaseProposal(ctx, p, pos[0], engine.RebaseRequest{Title: *title, Content: *content})
	default: // show
		out, err = a.engine.GetProposal(ctx, p, pos[0])
	}
	if err != nil {
		return err
	}
	return c.print(out, nil)
}

const baselineUsage = "mnemo baseline promote [--name N] [--from BASELINE_ID] [--idempotency-key K] | list [--limit N] " +
	"(the repository is --org/--repo)"

// runBaseline implements `mnemo baseline promote|list`: a repository's
// published baselines (docs/curation.md).
func runBaseline(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo baseline", baselineUsage, stdout, stderr).withConfig()
	id := c.identity("librarian")
	name := c.fs.String("name", "", "promote: the baseline's name (default: promoted <time>)")
	from := c.fs.String("from", "", "promote: publish this older baseline's versions again (a rollback)")
	limit := c.fs.Int("limit", 50, "list: at most this many")
	key := c.fs.String("idempotency-key", "", "promote: a retry with the same key answers the first promote's baseline")
	verb, a, _, err := c.openVerb(ctx, args, map[string]int{"promote": 0, "list": 0})
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	switch verb {
	case "promote":
		b, err := a.engine.PromoteBaseline(ctx, p, engine.PromoteRequest{Name: *name, BaselineID: *from, IdempotencyKey: *key})
		if err != nil {
			return err
		}
		return c.print(b, nil)
	default: // list
		bs, err := a.engine.ListBaselines(ctx, p, nil, *limit)
		if err != nil {
			return err
		}
		return c.print(nonNil(bs), func(w io.Writer) {
			for _, b := range bs {
				mark := " "
				if b.Published {
					mark = "*"
				}
				fmt.Fprintf(w, "%s %s  %-24s  %d versions  by %s  %s\n", mark, b.ID, b.Name, b.VersionCount,
					b.PublishedBy, b.CreatedAt.Format(time.RFC3339))
			}
		})
	}
}
