package server

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
)

// contextRequest is the body of POST /v1/context.
type contextRequest struct {
	Scope     *graph.Scope         `json:"scope"`
	Selector  json.RawMessage      `json:"selector"`
	Query     string               `json:"query"`
	ElementID string               `json:"element_id"`
	Limits    engine.ContextLimits `json:"limits"`
	// Channel and IncludeQuarantined apply edits as search does.
	Channel            string `json:"channel"`
	IncludeQuarantined bool   `json:"include_quarantined"`
	// AsOf and KnownAt read the past, as search does.
	AsOf    string `json:"as_of"`
	KnownAt string `json:"known_at"`
}

// parseSelector reads read_context's baseline selector: absent, the string
// "published", or an object {"kind": "published" | "baseline",
// "baseline_id": "..."} (kind may be left out when baseline_id is given).
func parseSelector(raw json.RawMessage) (engine.ContextSelector, error) {
	var sel engine.ContextSelector
	if len(raw) == 0 || string(raw) == "null" {
		return sel, nil
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		if str != engine.SelectorPublished {
			return sel, errorf(http.StatusBadRequest, "invalid", "selector",
				`selector must be "published" or {"baseline_id": "..."}`)
		}
		return engine.ContextSelector{Kind: str}, nil
	}
	if err := decodeBytes(raw, &sel); err != nil {
		return sel, errorf(http.StatusBadRequest, "invalid", "selector",
			`selector must be "published" or {"kind": "published"|"baseline", "baseline_id": "..."}`)
	}
	return sel, nil
}

// readContext serves POST /v1/context (read_context).
func (s *Server) readContext(c *gin.Context) {
	var req contextRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	sel, err := parseSelector(req.Selector)
	if err != nil {
		s.fail(c, err)
		return
	}
	tt, err := timeTravel(req.AsOf, req.KnownAt)
	if err != nil {
		s.fail(c, err)
		return
	}
	resp, err := s.engine.ReadContext(c.Request.Context(), principal(c), engine.ContextRequest{
		Scope: req.Scope, Selector: sel, Query: req.Query,
		ElementID: req.ElementID, Limits: req.Limits,
		Channel: req.Channel, IncludeQuarantined: req.IncludeQuarantined, TimeTravel: tt,
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, resp)
}

// verifyRequest is the body of POST /v1/citations/verify.
type verifyRequest struct {
	Scope     *graph.Scope     `json:"scope"`
	ContextID string           `json:"context_id"`
	Citations []graph.Citation `json:"citations"`
}

// verifyCitations serves POST /v1/citations/verify: it reports every
// citation that did not come from the named context.
func (s *Server) verifyCitations(c *gin.Context) {
	var req verifyRequest
	if err := decode(c, s.maxBody, &req); err != nil {
		s.fail(c, err)
		return
	}
	resp, err := s.engine.VerifyCitations(c.Request.Context(), principal(c), engine.VerifyRequest{
		Scope: req.Scope, ContextID: req.ContextID, Citations: req.Citations,
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, resp)
}
