package mcp

import (
	"context"
	"fmt"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// RememberInput is the remember tool's input: one write, as the HTTP API's
// POST /v1/memories takes it.
type RememberInput struct {
	Content string       `json:"content" jsonschema:"the memory's text (required)"`
	Title   string       `json:"title,omitempty" jsonschema:"a short title"`
	Type    string       `json:"type,omitempty" jsonschema:"memory type from the policy's catalog (note, fact, decision, task, document ...); derived when empty"`
	Summary string       `json:"summary,omitempty" jsonschema:"a one-line summary"`
	Format  string       `json:"format,omitempty" jsonschema:"text (default) or markdown"`
	Tags    []string     `json:"tags,omitempty" jsonschema:"tags to filter by later"`
	Scope   *graph.Scope `json:"scope,omitempty" jsonschema:"tenant/org/repo to write in; the key's own scope when empty"`
	// Entities are names the caller knows the memory mentions.
	Entities     []string `json:"entities,omitempty" jsonschema:"names the memory mentions, added to what extraction finds"`
	Supersedes   string   `json:"supersedes,omitempty" jsonschema:"id of an active memory this one replaces"`
	CanonicalKey string   `json:"canonical_key,omitempty" jsonschema:"overrides the derived Subject-Aspect-Qualifier key"`
	UserID       string   `json:"user_id,omitempty" jsonschema:"the user the memory belongs to; the key's user when empty"`
	Visibility   string   `json:"visibility,omitempty" jsonschema:"session, user, project, policy or global"`
	SubjectType  string   `json:"subject_type,omitempty"`
	SubjectID    string   `json:"subject_id,omitempty"`
	ProjectID    string   `json:"project_id,omitempty"`
	SessionID    string   `json:"session_id,omitempty"`
	Channel      string   `json:"channel,omitempty" jsonschema:"the channel the memory came from"`
	Importance   *float64 `json:"importance,omitempty" jsonschema:"0 to 1"`
	ValidFrom    string   `json:"valid_from,omitempty" jsonschema:"RFC 3339 time from which the memory holds"`
	ValidTo      string   `json:"valid_to,omitempty" jsonschema:"RFC 3339 time after which the memory no longer holds"`
	// Metadata is matched by the gate's metadata rules.
	Metadata map[string]string `json:"metadata,omitempty" jsonschema:"key/value pairs the policy gate's rules may match"`
}

// toolID marks writes made through MCP in their provenance.
const toolID = "mcp"

func (s *Server) remember(ctx context.Context, p graph.Principal, in RememberInput) (engine.IngestResult, error) {
	r := engine.IngestRequest{
		Scope: in.Scope, Type: in.Type, Title: in.Title, Content: in.Content, Summary: in.Summary, Format: in.Format,
		UserID: in.UserID, Tags: in.Tags, Entities: in.Entities, CanonicalKey: in.CanonicalKey, Supersedes: in.Supersedes,
		Importance: in.Importance, Visibility: graph.Visibility(in.Visibility), SubjectType: in.SubjectType,
		SubjectID: in.SubjectID, ProjectID: in.ProjectID, SessionID: in.SessionID, Channel: in.Channel,
		Provenance: graph.Provenance{ToolID: toolID}, Metadata: in.Metadata,
	}
	var err error
	if r.ValidFrom, err = parseTime(in.ValidFrom, "valid_from"); err != nil {
		return engine.IngestResult{}, err
	}
	if r.ValidTo, err = parseTime(in.ValidTo, "valid_to"); err != nil {
		return engine.IngestResult{}, err
	}
	return s.engine.Ingest(ctx, p, r)
}

// refusal is the tool error of a write the gate or the stored state
// refused: the reason, as HTTP's 422 and 409 answer it in error.message.
func refusal(r engine.IngestResult) string {
	if r.Status == engine.StatusRejected {
		return r.Reason
	}
	return ""
}

// RecallInput is the recall tool's input, as POST /v1/search takes it.
type RecallInput struct {
	Query              string       `json:"query" jsonschema:"what to look for (required)"`
	Mode               string       `json:"mode,omitempty" jsonschema:"graph, vector, keyword or hybrid; the policy's default when empty"`
	Limit              int          `json:"limit,omitempty" jsonschema:"number of results (default 10, at most 100)"`
	Scope              *graph.Scope `json:"scope,omitempty" jsonschema:"narrows the key's scope, never widens it"`
	UserID             string       `json:"user_id,omitempty"`
	Visibility         []string     `json:"visibility,omitempty"`
	SubjectType        string       `json:"subject_type,omitempty"`
	SubjectID          string       `json:"subject_id,omitempty"`
	ProjectID          string       `json:"project_id,omitempty"`
	SessionID          string       `json:"session_id,omitempty"`
	Types              []string     `json:"types,omitempty" jsonschema:"memory types to keep"`
	Tags               []string     `json:"tags,omitempty" jsonschema:"every tag listed must be carried"`
	EntityTypes        []string     `json:"entity_types,omitempty"`
	DaysBack           int          `json:"days_back,omitempty" jsonschema:"keep memories created in the last N days"`
	CreatedAfter       string       `json:"created_after,omitempty" jsonschema:"RFC 3339 or YYYY-MM-DD"`
	CreatedBefore      string       `json:"created_before,omitempty" jsonschema:"RFC 3339 or YYYY-MM-DD"`
	Channel            string       `json:"channel,omitempty" jsonschema:"hides memories blocked on this channel"`
	IncludeArchived    bool         `json:"include_archived,omitempty"`
	IncludeSuperseded  bool         `json:"include_superseded,omitempty"`
	IncludeExpired     bool         `json:"include_expired,omitempty"`
	IncludeQuarantined bool         `json:"include_quarantined,omitempty"`
	Reranker           string       `json:"reranker,omitempty" jsonschema:"rrf, mmr or node_distance"`
	Center             string       `json:"center,omitempty" jsonschema:"node_distance's center: a memory id or an entity name"`
	TokenBudget        int          `json:"token_budget,omitempty"`
	AsOf               string       `json:"as_of,omitempty" jsonschema:"valid time: read memories valid at this instant, RFC 3339 or YYYY-MM-DD (default now)"`
	KnownAt            string       `json:"known_at,omitempty" jsonschema:"transaction time: read what mnemo knew at this instant, RFC 3339 or YYYY-MM-DD (default now)"`
	// Detail is MCP's own: the HTTP API always answers in full.
	Detail string `json:"detail,omitempty" jsonschema:"compact (default): each result's text, version, score, flags and citation, neighbours as ids and titles; full: the HTTP API's answer (memory metadata, ranking signals, neighbours' text)"`
}

// search runs recall's search on the engine.
func (s *Server) search(ctx context.Context, p graph.Principal, in RecallInput) (engine.SearchResponse, error) {
	after, err := parseTime(in.CreatedAfter, "created_after")
	if err != nil {
		return engine.SearchResponse{}, err
	}
	before, err := parseTime(in.CreatedBefore, "created_before")
	if err != nil {
		return engine.SearchResponse{}, err
	}
	tt, err := timeTravel(in.AsOf, in.KnownAt)
	if err != nil {
		return engine.SearchResponse{}, err
	}
	vis := make([]graph.Visibility, len(in.Visibility))
	for i, v := range in.Visibility {
		vis[i] = graph.Visibility(v)
	}
	return s.engine.Search(ctx, p, engine.SearchRequest{
		Scope: in.Scope, Query: in.Query, Mode: in.Mode, Limit: in.Limit,
		UserID: in.UserID, Visibility: vis, SubjectType: in.SubjectType, SubjectID: in.SubjectID,
		ProjectID: in.ProjectID, SessionID: in.SessionID, Types: in.Types, Tags: in.Tags,
		EntityTypes: in.EntityTypes, DaysBack: in.DaysBack, CreatedAfter: after, CreatedBefore: before,
		Channel: in.Channel, IncludeArchived: in.IncludeArchived, IncludeSuperseded: in.IncludeSuperseded,
		IncludeExpired: in.IncludeExpired, IncludeQuarantined: in.IncludeQuarantined,
		Reranker: in.Reranker, Center: in.Center, TokenBudget: in.TokenBudget, TimeTravel: tt,
	})
}

// IDInput names one record.
type IDInput struct {
	ID string `json:"id" jsonschema:"the record's id (required)"`
}

// GetInput is the get tool's input, as GET /v1/memories/{id} takes it.
type GetInput struct {
	ID      string `json:"id" jsonschema:"the memory's id (required)"`
	AsOf    string `json:"as_of,omitempty" jsonschema:"valid time: read memories valid at this instant, RFC 3339 or YYYY-MM-DD (default now)"`
	KnownAt string `json:"known_at,omitempty" jsonschema:"transaction time: read what mnemo knew at this instant, RFC 3339 or YYYY-MM-DD (default now)"`
}

func (s *Server) get(ctx context.Context, p graph.Principal, in GetInput) (engine.MemoryView, error) {
	if err := graph.CheckID("id", in.ID); err != nil {
		return engine.MemoryView{}, err
	}
	tt, err := timeTravel(in.AsOf, in.KnownAt)
	if err != nil {
		return engine.MemoryView{}, err
	}
	return s.engine.GetWith(ctx, p, in.ID, engine.GetOptions{TimeTravel: tt})
}

// timeTravel reads the as_of and known_at fields.
func timeTravel(asOf, knownAt string) (engine.TimeTravel, error) {
	var (
		t   engine.TimeTravel
		err error
	)
	if t.AsOf, err = parseTime(asOf, "as_of"); err != nil {
		return t, err
	}
	t.KnownAt, err = parseTime(knownAt, "known_at")
	return t, err
}

// ListInput is the list tool's input, as GET /v1/memories takes it.
type ListInput struct {
	Types    []string `json:"types,omitempty" jsonschema:"memory types, ORed"`
	Tags     []string `json:"tags,omitempty" jsonschema:"tags, ANDed"`
	Statuses []string `json:"statuses,omitempty" jsonschema:"active, superseded, archived or retracted, ORed"`
	UserID   string   `json:"user_id,omitempty"`
	OrgID    string   `json:"org_id,omitempty"`
	RepoID   string   `json:"repo_id,omitempty"`
	After    string   `json:"after,omitempty" jsonschema:"created after: RFC 3339 or YYYY-MM-DD"`
	Before   string   `json:"before,omitempty" jsonschema:"created before: RFC 3339 or YYYY-MM-DD"`
	DaysBack int      `json:"days_back,omitempty" jsonschema:"created in the last N days"`
	Limit    int      `json:"limit,omitempty" jsonschema:"page size, 1 to 1000"`
	Cursor   string   `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

func (s *Server) list(ctx context.Context, p graph.Principal, in ListInput) (graph.Listing, error) {
	for _, f := range []struct {
		name string
		vals []string
	}{{"type", in.Types}, {"tag", in.Tags}, {"status", in.Statuses}} {
		if len(f.vals) > graph.MaxFilterValues {
			return graph.Listing{}, invalid(fmt.Sprintf("%s lists %d values, more than %d", f.name, len(f.vals), graph.MaxFilterValues))
		}
	}
	r := engine.ListRequest{Types: in.Types, UserID: in.UserID, Tags: in.Tags, Cursor: in.Cursor, Limit: in.Limit}
	for _, st := range in.Statuses {
		r.Statuses = append(r.Statuses, graph.Status(st))
	}
	if in.OrgID != "" || in.RepoID != "" {
		r.Scope = &graph.Scope{OrgID: in.OrgID, RepoID: in.RepoID}
	}
	var err error
	if r.CreatedAfter, err = parseTime(in.After, "after"); err != nil {
		return graph.Listing{}, err
	}
	if r.CreatedBefore, err = parseTime(in.Before, "before"); err != nil {
		return graph.Listing{}, err
	}
	if in.DaysBack < 0 {
		return graph.Listing{}, invalid("days_back must be a positive whole number")
	}
	if in.DaysBack > 0 {
		if after := time.Now().UTC().AddDate(0, 0, -in.DaysBack); after.After(r.CreatedAfter) {
			r.CreatedAfter = after
		}
	}
	if in.Limit < 0 || in.Limit > 1000 {
		return graph.Listing{}, invalid("limit must be a whole number from 1 to 1000")
	}
	l, err := s.engine.List(ctx, p, r)
	if l.Memories == nil {
		l.Memories = []graph.Memory{}
	}
	return l, err
}

// invalid is bad input the tool itself finds, worded as the HTTP API words
// the same check.
// (the field is named in the message, as HTTP names it in error.field).
func invalid(msg string) error {
	return fmt.Errorf("%w: %s", graph.ErrInvalid, msg)
}

// parseTime reads RFC 3339 or a plain date (YYYY-MM-DD, UTC); empty is the
// zero time.
func parseTime(v, field string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, invalid(field + " must be RFC 3339 or YYYY-MM-DD")
}
