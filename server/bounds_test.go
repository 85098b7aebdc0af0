package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/server"
)

// raw sends body with the given headers and returns the status and the
// decoded "error" object (nil when the answer has none).
func (a *ingAPI) raw(t *testing.T, method, path, body string, header map[string]string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out struct {
		Error map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(data, &out), "body: %s", data)
	return resp.StatusCode, out.Error
}

func writerHeaders() map[string]string {
	return map[string]string{"Authorization": "Bearer writer-key", "Content-Type": "application/json"}
}

// TestStrictDecoding: field names match exactly, a name given twice is
// refused, strings and bodies over the limits are 413 before any decoding
// or extraction, and type errors read as sentences.
func TestStrictDecoding(t *testing.T) {
	a := newIngAPI(t)
	big := strings.Repeat("a", graph.MaxContentLen+1)
	tests := []struct {
		name   string
		path   string
		body   string
		status int
		code   string
		field  string
		msg    string // the message contains it
	}{
		{"upper-case field", "/v1/memories", `{"CONTENT":"x"}`, 400, "unknown_field", "CONTENT", `did you mean "content"`},
		{"mixed-case field", "/v1/memories", `{"content":"x","Type":"note"}`, 400, "unknown_field", "Type", `did you mean "type"`},
		{"duplicate field", "/v1/memories", `{"content":"x","content":"y"}`, 400, "duplicate_field", "content", "more than once"},
		{"duplicate through an escape", "/v1/memories", `{"content":"x","\u0063ontent":"y"}`, 400, "duplicate_field", "content", ""},
		{"case inside scope", "/v1/memories", `{"content":"x","scope":{"Tenant_ID":"t1"}}`, 400, "unknown_field", "scope.Tenant_ID", ""},
		{"duplicate map key", "/v1/memories", `{"content":"x","metadata":{"a":"1","a":"2"}}`, 400, "duplicate_field", "metadata.a", ""},
		{"unknown field", "/v1/memories", `{"content":"x","colour":"red"}`, 400, "unknown_field", "colour", `unknown field "colour"`},
		{"batch item case", "/v1/memories:batch", `{"items":[{"content":"a"},{"Content":"b"}]}`, 400, "unknown_field", "items[1].Content", ""},
		{"search case", "/v1/search", `{"query":"x","QUERY":"y"}`, 400, "unknown_field", "QUERY", ""},
		{"search duplicate", "/v1/search", `{"query":"x","tags":["a"],"tags":["b"]}`, 400, "duplicate_field", "tags", ""},
		{"context selector duplicate", "/v1/context", `{"query":"x","selector":{"kind":"published","kind":"baseline"}}`, 400, "duplicate_field", "selector.kind", ""},
		{"context selector case", "/v1/context", `{"query":"x","selector":{"KIND":"published"}}`, 400, "invalid", "selector", ""},
		{"verify citation case", "/v1/citations/verify", `{"context_id":"c","citations":[{"element_id":"a","ELEMENT_ID":"b"}]}`, 400, "unknown_field", "citations[0].ELEMENT_ID", ""},
		{"number expected", "/v1/memories", `{"content":"x","importance":"high"}`, 400, "invalid", "importance", "field importance must be a number, not a string"},
		{"array expected", "/v1/memories", `{"content":"x","tags":"a"}`, 400, "invalid", "tags", "must be an array, not a string"},
		{"not an object", "/v1/memories", `[]`, 400, "invalid_json", "", "must be an object, not an array"},
		{"trailing data", "/v1/memories", `{"content":"x"} {}`, 400, "invalid_json", "", "single JSON value"},
		{"empty body", "/v1/memories", ` `, 400, "invalid_json", "", "empty"},
		{"time not a string", "/v1/memories", `{"content":"x","valid_from":12}`, 400, "invalid", "valid_from", "must be an RFC 3339 time string"},
		{"time not RFC 3339", "/v1/memories", `{"content":"x","valid_to":"tomorrow"}`, 400, "invalid", "valid_to", `not "tomorrow"`},
		{"time empty", "/v1/memories:batch", `{"items":[{"content":"x","valid_to":""}]}`, 400, "invalid", "items[0].valid_to", `not ""`},
		{"null body", "/v1/memories", `null`, 400, "invalid_json", "", "must be an object, not null"},
		{"null optional body", "/v1/users/u1:erase", ` null `, 400, "invalid_json", "", "must be an object, not null"},
		{"malformed", "/v1/memories", `{"content":`, 400, "invalid_json", "", "malformed JSON"},
		{"deep nesting", "/v1/memories", `{"content":"x","provenance":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`, 400, "invalid_json", "", "nests deeper"},
		{"content over the limit", "/v1/memories", `{"content":"` + big + `"}`, 413, "too_large", "content", "1 MiB (1048576 bytes)"},
		{"escaped content over the limit", "/v1/memories", `{"content":"` + strings.Repeat(`\u00e9`, graph.MaxContentLen/2+1) + `"}`, 413, "too_large", "content", ""},
		{"batch content over the limit", "/v1/memories:batch", `{"items":[{"content":"a"},{"content":"` + big + `"}]}`, 413, "too_large", "items[1].content", ""},
		{"body over the limit", "/v1/memories", `{"content":"` + strings.Repeat("a", 4<<20) + `"}`, 413, "too_large", "", "4 MiB (4194304 bytes)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := a.count(t)
			status, e := a.raw(t, "POST", tt.path, tt.body, writerHeaders())
			require.Equal(t, tt.status, status, "%v", e)
			require.NotNil(t, e)
			assert.Equal(t, tt.code, e["code"])
			assert.Equal(t, tt.field, e["field"])
			assert.Contains(t, e["message"], tt.msg)
			for _, goSyntax := range []string{"float64", "[]string", "struct", "json:"} {
				assert.NotContains(t, e["message"], goSyntax)
			}
			assert.Equal(t, before, a.count(t), "nothing written")
		})
	}
	t.Run("a null time is no time", func(t *testing.T) {
		code, body := a.call(t, "writer", "POST", "/v1/memories", `{"content":"a null valid_to","valid_to":null}`)
		assert.Equal(t, 201, code, "%v", body)
	})
	t.Run("exact names still decode", func(t *testing.T) {
		code, body := a.call(t, "writer", "POST", "/v1/memories",
			`{"type":"note","content":"The queue drains every 5 s.","scope":{"tenant_id":"t1"},"metadata":{"a":"1","A":"2"}}`)
		assert.Equal(t, 201, code, "%v", body)
	})
	t.Run("content type", func(t *testing.T) {
		status, e := a.raw(t, "POST", "/v1/memories", `{"content":"x"}`,
			map[string]string{"Authorization": "Bearer writer-key", "Content-Type": "text/plain"})
		assert.Equal(t, 415, status)
		assert.Equal(t, "unsupported_media_type", e["code"])
	})
}

// TestErrorBodies: every error answer is {"error":{code,message,field}}
// with field present, including the 409 and 422 ingest rejections, which
// keep their result fields beside it.
func TestErrorBodies(t *testing.T) {
	a := newIngAPI(t)
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		header map[string]string
		status int
		code   string
		field  string
	}{
		{"no key", "GET", "/v1/memories", "", nil, 401, "unauthenticated", ""},
		{"no route", "GET", "/v2/nothing", "", nil, 404, "not_found", ""},
		{"wrong method", "DELETE", "/v1/search", "", nil, 405, "method_not_allowed", ""},
		{"forbidden", "POST", "/v1/memories", `{"content":"x"}`, map[string]string{"Authorization": "Bearer reader-key"}, 403, "forbidden", ""},
		{"not found", "GET", "/v1/memories/nope", "", writerHeaders(), 404, "not_found", ""},
		{"bad field", "POST", "/v1/memories", `{"type":"note"}`, writerHeaders(), 400, "invalid", "content"},
		{"gate rejection", "POST", "/v1/memories", `{"type":"note","content":"Hello.","channel":"quarantine"}`, writerHeaders(), 422, "rejected", ""},
		{"conflict", "POST", "/v1/memories", `{"type":"note","content":"Anything.","supersedes":"missing-id"}`, writerHeaders(), 409, "conflict", "supersedes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, e := a.raw(t, tt.method, tt.path, tt.body, tt.header)
			require.Equal(t, tt.status, status, "%v", e)
			require.NotNil(t, e, "an error object")
			assert.Equal(t, tt.code, e["code"])
			assert.NotEmpty(t, e["message"])
			field, present := e["field"]
			assert.True(t, present, "field is present even when empty")
			assert.Equal(t, tt.field, field)
		})
	}
	t.Run("rejections keep their result", func(t *testing.T) {
		code, body := a.call(t, "writer", "POST", "/v1/memories", `{"type":"note","content":"Anything.","supersedes":"missing-id"}`)
		require.Equal(t, 409, code)
		assert.Equal(t, "rejected", body["status"])
		assert.NotEmpty(t, body["fix"])
		assert.Equal(t, body["reason"], body["error"].(map[string]any)["message"])
	})
}

// TestFilterListsHTTP: long filter lists are a 400 naming the field, on
// the store the tests run on (SQLite, or Neo4j with MNEMO_TEST_STORE).
func TestFilterListsHTTP(t *testing.T) {
	a := newIngAPI(t)
	list := func(prefix string, n int) string {
		vs := make([]string, n)
		for i := range vs {
			vs[i] = fmt.Sprintf("%s%d", prefix, i)
		}
		b, _ := json.Marshal(vs)
		return string(b)
	}
	query := func(param, prefix string, n int) string {
		q := url.Values{}
		for i := range n {
			q.Add(param, fmt.Sprintf("%s%d", prefix, i))
		}
		return q.Encode()
	}
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		status int
		field  string
	}{
		{"930 tags", "POST", "/v1/search", `{"query":"x","mode":"keyword","tags":` + list("t", 930) + `}`, 400, "tags"},
		{"32760 types", "POST", "/v1/search", `{"query":"x","mode":"keyword","types":` + list("y", 32760) + `}`, 400, "types"},
		{"65 entity types", "POST", "/v1/search", `{"query":"x","mode":"keyword","entity_types":` + list("e", 65) + `}`, 400, "entity_types"},
		{"64 of each", "POST", "/v1/search", `{"query":"x","mode":"keyword","tags":` + list("t", 64) + `,"types":` + list("y", 64) +
			`,"entity_types":` + list("e", 64) + `}`, 200, ""},
		{"list 930 tags", "GET", "/v1/memories?" + query("tag", "t", 930), "", 400, "tag"},
		{"list 65 comma-separated types", "GET", "/v1/memories?type=" + strings.Trim(strings.ReplaceAll(list("y", 65), `"`, ""), "[]"), "", 400, "type"},
		{"list 64 tags and types", "GET", "/v1/memories?" + query("tag", "t", 64) + "&" + query("type", "y", 64), "", 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, e := a.raw(t, tt.method, tt.path, tt.body, writerHeaders())
			require.Equal(t, tt.status, status, "%v", e)
			if tt.status == 400 {
				assert.Equal(t, tt.field, e["field"])
				assert.Contains(t, e["message"], "more than 64")
			}
		})
	}
}

// TestInvisibleIDs: ids with invisible or direction-changing characters are
// refused, in paths and in bodies.
func TestInvisibleIDs(t *testing.T) {
	a := newIngAPI(t)
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		field  string
	}{
		{"zero-width space in a memory id", "GET", "/v1/memories/ab%E2%80%8Bcd", "", "id"},
		{"right-to-left override in a request id", "GET", "/v1/librarian/requests/%E2%80%AEab", "", "id"},
		{"byte order mark in an approval", "POST", "/v1/librarian/requests/%EF%BB%BFab:approve", "", "id"},
		{"bidi isolate in session_id", "POST", "/v1/memories", `{"content":"x","session_id":"s\u20661"}`, "session_id"},
		{"zero-width joiner in subject_id", "POST", "/v1/memories", `{"content":"x","subject_id":"a\u200db"}`, "subject_id"},
		{"left-to-right mark in channel", "POST", "/v1/memories", `{"content":"x","channel":"\u200echat"}`, "channel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := writerHeaders()
			if strings.HasPrefix(tt.path, "/v1/librarian") {
				h["Authorization"] = "Bearer librarian-key"
			}
			status, e := a.raw(t, tt.method, tt.path, tt.body, h)
			require.Equal(t, 400, status, "%v", e)
			assert.Equal(t, tt.field, e["field"])
			assert.Contains(t, e["message"], "U+")
		})
	}
}

func TestBearerScheme(t *testing.T) {
	a := newIngAPI(t)
	tests := []struct {
		header string
		status int
	}{
		{"Bearer reader-key", 200},
		{"bearer reader-key", 200},
		{"BEARER reader-key", 200},
		{"bEaReR   reader-key ", 200},
		{"Basic reader-key", 401},
		{"Bearerreader-key", 401},
		{"Bearer wrong-key", 401},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			status, e := a.raw(t, "GET", "/v1/memories", "", map[string]string{"Authorization": tt.header})
			assert.Equal(t, tt.status, status, "%v", e)
		})
	}
}

// TestMessagesReadAsSentences: no repeated prefixes, no Go struct syntax,
// no items[0] on a single write.
func TestMessagesReadAsSentences(t *testing.T) {
	a := newIngAPI(t)
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		status  int
		want    string
		notWant []string
	}{
		{"bad cursor", "GET", "/v1/memories?cursor=garbage", "", 400, "cursor", []string{"list memories: list memories"}},
		{"foreign scope", "POST", "/v1/memories", `{"content":"x","scope":{"tenant_id":"t2"}}`, 403, "scope t2 is outside", []string{"{", "TenantID"}},
		{"single write", "POST", "/v1/memories", `{"content":"x","importance":3}`, 400, "importance", []string{"items[0]"}},
		{"single write forbidden scope", "POST", "/v1/memories", `{"content":"x","scope":{"tenant_id":"t1","org_id":"o\u200b"}}`, 400, "org_id", []string{"items[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, e := a.raw(t, tt.method, tt.path, tt.body, writerHeaders())
			require.Equal(t, tt.status, status, "%v", e)
			assert.Contains(t, e["message"], tt.want)
			for _, s := range tt.notWant {
				assert.NotContains(t, e["message"], s)
			}
		})
	}
}

// TestRequestDeadline: handlers and the engine honour the request's
// deadline and answer 504.
func TestRequestDeadline(t *testing.T) {
	a := newIngAPI(t, func(o *server.Options) { o.RequestTimeout = time.Nanosecond })
	for _, tt := range []struct{ path, body string }{
		{"/v1/memories", `{"type":"note","content":"The queue drains every 5 s."}`},
		{"/v1/memories:batch", `{"items":[{"type":"note","content":"The queue drains every 5 s."}]}`},
	} {
		t.Run(tt.path, func(t *testing.T) {
			status, e := a.raw(t, "POST", tt.path, tt.body, writerHeaders())
			require.Equal(t, 504, status, "%v", e)
			assert.Equal(t, "timeout", e["code"])
			assert.Equal(t, 0, a.count(t))
		})
	}
}

// TestSlowClients: against a real listener, a client that sends its
// headers or its body a byte at a time is cut off once the read timeouts
// pass, not held open.
func TestSlowClients(t *testing.T) {
	a := newIngAPI(t)
	const readTimeout = 400 * time.Millisecond
	hs := server.NewHTTPServer(a.handler, server.Timeouts{ReadHeader: readTimeout, Read: readTimeout, Write: 5 * time.Second, Idle: time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })

	head := "POST /v1/memories HTTP/1.1\r\nHost: mnemo\r\nAuthorization: Bearer writer-key\r\n" +
		"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
	tests := []struct {
		name   string
		fast   string // sent at once
		slow   string // then a byte every 50 ms
		status string // the status line answered, if any
	}{
		{"slow body", head, `{"content":"` + strings.Repeat("a", 980) + `"}`, "HTTP/1.1 408"},
		{"slow headers", "", head, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			start := time.Now()
			_, err = io.WriteString(conn, tt.fast)
			require.NoError(t, err)
			go func() {
				for i := range len(tt.slow) {
					if _, err := conn.Write([]byte{tt.slow[i]}); err != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
			line, _ := bufio.NewReader(conn).ReadString('\n')
			var rest [1]byte
			for err == nil {
				_, err = conn.Read(rest[:])
			}
			took := time.Since(start)
			t.Logf("closed after %v, answered %q", took, strings.TrimSpace(line))
			assert.Less(t, took, readTimeout+time.Second, "cut off near the read timeout, not held")
			assert.GreaterOrEqual(t, took, readTimeout/2)
			assert.True(t, strings.HasPrefix(line, tt.status), "answered %q", line)
		})
	}
}

// BenchmarkRefuseOversize is the time to refuse a 4 MiB content on a
// server whose body limit admits it: the scanner answers 413 before any
// decoding or extraction (it took 46 s of CPU at 77b831f).
func BenchmarkRefuseOversize(b *testing.B) {
	a := newIngAPI(b, func(o *server.Options) { o.MaxBodyBytes = 8 << 20 })
	body := `{"type":"note","content":"` + strings.Repeat("The cache keeps results. ", (4<<20)/25) + `"}`
	for b.Loop() {
		req, err := http.NewRequest("POST", a.url+"/v1/memories", strings.NewReader(body))
		require.NoError(b, err)
		req.Header.Set("Authorization", "Bearer writer-key")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(b, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(b, 413, resp.StatusCode)
	}
}
