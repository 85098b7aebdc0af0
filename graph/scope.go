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

// Contains reports whether a record stored under r lies in s or beneath it:
// same tenant, and r's org and repo are empty or equal to s's (an empty org
// or repo in s means any). It is the reach of a caller holding the
// subscopes permission, and of the engine's own maintenance; a plain reader
// reaches less (Sees). See the package comment.
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

// Sees reports whether a record stored under r is visible to a caller
// holding s without the subscopes permission: same tenant, and r is s itself
// or one of its ancestors (r's org is empty or s's org; r's repo is empty or
// s's repo). Broader records are visible to narrower callers, never the
// other way round: a tenant-wide caller sees only tenant-wide records.
func (s Scope) Sees(r Scope) bool {
	if s.TenantID == "" || r.TenantID != s.TenantID {
		return false
	}
	if r.OrgID != "" && r.OrgID != s.OrgID {
		return false
	}
	if r.RepoID != "" && (r.RepoID != s.RepoID || r.OrgID != s.OrgID) {
		return false
	}
	return true
}

// Reaches is Contains when subscopes is set, else Sees: the scope rule of a
// Filter whose Reader has (or lacks) Subscopes.
func (s Scope) Reaches(r Scope, subscopes bool) bool {
	if subscopes {
		return s.Contains(r)
	}
	return s.Sees(r)
}

// Principal is the authenticated caller: who, with which roles, for what
// purpose, inside which scope. The server builds it from an API key.
type Principal struct {
	ID string `json:"id"`
	// UserID is the user the principal acts as: the owner of what it
	// writes and of the private memories it may read. Empty means ID.
	UserID  string   `json:"user_id,omitempty"`
	Roles   []string `json:"roles"`
	Purpose string   `json:"purpose,omitempty"`
	Scope   Scope    `json:"scope"`
}

// User is the user p acts as: UserID, or ID when UserID is empty.
func (p Principal) User() string {
	if p.UserID != "" {
		return p.UserID
	}
	return p.ID
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
