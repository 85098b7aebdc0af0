package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTimeTravelCLI archives a memory and reads it back with search and get
// as known before the archive (--known-at) and now; bad times are errors.
func TestTimeTravelCLI(t *testing.T) {
	data := t.TempDir()
	mnemo := func(t *testing.T, args ...string) (string, int) {
		t.Helper()
		var out, errs bytes.Buffer
		code := run(t.Context(), append(args, "--data-dir", data, "--vector", "off", "--log-level", "error"), &out, &errs)
		return out.String() + errs.String(), code
	}
	ok := func(t *testing.T, args ...string) string {
		t.Helper()
		out, code := mnemo(t, args...)
		require.Zero(t, code, out)
		return out
	}
	first, _ := mnemo(t, "ingest", "The blorp ferry leaves at six.")
	id := strings.Fields(first)[1]
	time.Sleep(3 * time.Millisecond)
	known := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(3 * time.Millisecond)
	ok(t, "forget", id)
	for _, c := range []struct {
		name   string
		args   []string
		want   string
		absent string
	}{
		{"SearchKnownBeforeTheArchive", []string{"search", "--known-at", known, "blorp ferry"}, id, ""},
		{"SearchNow", []string{"search", "blorp ferry"}, "no memory matched", id},
		{"GetKnownBeforeTheArchive", []string{"get", "--known-at", known, id}, " active ", ""},
		{"GetNow", []string{"get", id}, " archived ", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := ok(t, c.args...)
			assert.Contains(t, out, c.want)
			if c.absent != "" {
				assert.NotContains(t, out, c.absent)
			}
		})
	}
	out, code := mnemo(t, "search", "--as-of", "someday", "blorp")
	assert.NotZero(t, code)
	assert.Contains(t, out, "--as-of")
}
