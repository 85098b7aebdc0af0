package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// decode reads the request body as exactly one JSON value into v, refusing
// unknown fields, trailing data and bodies over the size limit.
func decode(c *gin.Context, limit int64, v any) error {
	if ct := c.ContentType(); ct != "" && ct != "application/json" {
		return errorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "", "content type must be application/json")
	}
	body := http.MaxBytesReader(c.Writer, c.Request.Body, limit)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return errorf(http.StatusBadRequest, "invalid_json", "", "request body must hold a single JSON value")
	}
	return nil
}

func decodeError(err error) error {
	var (
		mbe  *http.MaxBytesError
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		invT *json.InvalidUnmarshalError
	)
	switch {
	case errors.As(err, &mbe):
		return err
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "invalid_json", "", "request body is empty")
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, "invalid_json", "", "malformed JSON: "+err.Error())
	case errors.As(err, &typ):
		return errorf(http.StatusBadRequest, "invalid", typ.Field, fmt.Sprintf("field %s must be %s", typ.Field, typ.Type))
	case errors.As(err, &invT):
		return err
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field := strings.Trim(msg, `"`)
		return errorf(http.StatusBadRequest, "unknown_field", field, "unknown field "+msg)
	}
	return errorf(http.StatusBadRequest, "invalid_json", "", err.Error())
}
