package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// subcommands is every command line that reaches a FlagSet: each command,
// and each verb of the commands with verbs. TestSubcommandsComplete keeps
// it in step with commands().
var subcommands = [][]string{
	{"audit"},
	{"baseline"}, {"baseline", "promote"}, {"baseline", "list"},
	{"bench"}, {"bench", "recall"}, {"bench", "multihop"}, {"bench", "scifact"}, {"bench", "abstain"},
	{"capsule"}, {"capsule", "create"}, {"capsule", "list"}, {"capsule", "show"}, {"capsule", "revoke"}, {"capsule", "bundle"},
	{"doctor"},
	{"edit"}, {"edit", "propose"}, {"edit", "list"}, {"edit", "approve"}, {"edit", "reject"},
	{"forget"},
	{"get"},
	{"health"},
	{"ingest"}, {"ingest", "backlog"},
	{"librarian"}, {"librarian", "list"}, {"librarian", "show"}, {"librarian", "approve"}, {"librarian", "reject"},
	{"mcp"},
	{"outbox"}, {"outbox", "status"}, {"outbox", "drain"}, {"outbox", "retry"},
	{"policy"}, {"policy", "check"},
	{"proposal"}, {"proposal", "create"}, {"proposal", "accept"}, {"proposal", "reject"}, {"proposal", "rebase"},
	{"proposal", "show"}, {"proposal", "list"},
	{"reindex"},
	{"relate"}, {"relate", "create"}, {"relate", "delete"}, {"relate", "list"},
	{"search"},
	{"context"},
	{"serve"},
	{"version"},
}

// verbless are the commands without verbs: their -h lists their flags.
func verbless(sub []string) bool {
	return len(sub) == 2 || !slices.Contains([]string{"baseline", "bench", "capsule", "edit", "librarian", "outbox", "policy", "proposal", "relate"}, sub[0])
}

func TestSubcommandsComplete(t *testing.T) {
	for name := range commands() {
		assert.True(t, slices.ContainsFunc(subcommands, func(s []string) bool { return s[0] == name }), "subcommands lacks %s", name)
	}
}

// TestHelpOpensNothing runs -h (and --help, and -h after other arguments)
// on every subcommand in a fresh working directory: each exits 0, prints
// its usage on stdout (with its flags where it has some) and leaves the
// directory empty (`mnemo librarian -h` once opened the store and created
// ./mnemo-data).
func TestHelpOpensNothing(t *testing.T) {
	for _, sub := range subcommands {
		for _, help := range [][]string{{"-h"}, {"--help"}, {"SOME-ID", "--json", "-h"}} {
			args := append(slices.Clone(sub), help...)
			if !verbless(sub) && len(help) > 1 {
				continue // a verb command reads its verb first: SOME-ID is an unknown verb
			}
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				dir := t.TempDir()
				t.Chdir(dir)
				out, errs, code := runCLI(t, args...)
				assert.Equal(t, 0, code, errs)
				assert.Contains(t, out, "usage: mnemo "+sub[0])
				if verbless(sub) {
					assert.Contains(t, out, "--json", "the help lists the flags")
				}
				assertEmptyDir(t, dir, "mnemo %s created files", strings.Join(args, " "))
			})
		}
	}
}

// TestTopHelp: mnemo -h lists every command with its summary on stdout;
// mnemo alone prints the same on stderr and exits 2.
func TestTopHelp(t *testing.T) {
	out, _, code := runCLI(t, "-h")
	assert.Equal(t, 0, code)
	for name, c := range commands() {
		assert.Contains(t, out, "  "+name+" ")
		assert.Contains(t, out, c.summary)
	}
	out, errs, code := runCLI(t)
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Contains(t, errs, "commands:")
}

// TestUsageErrors: a command line mnemo cannot run exits 2 with an error
// that says what is wrong, as text or, with --json, as the API's error
// envelope on stderr with nothing on stdout; it opens nothing.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		want       string // in the message
		field      string // the flag at fault
		exitStatus int
	}{
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`, "", 2},
		{"unknown flag", []string{"search", "--bogus", "q"}, "unknown flag --bogus", "bogus", 2},
		{"unknown flag after the arguments", []string{"get", "ID", "--bogus"}, "unknown flag --bogus", "bogus", 2},
		{"unknown flag of a verb", []string{"edit", "list", "ID", "--bogus=1"}, "unknown flag --bogus", "bogus", 2},
		{"flag without its value", []string{"search", "q", "--limit"}, "flag --limit needs a value", "limit", 2},
		{"bad flag value", []string{"search", "--limit", "many", "q"}, `invalid value "many" for flag --limit`, "limit", 2},
		{"unknown verb", []string{"librarian", "shelve"}, `unknown verb "shelve"`, "", 2},
		{"no verb", []string{"edit"}, "usage: mnemo edit", "", 2},
		{"missing argument", []string{"get"}, "want 1 argument(s), got 0", "", 2},
		{"extra argument", []string{"relate", "list", "A", "B"}, "want 1 argument(s), got 2", "", 2},
		{"no query", []string{"search", "--limit", "3"}, "no QUERY", "", 2},
		{"forget: --restore and --erase", []string{"forget", "--restore", "--erase", "ID"}, "usage: mnemo forget", "", 2},
		{"bench flag", []string{"bench", "recall", "--vectors", "sometimes"}, "-vectors must be auto or off", "", 1},
		{"bench depth", []string{"bench", "recall", "--depth", "500"}, "-depth 500: must be 25 to 100", "", 2},
		{"backlog of no directory", []string{"ingest", "backlog", "no-such-dir"}, "no-such-dir is not a directory", "", 1},
		{"bad configuration", []string{"get", "ID", "--store", "oracle"}, `"oracle" is not sqlite or neo4j`, "store", 1},
		{"bad time", []string{"get", "ID", "--as-of", "someday"}, `--as-of: "someday" is not RFC 3339`, "", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			out, errs, code := runCLI(t, tc.args...)
			assert.Equal(t, tc.exitStatus, code)
			assert.Empty(t, out)
			assert.Contains(t, errs, tc.want)

			jsonArgs := append(slices.Clone(tc.args), "--json")
			if strings.HasPrefix(tc.args[len(tc.args)-1], "--") && !strings.Contains(tc.args[len(tc.args)-1], "=") {
				jsonArgs = slices.Insert(slices.Clone(tc.args), 1, "--json") // --json would be the flag's value
			}
			out, errs, code = runCLI(t, jsonArgs...)
			assert.Equal(t, tc.exitStatus, code)
			assert.Empty(t, out)
			var body struct {
				Error struct {
					Code, Message, Field string
				}
			}
			require.NoError(t, json.Unmarshal([]byte(errs), &body), errs)
			assert.Contains(t, body.Error.Message, tc.want)
			assert.Equal(t, tc.field, body.Error.Field)
			if tc.exitStatus == 2 {
				assert.Equal(t, "usage", body.Error.Code)
			}
			assertEmptyDir(t, ".", "a refused command line opens nothing")
		})
	}
}

func assertEmptyDir(t *testing.T, dir string, msgAndArgs ...any) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Empty(t, entries, msgAndArgs...)
}

// TestParse: flags before, between and after the positional arguments,
// "--" ending the flags and "-" (stdin) as an argument.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		args []string
		pos  []string
		n    int
		b    bool
	}{
		{"none", nil, nil, 0, false},
		{"flags first", []string{"--n", "3", "-b", "a", "b"}, []string{"a", "b"}, 3, true},
		{"flags last", []string{"a", "b", "--n=3", "--b"}, []string{"a", "b"}, 3, true},
		{"flags between", []string{"a", "-n", "3", "b"}, []string{"a", "b"}, 3, false},
		{"double dash", []string{"a", "--", "-n", "3"}, []string{"a", "-n", "3"}, 0, false},
		{"dash is an argument", []string{"-", "-b"}, []string{"-"}, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCmdline("mnemo test", "mnemo test", io.Discard, io.Discard)
			n := c.fs.Int("n", 0, "")
			b := c.fs.Bool("b", false, "")
			pos, err := c.parse(tc.args)
			require.NoError(t, err)
			assert.Equal(t, tc.pos, pos)
			assert.Equal(t, tc.n, *n)
			assert.Equal(t, tc.b, *b)
		})
	}
}

// TestJSONOutput runs every command that reads or writes the store with
// --json on one data directory: each prints exactly one JSON document on
// stdout, of the shape named, and nothing else.
func TestJSONOutput(t *testing.T) {
	data := t.TempDir()
	mnemo := func(t *testing.T, args ...string) (string, string, int) {
		t.Helper()
		return runCLI(t, append(args, "--json", "--data-dir", data, "--vector", "off", "--log-level", "error")...)
	}
	one := func(t *testing.T, args ...string) any {
		t.Helper()
		out, errs, code := mnemo(t, args...)
		require.Zero(t, code, errs)
		dec := json.NewDecoder(strings.NewReader(out))
		var v any
		require.NoError(t, dec.Decode(&v), out)
		assert.False(t, dec.More(), "one document: %s", out)
		return v
	}
	field := func(v any, key string) any {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		return m[key]
	}
	ing := one(t, "ingest", "--roles", "librarian", "Jenkins runs on host ci-1.")
	id, _ := field(ing, "id").(string)
	require.NotEmpty(t, id, "ingest --json: %v", ing)
	other, _ := field(one(t, "ingest", "Gitea runs on host git-1."), "id").(string)

	policyFile := filepath.Join(t.TempDir(), "p.yaml")
	require.NoError(t, os.WriteFile(policyFile, []byte("nonsense: [\n"), 0o600))
	backlog := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(backlog, "a.md"), []byte("# Runbook\n\nRestart the ci-1 agent with systemctl.\n"), 0o600))

	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, v any)
	}{
		{"search", []string{"search", "Jenkins"}, func(t *testing.T, v any) { assert.NotEmpty(t, field(v, "results")) }},
		{"get", []string{"get", id}, func(t *testing.T, v any) { assert.Equal(t, id, field(field(v, "memory"), "id")) }},
		{"edit propose", []string{"edit", "propose", id, "--kind", "amend", "--content", "Jenkins runs on host ci-2.", "--reason", "moved"},
			func(t *testing.T, v any) { assert.NotNil(t, field(v, "edit")) }},
		{"edit list", []string{"edit", "list", id}, func(t *testing.T, v any) { assert.Len(t, v, 1) }},
		{"audit", []string{"audit", "--memory", id}, func(t *testing.T, v any) {
			assert.NotEmpty(t, field(v, "items"))
			assert.Contains(t, v, "next_cursor")
		}},
		{"librarian list", []string{"librarian", "list"}, func(t *testing.T, v any) { assert.Equal(t, []any{}, v) }},
		{"relate create", []string{"relate", "create", id, "RELATES_TO", other}, func(t *testing.T, v any) { assert.NotNil(t, v) }},
		{"relate list", []string{"relate", "list", id}, func(t *testing.T, v any) { assert.Len(t, v, 1) }},
		{"capsule list", []string{"capsule", "list"}, func(t *testing.T, v any) { assert.Equal(t, []any{}, field(v, "items")) }},
		{"proposal list", []string{"proposal", "list"}, func(t *testing.T, v any) { assert.Equal(t, []any{}, v) }},
		{"outbox status", []string{"outbox", "status"}, func(t *testing.T, v any) { assert.EqualValues(t, 0, field(v, "pending")) }},
		{"outbox retry", []string{"outbox", "retry"}, func(t *testing.T, v any) { assert.EqualValues(t, 0, field(v, "requeued")) }},
		{"ingest backlog", []string{"ingest", "backlog", backlog}, func(t *testing.T, v any) { assert.EqualValues(t, 1, field(v, "added")) }},
		{"forget", []string{"forget", other}, func(t *testing.T, v any) {
			assert.Equal(t, []any{map[string]any{"id": other, "action": "archived"}}, field(v, "results"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, one(t, tc.args...)) })
	}

	t.Run("errors", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			code string
		}{
			{[]string{"get", "no-such-memory"}, "not_found"},
			{[]string{"reindex"}, "failed"}, // vectors are off
			{[]string{"policy", "check", policyFile}, "failed"},
		} {
			out, errs, status := mnemo(t, tc.args...)
			if tc.args[0] == "policy" { // it takes no configuration flags
				out, errs, status = runCLI(t, append(tc.args, "--json")...)
			}
			assert.Equal(t, 1, status, errs)
			var body struct{ Error cliError }
			require.NoError(t, json.Unmarshal([]byte(errs), &body), "%v: %s", tc.args, errs)
			assert.Equal(t, tc.code, body.Error.Code, "%v", tc.args)
			assert.NotEmpty(t, body.Error.Message)
			if tc.args[0] == "policy" {
				assert.Contains(t, out, `"ok": false`, "policy check says which file failed on stdout")
			} else {
				assert.Empty(t, out)
			}
		}
	})
}

// TestVersionAndHealthJSON: the commands that open no store print JSON too,
// and leave the working directory as they found it.
func TestVersionAndHealthJSON(t *testing.T) {
	policyFile, err := filepath.Abs("../../config/default_policy.yaml")
	require.NoError(t, err)
	dir := t.TempDir()
	t.Chdir(dir)
	defer assertEmptyDir(t, dir, "a command that needs no store created files")
	out, errs, code := runCLI(t, "policy", "check", policyFile, "--json")
	require.Zero(t, code, errs)
	var checks []policyCheck
	require.NoError(t, json.Unmarshal([]byte(out), &checks))
	require.Len(t, checks, 1)
	assert.True(t, checks[0].OK)

	out, errs, code = runCLI(t, "version", "--json")
	require.Zero(t, code, errs)
	var b build
	require.NoError(t, json.Unmarshal([]byte(out), &b))
	assert.Equal(t, version, b.Version)
	assert.True(t, strings.HasPrefix(b.Go, "go1."), b.Go)

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	out, errs, code = runCLI(t, "health", "--json", "--url", srv.URL+"/healthz")
	require.Zero(t, code, errs)
	assert.JSONEq(t, `{"status":"ok"}`, out)
}

// TestProgress: on a terminal a bar with the count, rate and time left
// redrawn in place; elsewhere a plain line every few seconds and at the
// end, left out under --json.
func TestProgress(t *testing.T) {
	clock := time.Unix(0, 0)
	mk := func(terminal, asJSON bool) (*progress, *bytes.Buffer) {
		var b bytes.Buffer
		p := newProgress(&b, "backlog", "files", asJSON)
		p.terminal, p.now = terminal, func() time.Time { return clock }
		p.start, p.last = clock, clock
		return p, &b
	}
	term, tb := mk(true, false)
	plain, pb := mk(false, false)
	quiet, qb := mk(false, true)
	clock = clock.Add(2 * time.Second)
	for _, p := range []*progress{term, plain, quiet} {
		p.update(10, 40, "docs/a.md")
	}
	assert.Equal(t, "\rbacklog: [######------------------] 10/40 files 5.0/s eta 6s docs/a.md                               ", tb.String())
	assert.Equal(t, "backlog: 10/40 files 5.0/s eta 6s\n", pb.String())
	clock = clock.Add(time.Second)
	plain.update(12, 40, "")
	assert.Equal(t, "backlog: 10/40 files 5.0/s eta 6s\n", pb.String(), "not again within a few seconds")
	clock = clock.Add(time.Second)
	plain.update(40, 40, "")
	assert.Equal(t, "backlog: 10/40 files 5.0/s eta 6s\nbacklog: 40/40 files 10.0/s\n", pb.String(), "the end is always said")
	term.done()
	assert.True(t, strings.HasSuffix(tb.String(), "\n"))
	assert.Empty(t, qb.String())

	unknown, ub := mk(false, false)
	clock = clock.Add(4 * time.Second)
	unknown.update(8, 0, "")
	assert.Equal(t, "backlog: 8 files 2.0/s\n", ub.String(), "no total: no bar, no time left")
}

// TestServeJSON: `mnemo serve --json --listen 127.0.0.1:0` says where it
// listens in one JSON document once it does, and that address answers.
func TestServeJSON(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	r, w := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--json", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--vector", "off",
			"--log-level", "error", "--api-keys", "serve-json-key:alice:admin:acme"}, w, io.Discard)
		w.Close()
	}()
	var where struct{ Addr, Wiring string }
	require.NoError(t, json.NewDecoder(r).Decode(&where))
	resp, err := http.Get(where.Addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, where.Wiring, "store=sqlite")
	cancel()
	go func() { _, _ = io.Copy(io.Discard, r) }()
	assert.Equal(t, 0, <-done)
}
