package neo4j

import (
	"cmp"
	"context"
	"maps"
	"slices"

	"github.com/mnemo-dev/mnemo/graph"
)

// walkRelatedCypher lists the admitted memories related to the memories
// $ids, either way, by relations the filter sees. Uses memory_id.
var walkRelatedCypher = `
UNWIND $ids AS id
MATCH (:Memory {id: id})-[n:` + relationTypes() + `]-(m:Memory)
WHERE ` + inScope + ` AND ` + memoryVisible + `
RETURN id AS from, m.id AS other`

// walkRelatedParams binds walkRelatedCypher's parameters.
func walkRelatedParams(f graph.Filter, ids []string) map[string]any {
	return filterParams(f, map[string]any{"ids": ids})
}

// related is the walk's relation step, after the second hop, as on every
// store: the admitted memories related to any memory loaded join the
// neighbourhood while there is room (by id), bringing no other edge; the
// relations among the memories loaded become links of weight
// walk.RelationWeight (h.rels). Here in Neo4j (walkRelatedCypher); over the
// process's copy, relatedOver.
func (h *hood) related(ctx context.Context, tx txn, f graph.Filter) error {
	if len(h.mems) == 0 {
		return nil
	}
	recs, err := collect(ctx, tx, walkRelatedCypher, walkRelatedParams(f, slices.Sorted(maps.Keys(h.mems))))
	if err != nil {
		return err
	}
	got := make([][2]string, 0, len(recs))
	for _, rec := range recs {
		p := rec.AsMap()
		got = append(got, [2]string{str(p, "other"), str(p, "from")})
	}
	h.takeRelated(got)
	return nil
}

// relatedOver is related over the copy: for each memory loaded, its
// relations whose scope the filter reaches (inScope) to memories it admits
// (memoryVisible), as walkRelatedCypher reads them.
func (h *hood) relatedOver(t *tenantMentions, a *admission) {
	var got [][2]string
	for id := range h.mems {
		for _, r := range t.byMemory[id].rels {
			if a.reaches(r.org, r.repo) && t.admitted(a, r.id) {
				got = append(got, [2]string{r.id, id})
			}
		}
	}
	h.takeRelated(got)
}

// takeRelated applies the relation step's pairs (other, from), in order of
// other then from whatever order they came in.
func (h *hood) takeRelated(got [][2]string) {
	slices.SortFunc(got, func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	h.rels, h.byRel = map[[2]string]bool{}, map[string]bool{}
	for _, x := range got {
		other, from := x[0], x[1]
		if other == from {
			continue
		}
		if !h.mems[other] {
			if !h.add(other) {
				continue
			}
			h.byRel[other] = true
		}
		h.rels[[2]string{min(from, other), max(from, other)}] = true
	}
}
