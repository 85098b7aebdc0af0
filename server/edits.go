package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// editRequest is the body of POST /v1/memories/{id}/edits.
type editRequest struct {
	Kind       graph.EditKind `json:"kind"`
	VersionID  string         `json:"version_id"`
	Content    string         `json:"content"`
	Importance *float64       `json:"importance"`
	Delta      *float64       `json:"delta"`
	Channel    string         `json:"channel"`
	Reason     string         `json:"reason"`
}

// proposeEdit serves POST /v1/memories/{id}/edits: 201 with the edit (pending,
// or approved when the policy auto-approves it for the caller's role) and
// its preview.
func (s *Server) proposeEdit(c *gin.Context) {
	id := c.Param("id")
	if err := graph.CheckID("id", id); err != nil {
		s.fail(c, err)
		return
	}
	var req editRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.engine.ProposeEdit(c.Request.Context(), principal(c), id, engine.EditRequest(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, res)
}

// listEdits serves GET /v1/memories/{id}/edits?status=.
func (s *Server) listEdits(c *gin.Context) {
	id := c.Param("id")
	if err := graph.CheckID("id", id); err != nil {
		s.fail(c, err)
		return
	}
	eds, err := s.engine.ListMemoryEdits(c.Request.Context(), principal(c), id, graph.EditStatus(c.Query("status")))
	if err != nil {
		s.fail(c, err)
		return
	}
	if eds == nil {
		eds = []graph.Edit{}
	}
	c.JSON(http.StatusOK, editList{Edits: eds})
}

// editList answers GET /v1/memories/{id}/edits.
type editList struct {
	Edits []graph.Edit `json:"edits"`
}

// decideEdit serves POST /v1/edits/{id}:approve and POST
// /v1/edits/{id}:reject, with an optional body {"reason": "..."}. An edit
// that is not pending is 409; one the caller cannot see, 404.
func (s *Server) decideEdit(c *gin.Context) {
	id, verb, ok := s.customMethod(c, "id", "approve", "reject")
	if !ok {
		return
	}
	var req decisionRequest
	if c.Request.ContentLength != 0 {
		if err := decode(c, s.maxBody, &req); err != nil {
			s.fail(c, err)
			return
		}
	}
	res, err := s.engine.DecideEdit(c.Request.Context(), principal(c), id, verb == "approve", req.Reason)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, res)
}
