package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

const relateUsage = "usage: mnemo relate create FROM RELATES_TO|DEPENDS_ON|CONTRADICTS|DERIVED_FROM TO [--reason TEXT] | " +
	"delete RELATION_ID [--reason TEXT] | list MEMORY_ID [--limit N]"

// runRelate implements `mnemo relate create|delete|list`: explicit typed
// relations between memories (docs/curation.md, "Relations"), in process,
// as `mnemo edit` does.
func runRelate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	verb, err := verbOf(args, relateUsage, stderr, "create", "delete", "list")
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("mnemo relate "+verb, flag.ContinueOnError)
	var id identity
	id.register(fs, "writer")
	reason := fs.String("reason", "", "create, delete: why (recorded in the audit trail)")
	limit := fs.Int("limit", 100, "list: at most this many")
	a, pos, err := openWith(ctx, "mnemo relate "+verb, fs, args[1:], stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	switch {
	case verb == "create" && len(pos) == 3:
		res, err := a.engine.Relate(ctx, p, engine.RelationRequest{From: pos[0], Type: graph.RelationType(pos[1]), To: pos[2],
			Reason: *reason})
		if err != nil {
			return err
		}
		return enc.Encode(res)
	case verb == "delete" && len(pos) == 1:
		rel, err := a.engine.Unrelate(ctx, p, pos[0], *reason)
		if err != nil {
			return err
		}
		return enc.Encode(rel)
	case verb == "list" && len(pos) == 1:
		rels, err := a.engine.ListRelations(ctx, p, pos[0], *limit)
		if err != nil {
			return err
		}
		for _, r := range rels {
			fmt.Fprintf(stdout, "%s  %s -%s-> %s  by %s  %s  %q\n", r.ID, r.FromID, r.Type, r.ToID, r.CreatedBy,
				r.CreatedAt.Format("2006-01-02 15:04"), r.Reason)
		}
		return nil
	}
	return errors.New(relateUsage)
}
