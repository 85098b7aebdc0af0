package graph

// Scope places a record in the tenancy hierarchy: tenant > org > repo.
// TenantID is always required; OrgID and RepoID are optional.
type Scope struct {
	TenantID string `json:"tenant_id"`
	OrgID    string `json:"org_id,omitempty"`
	RepoID   string `json:"repo_id,omitempty"`
}

// Validate reports a missing tenant or malformed ids.
func (s Scope) Validate() error {
	if s.TenantID == "" {
		return invalid("tenant_id", "required")
	}
	for field, v := range map[string]string{"tenant_id": s.TenantID, "org_id": s.OrgID, "repo_id": s.RepoID} {
		if err := checkID(field, v, true); err != nil {
			return err
		}
	}
	return nil
}

// Contains reports whether a record stored under r is visible to a caller
// holding s: same tenant, and r's org and repo are empty or equal to s's (an
// empty org or repo in s means any). See the package comment.
func (s Scope) Contains(r Scope) bool {
	if s.TenantID == "" || r.TenantID != s.TenantID {
		return false
	}
	if s.OrgID != "" && r.OrgID != "" && r.OrgID != s.OrgID {
		return false
	}
	if s.RepoID != "" && r.RepoID != "" && r.RepoID != s.RepoID {
		return false
	}
	return true
}

// Principal is the authenticated caller: who, with which roles, for what
// purpose, inside which scope. The server builds it from an API key.
type Principal struct {
	ID      string   `json:"id"`
	Roles   []string `json:"roles"`
	Purpose string   `json:"purpose,omitempty"`
	Scope   Scope    `json:"scope"`
}

// HasRole reports whether p holds role.
func (p Principal) HasRole(role string) bool {
	for _, r := range p.Roles {
		if r == role {
			return true
		}
	}
	return false
}
