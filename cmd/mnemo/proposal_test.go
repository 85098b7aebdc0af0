package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProposalCLI: from the command line, an agent proposes on a memory
// of repository o/r, may not accept, a librarian accepts and promotes, and
// `mnemo baseline list` marks the published baseline.
func TestProposalCLI(t *testing.T) {
	data := t.TempDir()
	repo := []string{"--org", "o", "--repo", "r", "--data-dir", data, "--vector", "off", "--log-level", "error"}
	mnemo := func(t *testing.T, args ...string) (string, int) {
		t.Helper()
		var out, errs bytes.Buffer
		code := run(t.Context(), append(args, repo...), &out, &errs)
		return out.String() + errs.String(), code
	}
	out, code := mnemo(t, "ingest", "--roles", "librarian", "Jenkins runs on host ci-1.")
	require.Zero(t, code, out)
	fields := strings.Fields(out)
	require.GreaterOrEqual(t, len(fields), 2, out)
	mem := fields[1]

	out, code = mnemo(t, "proposal", "create", mem, "--version-number", "1", "--content", "Jenkins runs on host ci-2.", "--roles", "agent")
	require.Zero(t, code, out)
	var pr struct{ ID, Status string }
	require.NoError(t, json.Unmarshal([]byte(out), &pr), out)
	assert.Equal(t, "open", pr.Status)

	out, code = mnemo(t, "proposal", "accept", pr.ID, "--roles", "agent")
	assert.NotZero(t, code, "an agent may not accept")
	assert.Contains(t, out, "forbidden")

	out, code = mnemo(t, "proposal", "accept", pr.ID, "--note", "checked")
	require.Zero(t, code, out)
	var acc struct {
		Proposal struct {
			Status            string
			AcceptedVersionID string `json:"accepted_version_id"`
		}
		Version struct{ ID, Content string }
	}
	require.NoError(t, json.Unmarshal([]byte(out), &acc), out)
	assert.Equal(t, "accepted", acc.Proposal.Status)
	assert.Equal(t, acc.Version.ID, acc.Proposal.AcceptedVersionID)
	assert.Equal(t, "Jenkins runs on host ci-2.", acc.Version.Content)

	out, code = mnemo(t, "proposal", "reject", pr.ID, "--reason", "late")
	assert.NotZero(t, code, "a decided proposal")
	assert.Contains(t, out, "accepted")

	out, code = mnemo(t, "baseline", "promote", "--name", "release-1")
	require.Zero(t, code, out)
	assert.Contains(t, out, `"version_count": 1`)
	out, code = mnemo(t, "baseline", "list")
	require.Zero(t, code, out)
	assert.Contains(t, out, "* ")
	assert.Contains(t, out, "release-1")

	// read_context from the command line reads the promoted version.
	out, code = mnemo(t, "context", "--json", "Jenkins host")
	require.Zero(t, code, out)
	var rc struct {
		Selector struct {
			Kind string `json:"kind"`
		} `json:"baseline_selector_used"`
		Items []struct {
			VersionID string `json:"version_id"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rc), out)
	assert.Equal(t, "published", rc.Selector.Kind)
	if assert.Len(t, rc.Items, 1, out) {
		assert.Equal(t, acc.Version.ID, rc.Items[0].VersionID, "the promoted version")
	}
	out, code = mnemo(t, "context", "--selector", "baseline", "Jenkins host")
	assert.NotZero(t, code, "a baseline selector names a baseline: %s", out)

	out, code = mnemo(t, "proposal", "list", "--memory", mem)
	require.Zero(t, code, out)
	assert.Contains(t, out, pr.ID)
	assert.Contains(t, out, "accepted")
}
