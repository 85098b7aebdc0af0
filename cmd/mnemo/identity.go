package main

import (
	"flag"
	"os"
	"strings"

	"github.com/mnemo-dev/mnemo/graph"
)

// identity is who an operator command acts as. The CLI talks to the
// stores directly, so it names its principal itself; the gate and the
// roles of the policy apply exactly as over HTTP.
type identity struct {
	as, user, roles, tenant, org, repo string
}

func (id *identity) register(fs *flag.FlagSet, roles string) {
	fs.StringVar(&id.user, "user", "", "user the principal acts as (default: the principal id)")
	id.registerScope(fs, roles)
}

// registerScope registers the identity flags but --user, for a command
// whose --user means something else (mnemo forget --user U).
func (id *identity) registerScope(fs *flag.FlagSet, roles string) {
	tenant := os.Getenv("MNEMO_TENANT")
	if tenant == "" {
		tenant = "default"
	}
	fs.StringVar(&id.as, "as", "cli", "principal id the command acts as")
	fs.StringVar(&id.roles, "roles", roles, "roles of that principal, comma-separated")
	fs.StringVar(&id.tenant, "tenant", tenant, "tenant (env MNEMO_TENANT)")
	fs.StringVar(&id.org, "org", "", "organisation within the tenant")
	fs.StringVar(&id.repo, "repo", "", "repository within the organisation")
}

func (id identity) principal() graph.Principal {
	return graph.Principal{
		ID: id.as, UserID: id.user, Roles: commaList(id.roles),
		Scope: graph.Scope{TenantID: id.tenant, OrgID: id.org, RepoID: id.repo},
	}
}

func commaList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
