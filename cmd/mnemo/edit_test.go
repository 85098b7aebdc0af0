package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEditCLI: a memory ingested from the command line, amended by a
// librarian (approved at once), retracted by a writer (pending) and that
// retract rejected; `mnemo edit list` and `mnemo audit` show each step.
func TestEditCLI(t *testing.T) {
	mnemo := cliOn(t.TempDir())
	out, code := mnemo(t, "ingest", "--roles", "librarian", "Jenkins runs on host ci-1.")
	require.Zero(t, code, out)
	fields := strings.Fields(out)
	require.GreaterOrEqual(t, len(fields), 2, out)
	mem := fields[1]

	out, code = mnemo(t, "edit", "propose", mem, "--kind", "amend", "--content", "Jenkins runs on host ci-2.", "--reason", "moved")
	require.Zero(t, code, out)
	var res struct {
		Edit struct {
			ID, Status string
		}
		Preview struct {
			After struct{ Content string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.Equal(t, "approved", res.Edit.Status, "a librarian's amend is approved at once")
	assert.Equal(t, "Jenkins runs on host ci-2.", res.Preview.After.Content)

	out, code = mnemo(t, "edit", "propose", mem, "--kind", "retract", "--reason", "wrong", "--roles", "writer", "--as", "w", "--user", "cli")
	require.Zero(t, code, out)
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.Equal(t, "pending", res.Edit.Status)
	out, code = mnemo(t, "edit", "reject", res.Edit.ID, "--reason", "it is right")
	require.Zero(t, code, out)
	assert.Contains(t, out, `"rejected"`)
	out, code = mnemo(t, "edit", "approve", res.Edit.ID)
	assert.NotZero(t, code, "a decided edit cannot be approved: %s", out)

	out, code = mnemo(t, "edit", "list", mem)
	require.Zero(t, code, out)
	assert.Equal(t, 2, strings.Count(out, "\n"), out)

	out, code = mnemo(t, "audit", "--memory", mem)
	require.Zero(t, code, out)
	for _, action := range []string{"gate.approve", "edit.propose", "edit.approve", "edit.reject"} {
		assert.Contains(t, out, action)
	}
	out, code = mnemo(t, "audit", "--memory", mem, "--limit", "2")
	require.Zero(t, code, out)
	assert.Contains(t, out, "next page: --cursor ")
	out, code = mnemo(t, "audit", "--roles", "reader")
	assert.NotZero(t, code, "audit needs audit_read: %s", out)
	out, code = mnemo(t, "edit", "propose", mem, "--kind", "attenuate", "--delta", "x", "--reason", "r")
	assert.NotZero(t, code, out)
	assert.Contains(t, out, "--delta")
}

// cliOn runs mnemo commands on the data directory data, vectors off, and
// returns their output (stdout then stderr) and exit code.
func cliOn(data string) func(t *testing.T, args ...string) (string, int) {
	return func(t *testing.T, args ...string) (string, int) {
		t.Helper()
		out, errs, code := runCLI(t, append(args, "--data-dir", data, "--vector", "off", "--log-level", "error")...)
		return out + errs, code
	}
}

// runCLI runs one mnemo command line and returns its stdout, stderr and
// exit status.
func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errs bytes.Buffer
	code = run(t.Context(), args, &out, &errs)
	return out.String(), errs.String(), code
}
