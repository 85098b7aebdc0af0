package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapsuleCLI: a memory ingested from the command line handed to agent
// bot in a capsule (a retry with the same idempotency key: the same one);
// bot lists and shows it, finds it in its context bundle, may not revoke
// it; its creator
// revokes it and bot no longer sees it.
func TestCapsuleCLI(t *testing.T) {
	data := t.TempDir()
	mnemo := cliOn(data)
	out, code := mnemo(t, "ingest", "--roles", "librarian", "Jenkins runs on host ci-1.")
	require.Zero(t, code, out)
	fields := strings.Fields(out)
	require.GreaterOrEqual(t, len(fields), 2, out)
	mem := fields[1]

	var c struct {
		ID        string `json:"id"`
		CreatedBy string `json:"created_by"`
	}
	for range 2 { // a retry with the same idempotency key: the same capsule
		first := c.ID
		out, code = mnemo(t, "capsule", "create", "--subject", "ci handover", "--to", "bot", "--memory", mem, "--ttl", "48h",
			"--idempotency-key", "handover-1")
		require.Zero(t, code, out)
		require.NoError(t, json.Unmarshal([]byte(out), &c), out)
		assert.Equal(t, "cli", c.CreatedBy)
		if first != "" {
			assert.Equal(t, first, c.ID, "the retry answers the first capsule")
		}
	}

	out, code = mnemo(t, "capsule", "list", "--as", "bot", "--roles", "reader")
	require.Zero(t, code, out)
	assert.Contains(t, out, c.ID)
	assert.Equal(t, 1, strings.Count(out, "ci handover"), "one capsule: %s", out)
	assert.Contains(t, out, mem, "with its items")
	out, code = mnemo(t, "capsule", "show", c.ID, "--as", "bot", "--roles", "reader")
	require.Zero(t, code, out)
	assert.Contains(t, out, "Jenkins runs on host ci-1.")
	out, code = mnemo(t, "capsule", "show", c.ID, "--as", "someone", "--roles", "reader")
	assert.NotZero(t, code, "not its audience: %s", out)
	out, code = mnemo(t, "capsule", "bundle", "--as", "bot", "--roles", "reader", "--budget", "500")
	require.Zero(t, code, out)
	var b struct {
		AgentID  string `json:"agent_id"`
		Capsules []struct {
			ID string `json:"id"`
		} `json:"capsules"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &b), out)
	assert.Equal(t, "bot", b.AgentID)
	if assert.Len(t, b.Capsules, 1, "the bundle holds the capsule addressed to bot") {
		assert.Equal(t, c.ID, b.Capsules[0].ID)
	}
	out, code = mnemo(t, "capsule", "bundle", "--as", "bot", "--roles", "reader", "--budget", "-1")
	assert.NotZero(t, code, out)
	assert.Contains(t, out, "token_budget")
	out, code = mnemo(t, "capsule", "revoke", c.ID, "--as", "bot", "--roles", "reader")
	assert.NotZero(t, code, "the audience may not revoke: %s", out)
	out, code = mnemo(t, "capsule", "create", "--subject", "x", "--to", "bot", "--memory", mem, "--ttl", "1000h")
	assert.NotZero(t, code, out)
	assert.Contains(t, out, "ttl_seconds")

	out, code = mnemo(t, "capsule", "revoke", c.ID, "--reason", "done")
	require.Zero(t, code, out)
	assert.Contains(t, out, `"revoked_by": "cli"`)
	out, code = mnemo(t, "capsule", "list", "--as", "bot", "--roles", "reader")
	require.Zero(t, code, out)
	assert.NotContains(t, out, c.ID)
}
