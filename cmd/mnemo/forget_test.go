package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestForgetCLI archives, restores and erases one memory, then erases the
// rest of its user, and searches after each erase: nothing of the erased
// content is found.
func TestForgetCLI(t *testing.T) {
	data := t.TempDir()
	mnemo := func(t *testing.T, args ...string) string {
		t.Helper()
		var out, errs bytes.Buffer
		code := run(t.Context(), append(args, "--data-dir", data, "--vector", "off", "--log-level", "error"), &out, &errs)
		require.Zero(t, code, out.String()+errs.String())
		return out.String()
	}
	first := strings.Fields(mnemo(t, "ingest", "Zqxmarker Quill keeps the harbour key."))[1]
	second := strings.Fields(mnemo(t, "ingest", "Oskar hides the zqxmarker spare key."))[1]
	require.Contains(t, mnemo(t, "search", "zqxmarker"), second, "precondition")

	assert.Contains(t, mnemo(t, "forget", second), "archived "+second)
	assert.NotContains(t, mnemo(t, "search", "zqxmarker"), second)
	assert.Contains(t, mnemo(t, "forget", "--restore", second), "restored "+second)
	assert.Contains(t, mnemo(t, "forget", "--erase", second, "--reason", "ticket 1"), "erased "+second)
	assert.Contains(t, mnemo(t, "forget", "--erase", second), "was erased already")
	out := mnemo(t, "search", "zqxmarker spare")
	assert.NotContains(t, strings.ToLower(out), "spare")
	assert.Contains(t, out, first)

	assert.Contains(t, mnemo(t, "forget", "--user", "cli"), "erased user cli: 1 memories")
	assert.Contains(t, mnemo(t, "search", "zqxmarker"), "no memory matched")
}
