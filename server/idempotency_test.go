package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdempotencyKeyHTTP: POST /v1/capsules and POST /v1/baselines:promote
// retried with the same Idempotency-Key answer 201 with the first
// request's result and write nothing more; the key with other fields is
// 409; a malformed key is 400 naming idempotency_key.
func TestIdempotencyKeyHTTP(t *testing.T) {
	a := newIngAPI(t, loopKeys)
	ing := a.expect(t, "r1writer", "POST", "/v1/memories",
		`{"type":"note","visibility":"project","title":"postgres pool","content":"The postgres connection pool size is 10."}`, 201)
	capsule := fmt.Sprintf(`{"subject":"handover","audience":["agent"],"memory_ids":[%q]}`, ing["id"])
	otherCapsule := fmt.Sprintf(`{"subject":"another","audience":["agent"],"memory_ids":[%q]}`, ing["id"])
	for _, tt := range []struct {
		name, role, path, body, other string
		id                            func(map[string]any) any
		count                         func(t *testing.T) int
	}{
		{"CapsuleCreate", "r1writer", "/v1/capsules", capsule, otherCapsule,
			func(b map[string]any) any { return b["id"] },
			func(t *testing.T) int {
				return len(a.expect(t, "r1writer", "GET", "/v1/capsules?sent=true", "", 200)["capsules"].([]any))
			}},
		{"Promote", "curator", "/v1/baselines:promote", `{"name":"release-1"}`, `{"name":"release-2"}`,
			func(b map[string]any) any { return b["baseline"].(map[string]any)["id"] },
			func(t *testing.T) int {
				return len(a.expect(t, "curator", "GET", "/v1/baselines", "", 200)["baselines"].([]any))
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := http.Header{"Idempotency-Key": {"retry-" + tt.name}}
			status, first := a.callWith(t, tt.role, "POST", tt.path, tt.body, key)
			require.Equal(t, http.StatusCreated, status, "%v", first)
			n := tt.count(t)
			status, again := a.callWith(t, tt.role, "POST", tt.path, tt.body, key)
			require.Equal(t, http.StatusCreated, status, "%v", again)
			assert.Equal(t, tt.id(first), tt.id(again), "the first request's result")
			assert.Equal(t, n, tt.count(t), "nothing more written")

			status, body := a.callWith(t, tt.role, "POST", tt.path, tt.other, key)
			assert.Equal(t, http.StatusConflict, status, "%v", body)
			status, body = a.callWith(t, tt.role, "POST", tt.path, tt.body, http.Header{"Idempotency-Key": {"two words"}})
			assert.Equal(t, http.StatusBadRequest, status, "%v", body)
			assert.Equal(t, "idempotency_key", errField(body))
			status, body = a.callWith(t, tt.role, "POST", tt.path, tt.body, nil)
			assert.Equal(t, http.StatusCreated, status, "%v", body)
			assert.NotEqual(t, tt.id(first), tt.id(body), "no key: a new one")
			assert.Equal(t, n+1, tt.count(t))
		})
	}
}
