package engine

import (
	"fmt"

	"github.com/mnemo-dev/mnemo/graph"
)

// authorize checks that p holds perm.
func (e *Engine) authorize(p graph.Principal, perm string) error {
	if err := p.Scope.Validate(); err != nil {
		return fmt.Errorf("%w: principal %q has no valid scope", graph.ErrForbidden, p.ID)
	}
	if !e.policy.Current().Allows(p.Roles, perm) {
		return fmt.Errorf("%w: principal %q lacks permission %q", graph.ErrForbidden, p.ID, perm)
	}
	return nil
}

// scopeFor returns the scope a request acts in: the principal's, or a
// narrower one the request names. Asking for a wider or foreign scope is
// forbidden.
func scopeFor(p graph.Principal, want *graph.Scope) (graph.Scope, error) {
	if want == nil || *want == (graph.Scope{}) {
		return p.Scope, nil
	}
	s := *want
	if s.TenantID == "" {
		s.TenantID = p.Scope.TenantID
	}
	if s.OrgID == "" {
		s.OrgID = p.Scope.OrgID
	}
	if s.RepoID == "" {
		s.RepoID = p.Scope.RepoID
	}
	if err := s.Validate(); err != nil {
		return graph.Scope{}, err
	}
	narrower := s.TenantID == p.Scope.TenantID &&
		(p.Scope.OrgID == "" || s.OrgID == p.Scope.OrgID) &&
		(p.Scope.RepoID == "" || s.RepoID == p.Scope.RepoID)
	if !narrower {
		return graph.Scope{}, fmt.Errorf("%w: scope %s is outside principal %q's scope %s",
			graph.ErrForbidden, scopeText(s), p.ID, scopeText(p.Scope))
	}
	return s, nil
}

// readFilter builds the store filter for a read by p in scope want, with
// the principal's permissions deciding what may be widened.
func (e *Engine) readFilter(p graph.Principal, want *graph.Scope, f graph.Filter) (graph.Filter, error) {
	if err := e.authorize(p, PermRead); err != nil {
		return graph.Filter{}, err
	}
	s, err := scopeFor(p, want)
	if err != nil {
		return graph.Filter{}, err
	}
	f.Scope = s
	if f.IncludeQuarantined && !e.policy.Current().Allows(p.Roles, PermReadQuarantined) {
		return graph.Filter{}, fmt.Errorf("%w: principal %q may not read quarantined memories", graph.ErrForbidden, p.ID)
	}
	return f, f.Validate()
}

// scopeText writes a scope as a message shows it: tenant[/org[/repo]].
func scopeText(s graph.Scope) string {
	out := s.TenantID
	if s.OrgID != "" || s.RepoID != "" {
		out += "/" + s.OrgID
	}
	if s.RepoID != "" {
		out += "/" + s.RepoID
	}
	return out
}
