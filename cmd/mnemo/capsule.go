package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
)

const capsuleUsage = "usage: mnemo capsule create --subject TEXT --to AGENT[,AGENT] [--memory ID,...] [--version ID,...] " +
	"[--decision ID,...] [--ttl DURATION] | list [--sent] [--limit N] [--cursor C] | show CAPSULE_ID | " +
	"revoke CAPSULE_ID [--reason TEXT]"

// runCapsule implements `mnemo capsule create|list|show|revoke`: capsules
// between agents (docs/curation.md), in process, as `mnemo edit` does.
// --as names the agent: the creator, or the one whose capsules are listed.
func runCapsule(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	verb, err := verbOf(args, capsuleUsage, stderr, "create", "list", "show", "revoke")
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("mnemo capsule "+verb, flag.ContinueOnError)
	var id identity
	id.register(fs, "writer")
	subject := fs.String("subject", "", "create: what the capsule is about")
	to := fs.String("to", "", "create: the agents (principal ids) it is for, comma-separated")
	memories := fs.String("memory", "", "create: memory ids, comma-separated")
	versions := fs.String("version", "", "create: version ids, comma-separated")
	decisions := fs.String("decision", "", "create: decision ids, comma-separated")
	ttl := fs.Duration("ttl", 0, "create: how long it lives (default 168h, at most 720h)")
	sent := fs.Bool("sent", false, "list: the capsules --as created, not those addressed to it")
	limit := fs.Int("limit", 20, "list: at most this many")
	cursor := fs.String("cursor", "", "list: the next page's cursor, as the previous page printed it")
	reason := fs.String("reason", "", "revoke: why")
	a, pos, err := openWith(ctx, "mnemo capsule "+verb, fs, args[1:], stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	switch {
	case verb == "create" && len(pos) == 0:
		if *ttl%time.Second != 0 || *ttl < 0 {
			return fmt.Errorf("--ttl: %s is not a whole number of seconds", *ttl)
		}
		c, err := a.engine.CreateCapsule(ctx, p, engine.CapsuleRequest{Subject: *subject, Audience: commaList(*to),
			MemoryIDs: commaList(*memories), VersionIDs: commaList(*versions), DecisionIDs: commaList(*decisions),
			TTLSeconds: int64(*ttl / time.Second)})
		if err != nil {
			return err
		}
		return enc.Encode(c)
	case verb == "list" && len(pos) == 0:
		cs, next, err := a.engine.ListCapsules(ctx, p, engine.CapsuleListRequest{Sent: *sent, Limit: *limit, Cursor: *cursor})
		if err != nil {
			return err
		}
		for _, c := range cs {
			fmt.Fprintf(stdout, "%s  %q  from %s to %v  expires %s\n", c.ID, c.Subject, c.CreatedBy, c.Audience,
				c.ExpiresAt.Format(time.RFC3339))
			for _, it := range c.Items {
				fmt.Fprintf(stdout, "  %-8s %s  %q\n", it.Kind, it.ID, it.Title)
			}
		}
		if next != "" {
			fmt.Fprintf(stdout, "next page: --cursor %s\n", next)
		}
		return nil
	case verb == "show" && len(pos) == 1:
		v, err := a.engine.GetCapsule(ctx, p, pos[0])
		if err != nil {
			return err
		}
		return enc.Encode(v)
	case verb == "revoke" && len(pos) == 1:
		c, err := a.engine.RevokeCapsule(ctx, p, pos[0], *reason)
		if err != nil {
			return err
		}
		return enc.Encode(c)
	}
	return errors.New(capsuleUsage)
}
