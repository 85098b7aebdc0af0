package neo4j

import (
	"context"
	"slices"
	"strings"
	"time"

	neo4jdrv "github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/mnemo-dev/mnemo/graph"
)

// WarmWith is Warm over the store's read statements and then one more,
// name with text cypher and the filter's parameters.
func (s *Store) WarmWith(ctx context.Context, name, cypher string) ([]string, error) {
	return s.warm(ctx, append(readStatements(), readStatement{name: name, cypher: cypher,
		params: func(f graph.Filter) map[string]any { return filterParams(f, nil) }}))
}

// ReadStatements is how many statements Warm plans.
func ReadStatements() int { return len(readStatements()) }

// ListPlan returns the operators of the plan Neo4j runs for ListMemories'
// statement under f (the next pages' when after is true), from PROFILE.
func (s *Store) ListPlan(ctx context.Context, f graph.Filter, after bool) ([]string, error) {
	cy, at := listFirstCypher, time.Time{}
	if after {
		cy, at = listAfterCypher, time.Now().UTC()
	}
	return read(ctx, s, func(tx txn) ([]string, error) {
		res, err := tx.Run(ctx, "PROFILE "+cy, listMemoriesParams(f, at, "x", 2))
		if err != nil {
			return nil, err
		}
		sum, err := res.Consume(ctx)
		if err != nil {
			return nil, err
		}
		var ops []string
		var walk func(p neo4jdrv.ProfiledPlan)
		walk = func(p neo4jdrv.ProfiledPlan) {
			ops = append(ops, strings.SplitN(p.Operator(), "@", 2)[0])
			for _, c := range p.Children() {
				walk(c)
			}
		}
		walk(sum.Profile())
		return ops, nil
	})
}

// IndexHolds returns, for each tenant the keyword or the mention index
// holds, how many memories each holds.
func (s *Store) IndexHolds() map[string][2]int {
	out := map[string][2]int{}
	s.kw.mu.RLock()
	for t := range s.kw.applied {
		out[t] = [2]int{}
	}
	s.kw.mu.RUnlock()
	s.kw.mentions.mu.RLock()
	for t := range s.kw.mentions.tenants {
		out[t] = [2]int{}
	}
	for t := range out {
		var n int
		if m := s.kw.mentions.tenants[t]; m != nil {
			n = len(m.byMemory)
		}
		out[t] = [2]int{s.kw.Live(t), n}
	}
	s.kw.mentions.mu.RUnlock()
	return out
}

// HoldTenant catches tenant's indexes up, as a search does, and keeps them
// until release is called.
func (s *Store) HoldTenant(ctx context.Context, tenant string) (release func(), err error) {
	release = func() {}
	_, err = read(ctx, s, func(tx txn) (struct{}, error) {
		release()
		var err error
		release, err = s.kw.sync(ctx, tx, tenant)
		return struct{}{}, err
	})
	return release, err
}

// StreamBatches runs query through stream, n records at a time, and
// returns each batch's values of its first column.
func (s *Store) StreamBatches(ctx context.Context, query string, n int) ([][]any, error) {
	return read(ctx, s, func(tx txn) ([][]any, error) {
		var out [][]any
		err := stream(ctx, tx, query, nil, n, func(recs []*neo4jdrv.Record) {
			var vals []any
			for _, r := range recs {
				vals = append(vals, r.Values[0])
			}
			out = append(out, vals)
		})
		return out, err
	})
}

// SetCypherFilter makes Walk run its two hops in Neo4j (walkHop1Cypher,
// walkHop2Cypher) and Neighbours filter its candidates there
// (neighbourFilterCypher) even for a filter the process can decide, or
// both use the process's copy again.
func (s *Store) SetCypherFilter(on bool) { s.cypherFilter.Store(on) }

// visibleIDsCypher lists the memories memoryVisible admits.
const visibleIDsCypher = `MATCH (m:Memory) WHERE ` + memoryVisible + ` RETURN m.id AS id`

// copyAndCypher catches the process's copy of tenant up in one read
// transaction, lists with fromCopy what it holds, and runs query with
// params, whose rows' column col is a string; both lists come back
// sorted.
func (s *Store) copyAndCypher(ctx context.Context, tenant string, fromCopy func(t *tenantMentions) []string,
	query string, params map[string]any, col string) (local, cypher []string, err error) {
	_, err = read(ctx, s, func(tx txn) (struct{}, error) {
		release, err := s.kw.sync(ctx, tx, tenant)
		defer release()
		if err != nil {
			return struct{}{}, err
		}
		s.kw.mentions.view(tenant, func(t *tenantMentions) { local = fromCopy(t) })
		recs, err := collect(ctx, tx, query, params)
		for _, r := range recs {
			v, _ := r.Get(col)
			cypher = append(cypher, v.(string))
		}
		return struct{}{}, err
	})
	slices.Sort(local)
	slices.Sort(cypher)
	return local, cypher, err
}

// Admitted returns, sorted, the ids of the memories of f's tenant that the
// process's copy admits under f once caught up to the tenant's keyword
// sequence (inProcess, memAttrs), and those memoryVisible admits in Neo4j;
// ok is false when f is one the walk leaves to Neo4j.
func (s *Store) Admitted(ctx context.Context, f graph.Filter) (local, cypher []string, ok bool, err error) {
	adm, ok := inProcess(f)
	local, cypher, err = s.copyAndCypher(ctx, f.Scope.TenantID, func(t *tenantMentions) (ids []string) {
		for id := range t.byMemory {
			if t.admitted(&adm, id) {
				ids = append(ids, id)
			}
		}
		return ids
	}, visibleIDsCypher, filterParams(f, nil), "id")
	return local, cypher, ok, err
}

// linksCypher lists a tenant's NEXT and SUPERSEDES edges between memories
// that are not erased, as the walk reads them.
const linksCypher = `
MATCH (a:Memory {tenant_id: $tenant})-[l:NEXT|SUPERSEDES]-(b:Memory)
WHERE a.kw_len IS NOT NULL AND b.kw_len IS NOT NULL
RETURN DISTINCT a.id + ' ' + b.id + ' ' + type(l) AS link`

// Links returns, sorted, the NEXT and SUPERSEDES edges the process holds
// for tenant once caught up (memLink, each direction), and Neo4j's.
func (s *Store) Links(ctx context.Context, tenant string) (local, cypher []string, err error) {
	return s.copyAndCypher(ctx, tenant, func(t *tenantMentions) (links []string) {
		for id, m := range t.byMemory {
			for _, l := range m.links {
				links = append(links, id+" "+l.id+" "+l.typ)
			}
		}
		return links
	}, linksCypher, map[string]any{"tenant": tenant}, "link")
}

// relsCypher lists a tenant's relations between memories that are not
// erased with their own org and repo, as the walk's relation step reads
// them.
var relsCypher = `
MATCH (a:Memory {tenant_id: $tenant})-[n:` + relationTypes() + `]-(b:Memory)
WHERE a.kw_len IS NOT NULL AND b.kw_len IS NOT NULL
RETURN DISTINCT a.id + ' ' + b.id + ' ' + coalesce(n.org_id, '') + '/' + coalesce(n.repo_id, '') AS rel`

// Rels returns, sorted and without repeats, the relations the process
// holds for tenant once caught up (memRel, each direction), and Neo4j's.
func (s *Store) Rels(ctx context.Context, tenant string) (local, cypher []string, err error) {
	local, cypher, err = s.copyAndCypher(ctx, tenant, func(t *tenantMentions) (rels []string) {
		for id, m := range t.byMemory {
			for _, r := range m.rels {
				rels = append(rels, id+" "+r.id+" "+r.org+"/"+r.repo)
			}
		}
		return rels
	}, relsCypher, map[string]any{"tenant": tenant}, "rel")
	return slices.Compact(local), cypher, err
}
