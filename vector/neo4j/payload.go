package neo4j

import (
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/vector"
)

// toRow is one point as the upsert query's row: its id, its node
// properties (the payload, and private: vector.Payload.Private precomputed
// for the filter) and its unit vector.
func toRow(p vector.Point) map[string]any {
	pl := p.Payload
	tags := pl.Tags
	if tags == nil {
		tags = []string{}
	}
	return map[string]any{
		"id": p.ID,
		"props": map[string]any{
			"version_id": pl.VersionID, "tenant_id": pl.TenantID, "org_id": pl.OrgID, "repo_id": pl.RepoID,
			"user_id": pl.UserID, "private": pl.Private(), "visibility": pl.Visibility, "type": pl.Type,
			"tags": tags, "subject_type": pl.SubjectType, "subject_id": pl.SubjectID,
			"project_id": pl.ProjectID, "session_id": pl.SessionID, "created_at": pl.CreatedAt.UTC(),
		},
		"embedding": float64s(vector.Normalize(p.Vector)),
	}
}

// fromProps reads a payloadCypher projection back into a payload.
func fromProps(v any) (vector.Payload, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return vector.Payload{}, fmt.Errorf("neo4j vector: payload is %T, not a map", v)
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	p := vector.Payload{
		MemoryID: str("id"), VersionID: str("version_id"), TenantID: str("tenant_id"),
		OrgID: str("org_id"), RepoID: str("repo_id"), UserID: str("user_id"),
		Visibility: str("visibility"), Type: str("type"), SubjectType: str("subject_type"),
		SubjectID: str("subject_id"), ProjectID: str("project_id"), SessionID: str("session_id"),
	}
	if tags, _ := m["tags"].([]any); len(tags) > 0 {
		p.Tags = make([]string, len(tags))
		for i, t := range tags {
			p.Tags[i], _ = t.(string)
		}
	}
	if t, ok := m["created_at"].(time.Time); ok {
		p.CreatedAt = t.UTC()
	}
	return p, nil
}

// filterParams is f as filterCypher's parameters, each of one Cypher type
// whatever f holds (see filterCypher).
func filterParams(f vector.Filter) map[string]any {
	p := map[string]any{
		"tenant": f.TenantID, "org": f.OrgID, "repo": f.RepoID, "subscopes": f.Subscopes,
		"all_users": f.AllUsers, "reader": f.ReaderUserID, "user": f.UserID,
		"subject_type": f.SubjectType, "subject_id": f.SubjectID,
		"project_id": f.ProjectID, "session_id": f.SessionID,
	}
	p["types"], p["has_types"] = listParam(f.Types)
	p["visibility"], p["has_visibility"] = listParam(f.Visibility)
	p["tags"], p["has_tags"] = listParam(f.Tags)
	p["after"], p["has_after"] = boundParam(f.CreatedAfter)
	p["before"], p["has_before"] = boundParam(f.CreatedBefore)
	return p
}

// listParam is xs and true, or [""] and false when xs is empty.
func listParam(xs []string) ([]string, bool) {
	if len(xs) == 0 {
		return []string{""}, false
	}
	return xs, true
}

// boundParam is t in UTC and true, or the Unix epoch and false when t is
// zero.
func boundParam(t time.Time) (time.Time, bool) {
	if t.IsZero() {
		return time.Unix(0, 0).UTC(), false
	}
	return t.UTC(), true
}
