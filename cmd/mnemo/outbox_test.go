package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOutboxCLI: a write made by a command that cannot open the vector
// index (here: no model; beside a running server: its locked embedded
// index) still enqueues its vector-index item, `mnemo outbox status` shows
// it, and a process with the index delivers it, after which doctor agrees.
// With `--vector off` nothing is enqueued.
func TestOutboxCLI(t *testing.T) {
	in := func(data string) func(t *testing.T, args ...string) (string, int) {
		return func(t *testing.T, args ...string) (string, int) {
			t.Helper()
			var out, errs bytes.Buffer
			code := run(t.Context(), append(args, "--data-dir", data, "--log-level", "error"), &out, &errs)
			return out.String() + errs.String(), code
		}
	}
	off := in(t.TempDir())
	out, code := off(t, "ingest", "--vector", "off", "Jenkins runs on host ci-1.")
	require.Zero(t, code, out)
	out, code = off(t, "outbox", "status", "--vector", "off")
	require.Zero(t, code, out)
	assert.Contains(t, out, "outbox empty", "vector: off enqueues nothing")

	mnemo := in(t.TempDir())
	noModel := filepath.Join(t.TempDir(), "no-model")
	out, code = mnemo(t, "ingest", "--model-dir", noModel, "Gitea runs on host git-1.")
	require.Zero(t, code, out)
	out, code = mnemo(t, "outbox", "status", "--model-dir", noModel)
	require.Zero(t, code, out)
	assert.Contains(t, out, "1 pending (1 due now, 0 waiting to retry), 0 dead letters",
		"a write without the index is enqueued for the process that has it")

	requireModel(t)
	out, code = mnemo(t, "outbox", "drain")
	require.Zero(t, code, out)
	assert.Contains(t, out, "drained 1 items (1 embedded)")
	out, code = mnemo(t, "outbox", "status")
	require.Zero(t, code, out)
	assert.Contains(t, out, "outbox empty")
	out, code = mnemo(t, "doctor", "--tenant", "default")
	assert.Zero(t, code, "doctor: %s", out)
}
