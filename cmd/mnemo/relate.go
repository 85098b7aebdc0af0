package main

import (
	"context"
	"fmt"
	"io"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

const relateUsage = "mnemo relate create FROM RELATES_TO|DEPENDS_ON|CONTRADICTS|DERIVED_FROM TO [--reason TEXT] | " +
	"delete RELATION_ID [--reason TEXT] | list MEMORY_ID [--limit N]"

// runRelate implements `mnemo relate create|delete|list`: explicit typed
// relations between memories (docs/curation.md, "Relations"), in process,
// as `mnemo edit` does.
func runRelate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo relate", relateUsage, stdout, stderr).withConfig()
	id := c.identity("writer")
	reason := c.fs.String("reason", "", "create, delete: why (recorded in the audit trail)")
	limit := c.fs.Int("limit", 100, "list: at most this many")
	verb, a, pos, err := c.openVerb(ctx, args, map[string]int{"create": 3, "delete": 1, "list": 1})
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	switch verb {
	case "create":
		res, err := a.engine.Relate(ctx, p, engine.RelationRequest{From: pos[0], Type: graph.RelationType(pos[1]), To: pos[2],
			Reason: *reason})
		if err != nil {
			return err
		}
		return c.print(res, nil)
	case "delete":
		rel, err := a.engine.Unrelate(ctx, p, pos[0], *reason)
		if err != nil {
			return err
		}
		return c.print(rel, nil)
	default: // list
		rels, err := a.engine.ListRelations(ctx, p, pos[0], *limit)
		if err != nil {
			return err
		}
		return c.print(nonNil(rels), func(w io.Writer) {
			for _, r := range rels {
				fmt.Fprintf(w, "%s  %s -%s-> %s  by %s  %s  %q\n", r.ID, r.FromID, r.Type, r.ToID, r.CreatedBy,
					r.CreatedAt.Format("2006-01-02 15:04"), r.Reason)
			}
		})
	}
}
