package server

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// relationRequest is the body of POST /v1/relations.
type relationRequest struct {
	From   string             `json:"from"`
	To     string             `json:"to"`
	Type   graph.RelationType `json:"type"`
	Reason string             `json:"reason"`
}

// createRelation serves POST /v1/relations: 201 with {relation, created:
// true}, or 200 with the existing relation and created false when the same
// one (from, to, type, in the caller's scope) exists. An end the caller
// cannot read or write is 404.
func (s *Server) createRelation(c *gin.Context) {
	var req relationRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.engine.Relate(c.Request.Context(), principal(c), engine.RelationRequest(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	status := http.StatusOK
	if res.Created {
		status = http.StatusCreated
	}
	c.JSON(status, res)
}

// deleteRelation serves DELETE /v1/relations/{id}, with an optional body
// {"reason": "..."} for the audit trail: 200 with the deleted relation.
func (s *Server) deleteRelation(c *gin.Context) {
	id, reason, ok := s.idAndReason(c)
	if !ok {
		return
	}
	rel, err := s.engine.Unrelate(c.Request.Context(), principal(c), id, reason)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, relationAnswer{Relation: rel})
}

// listRelations serves GET /v1/memories/{id}/relations?limit=: the
// memory's relations the caller sees, newest first.
func (s *Server) listRelations(c *gin.Context) {
	id := c.Param("id")
	if err := graph.CheckID("id", id); err != nil {
		s.fail(c, err)
		return
	}
	limit := 0
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			s.fail(c, &graph.FieldError{Field: "limit", Message: "must be a whole number from 1 to 1000"})
			return
		}
		limit = n
	}
	rels, err := s.engine.ListRelations(c.Request.Context(), principal(c), id, limit)
	if err != nil {
		s.fail(c, err)
		return
	}
	if rels == nil {
		rels = []graph.Relation{}
	}
	c.JSON(http.StatusOK, relationList{Relations: rels})
}

// relationAnswer is DELETE /v1/relations/{id}'s answer: the relation
// removed.
type relationAnswer struct {
	Relation graph.Relation `json:"relation"`
}

// relationList is GET /v1/memories/{id}/relations's answer.
type relationList struct {
	Relations []graph.Relation `json:"relations"`
}
