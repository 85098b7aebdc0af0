package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// ReloadPolicy replaces the running policy (types, gate rules, roles) with
// what load returns, for every request that starts afterwards. When load
// fails the running policy stays and the error (a policy.Errors naming
// file:line for a bad file) is returned. It needs the policy_reload
// permission and is audited in p's scope.
func (e *Engine) ReloadPolicy(ctx context.Context, p graph.Principal, load func() (*policy.Policy, error)) (string, error) {
	pol := e.policy.Current()
	if err := authorize(pol, p, policy.PermPolicyReload); err != nil {
		return "", err
	}
	old := pol.Name()
	if err := e.policy.Reload(load); err != nil {
		return "", fmt.Errorf("%w: %w", graph.ErrInvalid, err)
	}
	cur := e.policy.Current()
	name := cur.Name()
	e.log.Info("policy reloaded", "by", p.ID, "policy", name, "digest", cur.Digest())
	e.CheckCalibration()
	// The mark tells the other processes serving this store to reload too
	// (FollowPolicy).
	if _, err := e.store.MarkPolicy(ctx, cur.Digest(), name, p.ID, e.now().UTC()); err != nil {
		return name, fmt.Errorf("policy reloaded here, not announced to other replicas: %w", err)
	}
	ev := graph.AuditEvent{
		ID: graph.NewID(), Scope: p.Scope, Action: AuditPolicyReload, SubjectKind: subjectPolicy, ActorID: p.ID,
		Outcome: "reloaded", Reason: truncate(fmt.Sprintf("%s replaced %s", name, old), graph.MaxTitleLen), CreatedAt: e.now().UTC(),
	}
	if err := e.store.AppendAudit(ctx, ev); err != nil {
		return name, fmt.Errorf("policy reloaded, audit failed: %w", err)
	}
	return name, nil
}

// FollowPolicy keeps this process on the policy the deployment last
// reloaded, until ctx ends: every interval it reads the store's policy mark
// (which ReloadPolicy on any process serving the store bumps), and when the
// mark is newer than the last one seen and names another policy than the
// one running here, it reloads with load — this process's own policy
// source (its file, which replicas share). A reload that fails, or that
// still leaves another digest than the mark's (the replicas' files differ),
// is logged as an error and the running policy stays in the first case.
// SIGHUP reloads (mnemo serve) are this process's alone and set no mark.
// The first look follows a mark too: a reload elsewhere can land between
// this process loading its source and that look, and reloading the source
// then catches up (a digest that still differs is logged, as above).
func (e *Engine) FollowPolicy(ctx context.Context, interval time.Duration, load func() (*policy.Policy, error)) {
	seen := int64(-1)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		seen = e.followPolicy(ctx, seen, load)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// followPolicy is one FollowPolicy step: seen is the generation of the mark
// last acted on (-1 at start). It returns the generation seen.
func (e *Engine) followPolicy(ctx context.Context, seen int64, load func() (*policy.Policy, error)) int64 {
	m, err := e.store.PolicyMark(ctx)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Warn("policy mark not read; will retry", "err", err)
		}
		return seen
	}
	if m.Generation <= seen {
		return seen
	}
	if m.Generation == 0 || m.Digest == e.policy.Current().Digest() {
		return m.Generation
	}
	if err := e.policy.Reload(load); err != nil {
		e.log.Error("policy reload announced by another replica refused; the running policy stays",
			"by", m.MarkedBy, "err", err)
		return m.Generation
	}
	now := e.policy.Current()
	e.log.Info("policy reloaded, following another replica", "by", m.MarkedBy, "policy", now.Name(), "digest", now.Digest())
	e.CheckCalibration()
	if now.Digest() != m.Digest {
		e.log.Error("policy reloaded but differs from the replica's: their policy files differ",
			"running_digest", now.Digest(), "reloaded_digest", m.Digest, "by", m.MarkedBy)
	}
	return m.Generation
}
