package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/graph"
)

// apiError is the body of every error response.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// httpError is an error the server itself raises with a fixed status.
type httpError struct {
	status int
	apiError
}

func (e *httpError) Error() string { return e.Message }

func errorf(status int, code, field, msg string) error {
	return &httpError{status: status, apiError: apiError{Code: code, Message: msg, Field: field}}
}

// statusOf maps an error to its HTTP status and body. It is the one place
// where engine and store errors become HTTP.
func statusOf(err error) (int, apiError) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.apiError
	}
	var fe *graph.FieldError
	if errors.As(err, &fe) {
		return http.StatusBadRequest, apiError{Code: "invalid", Message: err.Error(), Field: fe.Field}
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, apiError{Code: "too_large", Message: "request body too large"}
	case errors.Is(err, graph.ErrInvalid):
		return http.StatusBadRequest, apiError{Code: "invalid", Message: err.Error()}
	case errors.Is(err, graph.ErrNotFound):
		return http.StatusNotFound, apiError{Code: "not_found", Message: err.Error()}
	case errors.Is(err, graph.ErrForbidden):
		return http.StatusForbidden, apiError{Code: "forbidden", Message: err.Error()}
	case errors.Is(err, graph.ErrConflict):
		return http.StatusConflict, apiError{Code: "conflict", Message: err.Error()}
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, apiError{Code: "timeout", Message: "the request timed out"}
	case errors.Is(err, context.Canceled):
		return 499, apiError{Code: "canceled", Message: "the request was canceled"}
	}
	return http.StatusInternalServerError, apiError{Code: "internal", Message: "internal error"}
}

// fail writes err as the JSON error body and logs server-side failures.
func (s *Server) fail(c *gin.Context, err error) {
	status, body := statusOf(err)
	if status >= 500 {
		s.log.Error("request failed", "method", c.Request.Method, "path", c.FullPath(), "err", err)
	}
	c.AbortWithStatusJSON(status, gin.H{"error": body})
}
