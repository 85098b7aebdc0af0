package neo4j

import (
	"strconv"
	"time"

	"github.com/mnemo-dev/mnemo/graph"
)

// memoryProjection returns a Memory m as a map, with the read-only
// SupersededBy filled from the SUPERSEDES edge pointing at it (the kw_*
// properties are left out: they are keyword search's, keyword.go).
const memoryProjection = `m {.id, .tenant_id, .org_id, .repo_id, .user_id, .type, .layer, .sublayer,
  .title, .canonical_key, .status, .source_kind, .importance, .access_count, .last_accessed,
  .valid_from, .valid_to, .scope, .subject_type, .subject_id, .project_id, .session_id,
  .channel, .tags, .created_at, .current_version_id, .version_count,
  superseded_by: head([(sup:Memory)-[:SUPERSEDES]->(m) | sup.id])}`

// versionProjection returns a Version v as a map.
const versionProjection = `v {.*}`

// memoryProps is the property map of a new Memory node, with its keyword
// properties (keywordProps, stemming with stem). Zero times are left out
// (null), so "open-ended" reads back as the zero time.
func memoryProps(m graph.Memory, v graph.VersionInput, stem func(string) string) map[string]any {
	p := map[string]any{
		"id": m.ID, "tenant_id": m.Scope.TenantID, "org_id": m.Scope.OrgID, "repo_id": m.Scope.RepoID,
		"user_id": m.UserID, "type": m.Type, "layer": m.Layer, "sublayer": m.Sublayer,
		"title": m.Title, "canonical_key": m.CanonicalKey, "status": string(m.Status),
		"source_kind": string(m.SourceKind), "importance": m.Importance, "access_count": m.AccessCount,
		"last_accessed": timeParam(m.LastAccessed), "valid_from": timeParam(m.ValidFrom),
		"valid_to": timeParam(m.ValidTo), "scope": string(m.Visibility), "subject_type": m.SubjectType,
		"subject_id": m.SubjectID, "project_id": m.ProjectID, "session_id": m.SessionID,
		"channel": m.Channel, "tags": nonNil(m.Tags), "created_at": timeParam(m.CreatedAt),
		"current_version_id": v.ID, "version_count": int64(1),
	}
	keywordProps(p, m.Title, graph.SearchText(v.IndexText, v.Content), stem)
	return p
}

// versionProps is the property map of a new Version node. Provenance is
// flattened (Neo4j properties cannot be maps); name is what Neo4j Browser
// shows on the node.
func versionProps(memoryID, title string, number int, v graph.VersionInput, at time.Time) map[string]any {
	return map[string]any{
		"id": v.ID, "memory_id": memoryID, "number": int64(number), "name": versionName(title, number),
		"content": v.Content, "summary": v.Summary, "index_text": v.IndexText, "content_hash": v.ContentHash,
		"provenance_actor_type": v.Provenance.ActorType, "provenance_actor_id": v.Provenance.ActorID,
		"provenance_tool_id": v.Provenance.ToolID, "provenance_source_repo": v.Provenance.SourceRepo,
		"provenance_commit_sha": v.Provenance.CommitSHA, "provenance_path": v.Provenance.Path,
		"created_at": at.UTC(),
	}
}

func versionName(title string, number int) string {
	const max = 60
	r := []rune(title)
	if len(r) > max {
		title = string(r[:max]) + "…"
	}
	return "v" + strconv.Itoa(number) + " " + title
}

func toMemory(p map[string]any) graph.Memory {
	return graph.Memory{
		ID:               str(p, "id"),
		Scope:            graph.Scope{TenantID: str(p, "tenant_id"), OrgID: str(p, "org_id"), RepoID: str(p, "repo_id")},
		UserID:           str(p, "user_id"),
		Type:             str(p, "type"),
		Layer:            str(p, "layer"),
		Sublayer:         str(p, "sublayer"),
		Title:            str(p, "title"),
		CanonicalKey:     str(p, "canonical_key"),
		Status:           graph.Status(str(p, "status")),
		SourceKind:       graph.SourceKind(str(p, "source_kind")),
		Importance:       float(p, "importance"),
		AccessCount:      i64(p, "access_count"),
		LastAccessed:     tm(p, "last_accessed"),
		ValidFrom:        tm(p, "valid_from"),
		ValidTo:          tm(p, "valid_to"),
		Visibility:       graph.Visibility(str(p, "scope")),
		SubjectType:      str(p, "subject_type"),
		SubjectID:        str(p, "subject_id"),
		ProjectID:        str(p, "project_id"),
		SessionID:        str(p, "session_id"),
		Channel:          str(p, "channel"),
		Tags:             strs(p, "tags"),
		CreatedAt:        tm(p, "created_at"),
		CurrentVersionID: str(p, "current_version_id"),
		VersionCount:     int(i64(p, "version_count")),
		SupersededBy:     str(p, "superseded_by"),
	}
}

func toVersion(p map[string]any) graph.Version {
	return graph.Version{
		ID:          str(p, "id"),
		MemoryID:    str(p, "memory_id"),
		Number:      int(i64(p, "number")),
		Content:     str(p, "content"),
		Summary:     str(p, "summary"),
		IndexText:   str(p, "index_text"),
		ContentHash: str(p, "content_hash"),
		Provenance: graph.Provenance{
			ActorType: str(p, "provenance_actor_type"), ActorID: str(p, "provenance_actor_id"),
			ToolID: str(p, "provenance_tool_id"), SourceRepo: str(p, "provenance_source_repo"),
			CommitSHA: str(p, "provenance_commit_sha"), Path: str(p, "provenance_path"),
		},
		CreatedAt: tm(p, "created_at"),
	}
}

func scopeOf(p map[string]any) graph.Scope {
	return graph.Scope{TenantID: str(p, "tenant_id"), OrgID: str(p, "org_id"), RepoID: str(p, "repo_id")}
}

// scopeProps adds a scope's properties to p.
func scopeProps(s graph.Scope, p map[string]any) map[string]any {
	p["tenant_id"], p["org_id"], p["repo_id"] = s.TenantID, s.OrgID, s.RepoID
	return p
}

func str(p map[string]any, k string) string {
	s, _ := p[k].(string)
	return s
}

func i64(p map[string]any, k string) int64 {
	n, _ := p[k].(int64)
	return n
}

func float(p map[string]any, k string) float64 {
	switch n := p[k].(type) {
	case float64:
		return n
	case int64:
		return float64(n)
	}
	return 0
}

// tm reads a DateTime property back as a UTC time (zero when null).
func tm(p map[string]any, k string) time.Time {
	t, ok := p[k].(time.Time)
	if !ok {
		return time.Time{}
	}
	return t.UTC()
}

func strs(p map[string]any, k string) []string {
	raw, _ := p[k].([]any)
	if len(raw) == 0 {
		return nil
	}
	out := make([]string, 0, len(raw))
	for _, x := range raw {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
