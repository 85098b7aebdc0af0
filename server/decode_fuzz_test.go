package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/engine"
)

// The fuzz targets below feed arbitrary bodies to the request decoders.
// Each holds the same contract: decodeBytes never panics; it refuses with
// an *httpError of status 400 or 413 whose message reads as a sentence;
// it refuses everything encoding/json (unknown fields refused) refuses;
// it refuses every body with a member name given twice in one object
// (found by an independent walk over encoding/json's tokens); and what it
// accepts decodes to exactly what encoding/json decodes, with top-level
// names that match the type's exactly. As normal tests they run the
// seeds; run one for longer with, e.g.,
//
//	go test ./server -run '^$' -fuzz '^FuzzDecodeIngest$' -fuzztime 30s

var decodeSeeds = []string{
	`{"content":"x"}`,
	`{"type":"note","content":"The API server listens on port 8080.","tags":["a","b"],"importance":0.5}`,
	`{"CONTENT":"x"}`,
	`{"content":"x","content":"y"}`,
	`{"content":"x","\u0063ontent":"y"}`,
	`{"content":"x","scope":{"tenant_id":"t1","Tenant_ID":"t2"}}`,
	`{"content":"x","metadata":{"a":"1","a":"2"}}`,
	`{"content":"x","valid_from":"2026-01-02T03:04:05Z","provenance":{"path":"a.md"}}`,
	`{"items":[{"content":"a"},{"Content":"b"}]}`,
	`{"items":[{"content":"a","tags":["x"]}]}`,
	`{"query":"x","mode":"keyword","tags":["a"],"types":["note"],"limit":5}`,
	`{"query":"x","selector":{"kind":"published","kind":"baseline"}}`,
	`{"query":"x","selector":"published","limits":{"max_items":3}}`,
	`{"element_id":"m1","selector":{"baseline_id":"b1"}}`,
	`{"context_id":"c","citations":[{"element_id":"a","version_id":"v","start":1,"end":2}]}`,
	`{"context_id":"c","citations":[{"element_id":"a","ELEMENT_ID":"b"}]}`,
	`{"content":"x"} {}`,
	`{"content":`,
	`[]`,
	`"\ud800\udc00"`,
	`{"content":"\ud83d\ude00\u00e9\"\\"}`,
	`{"a":{"b":[[[[[]]]]]}}`,
	` `,
	`{"content":1e999}`,
	`{"content":"x",}`,
	`null`,
	`{"content":"x","valid_from":12,"valid_to":null}`,
	`{"content":"x","valid_to":"","valid_from":"2026-13-01T00:00:00Z"}`,
	`{"items":[{"content":"x","valid_from":"\u0032026-01-02T03:04:05Z"}]}`,
}

func FuzzDecodeIngest(f *testing.F) {
	fuzzDecoder(f, func() any { return new(engine.IngestRequest) }, nil)
}

func FuzzDecodeBatch(f *testing.F) {
	fuzzDecoder(f, func() any { return new(batchRequest) }, nil)
}

func FuzzDecodeSearch(f *testing.F) {
	fuzzDecoder(f, func() any { return new(searchRequest) }, nil)
}

func FuzzDecodeContext(f *testing.F) {
	fuzzDecoder(f, func() any { return new(contextRequest) }, func(t *testing.T, v any) {
		_, err := parseSelector(v.(*contextRequest).Selector)
		if err != nil {
			var he *httpError
			require.True(t, errors.As(err, &he), "%T %v", err, err)
			assert.Equal(t, "selector", he.Field)
		}
	})
}

func FuzzDecodeVerify(f *testing.F) {
	fuzzDecoder(f, func() any { return new(verifyRequest) }, nil)
}

// fuzzDecoder runs the decoders' contract on bodies decoded into the type
// newV returns; then, when it is not nil, checks what was accepted.
func fuzzDecoder(f *testing.F, newV func() any, then func(t *testing.T, v any)) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := newV()
		err := decodeBytes(data, got)

		want := newV()
		stdErr := stdDecode(data, want)
		dup := duplicateName(data)
		if err != nil {
			var he *httpError
			require.True(t, errors.As(err, &he), "an httpError, not %T: %v", err, err)
			assert.Contains(t, []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge}, he.status)
			assert.NotEmpty(t, he.Code)
			assert.NotEmpty(t, he.Message)
			assert.False(t, strings.HasPrefix(he.Message, "json:"), "%q", he.Message)
			return
		}
		require.NoError(t, stdErr, "encoding/json refuses what decode accepted: %q", data)
		assert.False(t, dup, "a name given twice was accepted: %q", data)
		assert.Equal(t, want, got, "decode and encoding/json disagree on %q", data)
		names := exactNames(reflect.TypeOf(got).Elem())
		for _, k := range topLevelNames(data) {
			assert.True(t, names[k], "member %q is not a field name of %T", k, got)
		}
		if then != nil {
			then(t, got)
		}
	})
}

// stdDecode is what decode did before it was strict.
func stdDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data")
	}
	return nil
}

// duplicateName reports whether some object in data names a member twice,
// walking encoding/json's tokens (false when data is not JSON).
func duplicateName(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dup := false
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				dup = dup || seen[key]
				seen[key] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if walk() != nil {
		return false
	}
	return dup
}

// topLevelNames returns the member names of data's top-level object.
func topLevelNames(data []byte) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// exactNames are the JSON names of struct type t's fields.
func exactNames(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" {
			name = t.Field(i).Name
		}
		out[name] = true
	}
	return out
}
