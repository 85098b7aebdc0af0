package engine

import (
	"context"
	"fmt"

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
	name := e.policy.Current().Name()
	e.log.Info("policy reloaded", "by", p.ID, "policy", name)
	ev := graph.AuditEvent{
		ID: graph.NewID(), Scope: p.Scope, Action: AuditPolicyReload, SubjectKind: subjectPolicy, ActorID: p.ID,
		Outcome: "reloaded", Reason: truncate(fmt.Sprintf("%s replaced %s", name, old), graph.MaxTitleLen), CreatedAt: e.now().UTC(),
	}
	if err := e.store.AppendAudit(ctx, ev); err != nil {
		return name, fmt.Errorf("policy reloaded, audit failed: %w", err)
	}
	return name, nil
}
