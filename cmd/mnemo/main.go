// Command mnemo is the one binary: it serves the HTTP API and runs the
// operator commands. It is also the only place where backends are chosen
// (see wiring.go).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand: a one-line summary and its entry point.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands is the explicit table of subcommands.
func commands() map[string]command {
	return map[string]command{
		"serve":     {"serve the HTTP API (and MCP at /mcp)", runServe},
		"mcp":       {"serve MCP on stdio as the key in MNEMO_API_KEY", runMCP},
		"search":    {"search QUERY: run the read path and print ranked results (--as-of, --known-at: the past)", runSearch},
		"context":   {"context QUERY: read_context — version-pinned items with citations (--selector, --baseline)", runContext},
		"get":       {"get ID: one memory's effective view (--as-of, --known-at: the past)", runGet},
		"bench":     {"bench recall|multihop|scifact|abstain: retrieval quality (LoCoMo, MuSiQue/HotpotQA, SciFact, abstention)", runBench},
		"policy":    {"policy check FILE: validate a policy file", runPolicy},
		"ingest":    {"ingest [TEXT|-]: write one note; ingest backlog DIR: mirror **/*.md", runIngest},
		"librarian": {"librarian list|show|approve|reject: review queued writes", runLibrarian},
		"forget":    {"forget ID (archive) | --restore ID | --erase ID... | --user U: archive or erase memories", runForget},
		"edit":      {"edit propose|list|approve|reject: memory surgery (retract, amend, quarantine, attenuate, block)", runEdit},
		"relate":    {"relate create FROM TYPE TO | delete ID | list MEMORY_ID: typed relations between memories", runRelate},
		"audit":     {"audit [--memory ID] [--actor A] [--from T] [--to T]: read the audit trail", runAudit},
		"capsule":   {"capsule create|list|show|revoke: capsules of memories, versions and decisions between agents", runCapsule},
		"proposal":  {"proposal create|accept|reject|rebase|show|list: proposals on pinned versions (the curation loop)", runProposal},
		"baseline":  {"baseline promote|list: a repository's published baselines (what read_context reads)", runBaseline},
		"outbox":    {"outbox status|drain|retry: pending and dead vector-index writes", runOutbox},
		"reindex":   {"rebuild the vector index of a scope from the graph", runReindex},
		"doctor":    {"compare the graph with the vector index of a scope", runDoctor},
		"version":   {"print the version and what the binary was built from", runVersion},
		"health":    {"health [--url U]: probe a running server's /healthz (the container health check)", runHealth},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 {
		usage(stderr, cmds)
		return 2
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		usage(stdout, cmds)
		return 0
	}
	name := "mnemo " + args[0]
	c, ok := cmds[args[0]]
	if !ok {
		err := &usageError{msg: fmt.Sprintf("unknown command %q (run 'mnemo -h' for the commands)", args[0])}
		return fail(stderr, "mnemo", err, jsonRequested(args))
	}
	if err := c.run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // -h: the help is printed, nothing failed
		}
		return fail(stderr, name, err, jsonRequested(args[1:]))
	}
	return 0
}

// fail reports err on stderr, as {"error":{...}} with --json, and returns
// the exit status: 2 for a usage error, 1 otherwise.
func fail(stderr io.Writer, name string, err error, asJSON bool) int {
	code := 1
	var ue *usageError
	if errors.As(err, &ue) {
		code = 2
	}
	if asJSON {
		_ = json.NewEncoder(stderr).Encode(struct {
			Error cliError `json:"error"`
		}{describe(err)})
		return code
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return code
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: mnemo COMMAND [flags] [arguments]\n\ncommands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'mnemo COMMAND -h' for a command's flags. --json on any command prints one JSON document;\n"+
		"configuration flags also read MNEMO_* from the environment.")
}
