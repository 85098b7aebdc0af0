package server

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
)

// createMemory serves POST /v1/memories: the body is one
// engine.IngestRequest, run through the whole write path. The answer is the
// engine.IngestResult with a status code that says what happened:
//
//	201 approved or superseded (a new memory)
//	200 reinforced (an identical memory exists) or updated (a new version)
//	202 pending (queued for a librarian; request_id names the request)
//	422 rejected by the policy gate (reason, rule and fix say why;
//	    error.code is "rejected")
//	409 rejected because of the stored state (e.g. supersedes names a
//	    memory that is no longer active; fix says what to do; error.code
//	    is "conflict", error.field "supersedes")
//	400 bad input (error.field names the field); nothing is written
func (s *Server) createMemory(c *gin.Context) {
	var req engine.IngestRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.engine.Ingest(c.Request.Context(), principal(c), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	status := ingestStatus(res)
	if status < 400 {
		c.JSON(status, res)
		return
	}
	// A refused write answers its result (rule, reason, fix) and, like
	// every error, an error object.
	e := apiError{Code: "rejected", Message: res.Reason, Field: ""}
	if res.Conflict {
		e.Code, e.Field = "conflict", "supersedes"
	}
	c.JSON(status, rejection{IngestResult: res, Error: e})
}

// rejection is the body of a 409 or 422 answer to POST /v1/memories.
type rejection struct {
	engine.IngestResult
	Error apiError `json:"error"`
}

// ingestStatus maps an ingest outcome to its HTTP status.
func ingestStatus(r engine.IngestResult) int {
	switch r.Status {
	case engine.StatusApproved, engine.StatusSuperseded:
		return http.StatusCreated
	case engine.StatusPending:
		return http.StatusAccepted
	case engine.StatusRejected:
		if r.Conflict {
			return http.StatusConflict
		}
		return http.StatusUnprocessableEntity
	}
	return http.StatusOK
}

// batchRequest is the body of POST /v1/memories:batch.
type batchRequest struct {
	Items []engine.IngestRequest `json:"items"`
}

// batchResponse answers it: one result per item, in order.
type batchResponse struct {
	Results []engine.IngestResult `json:"results"`
}

// createMemories serves POST /v1/memories:batch: up to engine.MaxBatch
// items through the write path together (new memories in one transaction,
// one embedding call). It answers 200 with each item's result and status;
// bad input in any item is a 400 naming items[i].field and nothing is
// written.
func (s *Server) createMemories(c *gin.Context) {
	var req batchRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.engine.IngestBatch(c.Request.Context(), principal(c), req.Items)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, batchResponse{Results: res})
}
