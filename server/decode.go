package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/mnemo-dev/mnemo/graph"
)

// decode reads the request body as exactly one JSON value into v. It
// refuses, in this order: a body over limit (from Content-Length before
// reading anything, else as soon as the limit is crossed) with 413; a body
// that checkStrict refuses (member names that match only when case is
// ignored, duplicate or unknown members, strings over maxString, deep
// nesting); then whatever encoding/json refuses (syntax, types, trailing
// data).
func decode(c *gin.Context, limit int64, v any) error {
	if ct := c.ContentType(); ct != "" && ct != "application/json" {
		return errorf(http.StatusUnsupportedMediaType, "unsupported_media_type", "", "the content type must be application/json")
	}
	if c.Request.ContentLength > limit {
		return bodyTooLarge(limit)
	}
	data, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return bodyTooLarge(limit)
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return errorf(http.StatusRequestTimeout, "timeout", "", "the request body did not arrive within the server's read timeout")
		}
		return errorf(http.StatusBadRequest, "invalid_json", "", "the request body could not be read")
	}
	return decodeBytes(data, v)
}

// decodeBytes is decode on a body already read.
func decodeBytes(data []byte, v any) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return errorf(http.StatusBadRequest, "invalid_json", "", "the request body is empty")
	}
	if string(trimmed) == "null" { // encoding/json would leave v as it is
		return errorf(http.StatusBadRequest, "invalid_json", "", "the request body must be an object, not null")
	}
	strictErr := checkStrict(data, reflect.TypeOf(v))
	if strictErr != nil && !errors.Is(strictErr, errSyntax) {
		return strictErr
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errorf(http.StatusBadRequest, "invalid_json", "", "the request body must hold a single JSON value")
	}
	if strictErr != nil { // the scanner saw what encoding/json did not
		return errorf(http.StatusBadRequest, "invalid_json", "", "the request body is malformed JSON")
	}
	return nil
}

func bodyTooLarge(limit int64) error {
	return errorf(http.StatusRequestEntityTooLarge, "too_large", "",
		fmt.Sprintf("the request body is larger than %s, the most this server accepts (max_body_bytes)", graph.SizeText(limit)))
}

func decodeError(err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, io.EOF):
		return errorf(http.StatusBadRequest, "invalid_json", "", "the request body is empty")
	case errors.As(err, &syn):
		return errorf(http.StatusBadRequest, "invalid_json", "",
			fmt.Sprintf("the request body is malformed JSON at byte %d: %s", syn.Offset, strings.TrimPrefix(syn.Error(), "json: ")))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errorf(http.StatusBadRequest, "invalid_json", "", "the request body is malformed JSON: it ends too early")
	case errors.As(err, &typ):
		if typ.Field == "" {
			return errorf(http.StatusBadRequest, "invalid_json", "",
				fmt.Sprintf("the request body must be %s, not %s", jsonKind(typ.Type), article(typ.Value)))
		}
		return errorf(http.StatusBadRequest, "invalid", typ.Field,
			fmt.Sprintf("field %s must be %s, not %s", typ.Field, jsonKind(typ.Type), article(typ.Value)))
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		field := strings.Trim(msg, `"`)
		return errorf(http.StatusBadRequest, "unknown_field", field, "unknown field "+msg)
	}
	return errorf(http.StatusBadRequest, "invalid_json", "", "the request body is malformed JSON: "+strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names the JSON value a Go type decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.PkgPath() == "time" && t.Name() == "Time" {
		return "an RFC 3339 time string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another JSON value"
}

// article puts "a" or "an" before what encoding/json says it found
// ("string", "number 1.5", "array", "object", "bool").
func article(found string) string {
	switch {
	case found == "":
		return "that value"
	case found == "bool":
		return "true or false"
	case strings.HasPrefix(found, "number"):
		return "the " + found
	case strings.IndexAny(found[:1], "aeiou") == 0:
		return "an " + found
	}
	return "a " + found
}
