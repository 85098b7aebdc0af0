package engine

import (
	"fmt"
	"strings"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/policy"
)

// authorize checks that p holds perm under pol, the policy snapshot of
// the request (one per request: a reload never mixes two policies in one).
func authorize(pol *policy.Policy, p graph.Principal, perm string) error {
	if err := p.Scope.Validate(); err != nil {
		return fmt.Errorf("%w: principal %q has no valid scope", graph.ErrForbidden, p.ID)
	}
	if !pol.Allows(p.Roles, perm) {
		return fmt.Errorf("%w: principal %q lacks permission %q", graph.ErrForbidden, p.ID, perm)
	}
	return nil
}

// readerOf is the access side of every filter built for p: the user it acts
// as, and whether its roles let it read other users' private memories
// (read_all_users) and records beneath its scope (subscopes).
func readerOf(pol *policy.Policy, p graph.Principal) graph.Reader {
	return graph.Reader{
		UserID:    p.User(),
		AllUsers:  pol.Allows(p.Roles, policy.PermReadAllUsers),
		Subscopes: pol.Allows(p.Roles, policy.PermSubscopes),
	}
}

// scopeFor returns the scope a request acts in: the principal's, or a
// narrower one the request names, which needs the subscopes permission.
// Fields the request leaves empty are the principal's, so a request cannot
// name a wider scope; a foreign one is forbidden.
func scopeFor(pol *policy.Policy, p graph.Principal, want *graph.Scope) (graph.Scope, error) {
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
	switch {
	case s == p.Scope:
		return s, nil
	case !p.Scope.Contains(s):
		return graph.Scope{}, fmt.Errorf("%w: scope %s is outside principal %q's scope %s",
			graph.ErrForbidden, scopeName(s), p.ID, scopeName(p.Scope))
	case !pol.Allows(p.Roles, policy.PermSubscopes):
		return graph.Scope{}, fmt.Errorf("%w: principal %q may not act in scope %s, beneath its own scope %s: needs permission %s",
			graph.ErrForbidden, p.ID, scopeName(s), scopeName(p.Scope), policy.PermSubscopes)
	}
	return s, nil
}

// scopeName writes a scope as tenant[/org[/repo]], as API keys name it.
func scopeName(s graph.Scope) string {
	parts := []string{s.TenantID}
	if s.OrgID != "" || s.RepoID != "" {
		parts = append(parts, s.OrgID)
	}
	if s.RepoID != "" {
		parts = append(parts, s.RepoID)
	}
	return strings.Join(parts, "/")
}

// readFilter builds the store filter for a read by p in scope want, under
// pol, the request's policy snapshot: the scope, and the reader (p's user
// and what its permissions widen), which every store query and the vector
// index apply. The caller's narrowing fields in f stay as given.
func readFilter(pol *policy.Policy, p graph.Principal, want *graph.Scope, f graph.Filter) (graph.Filter, error) {
	if err := authorize(pol, p, PermRead); err != nil {
		return graph.Filter{}, err
	}
	s, err := scopeFor(pol, p, want)
	if err != nil {
		return graph.Filter{}, err
	}
	f.Scope = s
	f.Reader = readerOf(pol, p)
	if f.IncludeQuarantined && !pol.Allows(p.Roles, PermReadQuarantined) {
		return graph.Filter{}, fmt.Errorf("%w: principal %q may not read quarantined memories", graph.ErrForbidden, p.ID)
	}
	return f, f.Validate()
}

// mayWriteAs checks that p may write under user: its own user (or none:
// the write takes p's), or any with the act_as_user permission.
func mayWriteAs(pol *policy.Policy, p graph.Principal, user string) error {
	if user == "" || user == p.User() || pol.Allows(p.Roles, policy.PermActAsUser) {
		return nil
	}
	return fmt.Errorf("%w: principal %q may not write as user %q: needs permission %s",
		graph.ErrForbidden, p.ID, user, policy.PermActAsUser)
}

// approverReaches reports whether an approver with principal p may see and
// decide a queued write in scope g: its own scope, or one beneath it with the
// subscopes permission. An ancestor's queue is not an approver's to decide:
// an org librarian approving a tenant-wide write would publish it to every
// other org.
func approverReaches(pol *policy.Policy, p graph.Principal, g graph.Scope) bool {
	return g == p.Scope || (p.Scope.Contains(g) && pol.Allows(p.Roles, policy.PermSubscopes))
}
