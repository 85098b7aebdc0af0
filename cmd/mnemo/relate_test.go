package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRelateCLI: two memories ingested from the command line, related,
// listed from either end, related again (the same relation), and the
// relation deleted; bad input fails with a message.
func TestRelateCLI(t *testing.T) {
	mnemo := cliOn(t.TempDir())
	ingest := func(text string) string {
		out, code := mnemo(t, "ingest", "--roles", "librarian", text)
		require.Zero(t, code, out)
		fields := strings.Fields(out)
		require.GreaterOrEqual(t, len(fields), 2, out)
		return fields[1]
	}
	cron, mailer := ingest("The billing cron runs at midnight."), ingest("The invoice mailer waits for the nightly job.")

	out, code := mnemo(t, "relate", "create", mailer, "DEPENDS_ON", cron, "--reason", "waits for it")
	require.Zero(t, code, out)
	var res struct {
		Relation struct{ ID, Type string }
		Created  bool
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.True(t, res.Created)
	assert.Equal(t, "DEPENDS_ON", res.Relation.Type)
	first := res.Relation.ID

	out, code = mnemo(t, "relate", "create", mailer, "DEPENDS_ON", cron)
	require.Zero(t, code, out)
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	assert.False(t, res.Created, "the same relation again")
	assert.Equal(t, first, res.Relation.ID)

	for _, end := range []string{cron, mailer} {
		out, code = mnemo(t, "relate", "list", end)
		require.Zero(t, code, out)
		assert.Equal(t, 1, strings.Count(out, "\n"), out)
		assert.Contains(t, out, "-DEPENDS_ON->")
	}

	out, code = mnemo(t, "relate", "create", mailer, "LIKES", cron)
	assert.NotZero(t, code, out)
	assert.Contains(t, out, "LIKES")
	out, code = mnemo(t, "relate", "create", mailer, "RELATES_TO")
	assert.NotZero(t, code, out)
	assert.Contains(t, out, "usage: mnemo relate")

	out, code = mnemo(t, "relate", "delete", first, "--reason", "wrong")
	require.Zero(t, code, out)
	out, code = mnemo(t, "relate", "list", cron)
	require.Zero(t, code, out)
	assert.Empty(t, strings.TrimSpace(out))
	out, code = mnemo(t, "audit", "--memory", cron)
	require.Zero(t, code, out)
	assert.Contains(t, out, "relation.create")
	assert.Contains(t, out, "relation.delete")
}
