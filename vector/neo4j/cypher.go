package neo4j

import "strings"

// labelToken stands for the (backquoted) label of point nodes in the query
// texts below: a label cannot be a parameter.
const labelToken = "_LABEL_"

// filterCypher is vector.Filter.Match as a WHERE condition on n, with the
// parameters filterParams gives: the tenant, the scope (Sees without
// $subscopes, Contains with it), the private rule (a private point only for
// its owner or $all_users), then the caller's narrowing, each empty value
// (or false $has_ flag) meaning no restriction. It only reads properties of
// n, so a query starting from the tenant_id index or the vector index keeps
// its plan. The parameters' Cypher types never vary with the filter (an
// unset list is [""] beside a false flag, not [] — LIST<ANY>; an unset time
// is the epoch beside a false flag, not null): Neo4j caches a plan per text
// and parameter types, so one warm-up (Warm) plans what every search runs.
const filterCypher = `n.tenant_id = $tenant
  AND (($subscopes
        AND ($org = '' OR n.org_id = '' OR n.org_id = $org)
        AND ($repo = '' OR n.repo_id = '' OR n.repo_id = $repo))
    OR (NOT $subscopes
        AND (n.org_id = '' OR n.org_id = $org)
        AND (n.repo_id = '' OR (n.repo_id = $repo AND n.org_id = $org))))
  AND ($all_users OR NOT n.private OR n.user_id = $reader)
  AND ($user = '' OR n.user_id = $user)
  AND (NOT $has_types OR n.type IN $types)
  AND (NOT $has_visibility OR n.visibility IN $visibility)
  AND (NOT $has_tags OR all(tag IN $tags WHERE tag IN n.tags))
  AND ($subject_type = '' OR n.subject_type = $subject_type)
  AND ($subject_id = '' OR n.subject_id = $subject_id)
  AND ($project_id = '' OR n.project_id = $project_id)
  AND ($session_id = '' OR n.session_id = $session_id)
  AND (NOT $has_after OR n.created_at >= $after)
  AND (NOT $has_before OR n.created_at < $before)`

// payloadCypher projects a point node's payload (fromProps reads it).
const payloadCypher = `n {.id, .version_id, .tenant_id, .org_id, .repo_id, .user_id, .visibility, .type, .tags,
  .subject_type, .subject_id, .project_id, .session_id, .created_at}`

// Query texts; labelToken is replaced by the configured label (queriesFor).
const (
	// upsertCypher writes a batch of toRow rows; the id constraint makes
	// MERGE an index seek.
	upsertCypher = `UNWIND $rows AS row
MERGE (n:_LABEL_ {id: row.id})
SET n += row.props, n.embedding = row.embedding`

	deleteCypher = `UNWIND $ids AS id
MATCH (n:_LABEL_ {id: id})
DELETE n`

	// sizeCypher is read from the count store.
	sizeCypher = `MATCH (n:_LABEL_) RETURN count(n)`

	// exactCypher scores every allowed point of the tenant (tenant_id
	// index, then the filter, then cosine): the exact top k.
	exactCypher = `MATCH (n:_LABEL_ {tenant_id: $tenant})
WHERE ` + filterCypher + `
WITH n, vector.similarity.cosine(n.embedding, $q) AS score
ORDER BY score DESC, n.id
LIMIT $k
RETURN ` + payloadCypher + `, score`

	// approximateCypher, for a tenant of more than $exact points (counted
	// through the tenant_id index in the same round trip, and only up to
	// $exact+1: a full count costs a pass over a large tenant), asks the
	// vector index for $fetch candidates, keeps the allowed ones and
	// rescores them exactly (the index's own scores come from quantised
	// vectors: off by up to 0.03 on the test sets), so the best $k are
	// ranked by their true cosine. A smaller tenant gets no rows.
	approximateCypher = `MATCH (t:_LABEL_ {tenant_id: $tenant})
WITH t LIMIT $exact + 1
WITH count(t) AS size
WHERE size > $exact
CALL db.index.vector.queryNodes($index, $fetch, $q) YIELD node AS n
WHERE ` + filterCypher + `
WITH n, vector.similarity.cosine(n.embedding, $q) AS score
ORDER BY score DESC, n.id
LIMIT $k
RETURN ` + payloadCypher + `, score`

	// scoreCypher scores the allowed points among $ids (the id constraint's
	// index).
	scoreCypher = `UNWIND $ids AS id
MATCH (n:_LABEL_ {id: id})
WHERE ` + filterCypher + `
RETURN ` + payloadCypher + `, vector.similarity.cosine(n.embedding, $q) AS score`

	countCypher = `MATCH (n:_LABEL_ {tenant_id: $tenant})
WHERE ` + filterCypher + `
RETURN count(n)`

	scanCypher = `MATCH (n:_LABEL_ {tenant_id: $tenant})
WHERE ` + filterCypher + `
RETURN ` + payloadCypher
)

// queries holds the query texts for one label.
type queries struct {
	upsert, delete, size, exact, approximate, score, count, scan string
}

func queriesFor(label string) queries {
	l := func(s string) string { return strings.ReplaceAll(s, labelToken, quote(label)) }
	return queries{
		upsert: l(upsertCypher), delete: l(deleteCypher), size: l(sizeCypher),
		exact: l(exactCypher), approximate: l(approximateCypher), score: l(scoreCypher),
		count: l(countCypher), scan: l(scanCypher),
	}
}
