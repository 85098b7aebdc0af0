package server

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/mnemo-dev/mnemo/graph"
)

// apiError is the body of every error response, under "error". Field names
// the request field at fault, or is empty.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field"`
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
		return http.StatusBadRequest, apiError{Code: "invalid", Message: fe.Error(), Field: fe.Field}
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge, apiError{Code: "too_large", Message: "request body too large"}
	case errors.Is(err, graph.ErrInvalid):
		return http.StatusBadRequest, apiError{Code: "invalid", Message: sentence(err, graph.ErrInvalid)}
	case errors.Is(err, graph.ErrNotFound):
		return http.StatusNotFound, apiError{Code: "not_found", Message: sentence(err, graph.ErrNotFound)}
	case errors.Is(err, graph.ErrForbidden):
		return http.StatusForbidden, apiError{Code: "forbidden", Message: sentence(err, graph.ErrForbidden)}
	case errors.Is(err, graph.ErrConflict):
		return http.StatusConflict, apiError{Code: "conflict", Message: sentence(err, graph.ErrConflict)}
	case errors.Is(err, graph.ErrUnsupported):
		return http.StatusNotImplemented, apiError{Code: "unsupported", Message: sentence(err, graph.ErrUnsupported)}
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, apiError{Code: "timeout", Message: "the request timed out"}
	case errors.Is(err, context.Canceled):
		return 499, apiError{Code: "canceled", Message: "the request was canceled"}
	}
	return http.StatusInternalServerError, apiError{Code: "internal", Message: "internal error"}
}

// Describe is what the HTTP API answers for err: its status, code,
// message and field. Other faces of the engine (MCP) use it so an error
// reads the same everywhere.
func Describe(err error) (status int, code, message, field string) {
	status, e := statusOf(err)
	return status, e.Code, e.Message, e.Field
}

// fail writes err as the JSON error body and logs server-side failures.
func (s *Server) fail(c *gin.Context, err error) {
	status, body := statusOf(err)
	if status >= 500 {
		s.log.Error("request failed", "method", c.Request.Method, "path", c.FullPath(), "err", err)
	}
	c.AbortWithStatusJSON(status, gin.H{"error": body})
}

// sentence is err's message for a client: the wrapping chain with a
// segment that repeats the one before it dropped ("list memories: list
// memories: x" reads "list memories: x"), and without a leading sentinel
// the error code already says ("forbidden: principal p lacks ..." reads
// "principal p lacks ...").
func sentence(err, sentinel error) string {
	parts := strings.Split(err.Error(), ": ")
	if len(parts) > 1 && parts[0] == sentinel.Error() {
		parts = parts[1:]
	}
	out := parts[:1]
	for _, p := range parts[1:] {
		if p != out[len(out)-1] {
			out = append(out, p)
		}
	}
	return strings.Join(out, ": ")
}
