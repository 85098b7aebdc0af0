package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
)

const capsuleUsage = "mnemo capsule create --subject TEXT --to AGENT[,AGENT] [--memory ID,...] [--version ID,...] " +
	"[--decision ID,...] [--ttl DURATION] [--idempotency-key K] | list [--sent] [--limit N] [--cursor C] | show CAPSULE_ID | " +
	"revoke CAPSULE_ID [--reason TEXT] | bundle [--session S] [--project P] [--channel C] [--budget TOKENS]"

// runCapsule implements `mnemo capsule create|list|show|revoke|bundle`: capsules
// between agents (docs/curation.md), in process, as `mnemo edit` does.
// --as names the agent: the creator, or the one whose capsules are listed.
func runCapsule(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo capsule", capsuleUsage, stdout, stderr).withConfig()
	id := c.identity("writer")
	fs := c.fs
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
	key := fs.String("idempotency-key", "", "create: a retry with the same key answers the first create's capsule")
	session := fs.String("session", "", "bundle: the agent's session (its items and session decisions)")
	project := fs.String("project", "", "bundle: narrow decisions and tasks to this project")
	channel := fs.String("channel", "", "bundle: the channel edits are applied for (a block hides on its channel)")
	budget := fs.Int("budget", 0, "bundle: the token budget (default: the policy's)")
	verb, a, pos, err := c.openVerb(ctx, args, map[string]int{"create": 0, "list": 0, "show": 1, "revoke": 1, "bundle": 0})
	if err != nil {
		return err
	}
	defer a.Close()
	p := id.principal()
	switch verb {
	case "create":
		if *ttl%time.Second != 0 || *ttl < 0 {
			return fmt.Errorf("--ttl: %s is not a whole number of seconds", *ttl)
		}
		cp, err := a.engine.CreateCapsule(ctx, p, engine.CapsuleRequest{Subject: *subject, Audience: commaList(*to),
			MemoryIDs: commaList(*memories), VersionIDs: commaList(*versions), DecisionIDs: commaList(*decisions),
			TTLSeconds: int64(*ttl / time.Second), IdempotencyKey: *key})
		if err != nil {
			return err
		}
		return c.print(cp, nil)
	case "list":
		cs, next, err := a.engine.ListCapsules(ctx, p, engine.CapsuleListRequest{Sent: *sent, Limit: *limit, Cursor: *cursor})
		if err != nil {
			return err
		}
		return c.print(pageOf(cs, next), func(w io.Writer) {
			for _, cp := range cs {
				fmt.Fprintf(w, "%s  %q  from %s to %v  expires %s\n", cp.ID, cp.Subject, cp.CreatedBy, cp.Audience,
					cp.ExpiresAt.Format(time.RFC3339))
				for _, it := range cp.Items {
					fmt.Fprintf(w, "  %-8s %s  %q\n", it.Kind, it.ID, it.Title)
				}
			}
			printNext(w, next)
		})
	case "show":
		v, err := a.engine.GetCapsule(ctx, p, pos[0])
		if err != nil {
			return err
		}
		return c.print(v, nil)
	case "bundle":
		b, err := a.engine.ContextBundle(ctx, p, engine.BundleRequest{SessionID: *session, ProjectID: *project,
			Channel: *channel, TokenBudget: *budget})
		if err != nil {
			return err
		}
		return c.print(b, nil)
	default: // revoke
		cp, err := a.engine.RevokeCapsule(ctx, p, pos[0], *reason)
		if err != nil {
			return err
		}
		return c.print(cp, nil)
	}
}
