package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// searchRequest is the body of POST /v1/search. Times are RFC 3339 or
// YYYY-MM-DD (UTC).
type searchRequest struct {
	Scope              *graph.Scope       `json:"scope"`
	Query              string             `json:"query"`
	Mode               string             `json:"mode"`
	Limit              int                `json:"limit"`
	UserID             string             `json:"user_id"`
	Visibility         []graph.Visibility `json:"visibility"`
	SubjectType        string             `json:"subject_type"`
	SubjectID          string             `json:"subject_id"`
	ProjectID          string             `json:"project_id"`
	SessionID          string             `json:"session_id"`
	Types              []string           `json:"types"`
	Tags               []string           `json:"tags"`
	EntityTypes        []string           `json:"entity_types"`
	DaysBack           int                `json:"days_back"`
	CreatedAfter       string             `json:"created_after"`
	CreatedBefore      string             `json:"created_before"`
	Channel            string             `json:"channel"`
	IncludeArchived    bool               `json:"include_archived"`
	IncludeSuperseded  bool               `json:"include_superseded"`
	IncludeExpired     bool               `json:"include_expired"`
	IncludeQuarantined bool               `json:"include_quarantined"`
	Reranker           string             `json:"reranker"`
	Center             string             `json:"center"`
	TokenBudget        int                `json:"token_budget"`
	// AsOf (valid time) and KnownAt (transaction time) read the past
	// (docs/time.md).
	AsOf    string `json:"as_of"`
	KnownAt string `json:"known_at"`
}

// search serves POST /v1/search: the full search response (results with
// signals, ranks, scores, confidence, neighbours, contradictions, budget).
func (s *Server) search(c *gin.Context) {
	var req searchRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	after, err := queryTime(req.CreatedAfter, "created_after")
	if err != nil {
		s.fail(c, err)
		return
	}
	before, err := queryTime(req.CreatedBefore, "created_before")
	if err != nil {
		s.fail(c, err)
		return
	}
	tt, err := timeTravel(req.AsOf, req.KnownAt)
	if err != nil {
		s.fail(c, err)
		return
	}
	resp, err := s.engine.Search(c.Request.Context(), principal(c), engine.SearchRequest{
		Scope: req.Scope, Query: req.Query, Mode: req.Mode, Limit: req.Limit,
		UserID: req.UserID, Visibility: req.Visibility, SubjectType: req.SubjectType, SubjectID: req.SubjectID,
		ProjectID: req.ProjectID, SessionID: req.SessionID, Types: req.Types, Tags: req.Tags,
		EntityTypes: req.EntityTypes, DaysBack: req.DaysBack, CreatedAfter: after, CreatedBefore: before,
		Channel: req.Channel, IncludeArchived: req.IncludeArchived, IncludeSuperseded: req.IncludeSuperseded,
		IncludeExpired: req.IncludeExpired, IncludeQuarantined: req.IncludeQuarantined,
		Reranker: req.Reranker, Center: req.Center, TokenBudget: req.TokenBudget, TimeTravel: tt,
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, resp)
}
