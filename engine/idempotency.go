package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/mnemo-dev/mnemo/graph"
)

// MaxIdempotencyKey bounds an idempotency key (bytes).
const MaxIdempotencyKey = 255

// idempotentID is the id of what a create with an idempotency key writes:
// a hash of the operation, the tenant, the principal and the key, shaped
// as graph.NewID's ids are (32 hex digits). A retry of the request derives
// the same id, so the store's unique id refuses a second write in the same
// transaction that would have made it (ErrConflict), whichever replica or
// process the retry reaches, and the engine answers with what the first
// request created (docs/curation.md, "Idempotent creates"). Another
// principal's key, or another tenant's, names another id. Without a key
// the id is new.
func idempotentID(op string, s graph.Scope, p graph.Principal, key string) (string, error) {
	if key == "" {
		return graph.NewID(), nil
	}
	if len(key) > MaxIdempotencyKey || strings.IndexFunc(key, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsGraphic(r) || r == ' ' }) >= 0 {
		return "", &graph.FieldError{Field: "idempotency_key",
			Message: fmt.Sprintf("1 to %d visible ASCII characters", MaxIdempotencyKey)}
	}
	sum := sha256.Sum256([]byte(strings.Join([]string{op, s.TenantID, p.ID, key}, "\x00")))
	return hex.EncodeToString(sum[:16]), nil
}

// replayed resolves a create that failed with err under an idempotency
// key: when err is the store's ErrConflict on the id a first request wrote,
// it reads that first result (get) and returns it if same says it answers
// the same request. A first result of another request is ErrConflict, and
// so is one the caller can no longer read (a revoked capsule); every other
// error is returned as it is.
func replayed[T any](key string, err error, get func() (T, error), same func(T) bool) (T, error) {
	var zero T
	if key == "" || !errors.Is(err, graph.ErrConflict) {
		return zero, err
	}
	first, gerr := get()
	switch {
	case errors.Is(gerr, graph.ErrNotFound):
		return zero, fmt.Errorf("idempotency key %q was used by an earlier request whose result is no longer readable: %w", key, graph.ErrConflict)
	case gerr != nil:
		return zero, gerr
	case !same(first):
		return zero, fmt.Errorf("idempotency key %q was used by an earlier request with other fields: %w", key, graph.ErrConflict)
	}
	return first, nil
}
