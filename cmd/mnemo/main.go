// Command mnemo is the one binary: it serves the HTTP API and runs the
// operator commands. It is also the only place where backends are chosen
// (see wiring.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
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
		"get":       {"get ID: one memory's effective view (--as-of, --known-at: the past)", runGet},
		"bench":     {"bench recall: retrieval quality on LoCoMo (recall@k per mode and BM25)", runBench},
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
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stderr, cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "mnemo: unknown command %q\n", args[0])
		usage(stderr, cmds)
		return 2
	}
	if err := c.run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // -h: the usage is printed, nothing failed
		}
		fmt.Fprintf(stderr, "mnemo %s: %v\n", args[0], err)
		return 1
	}
	return 0
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: mnemo COMMAND [flags]\n\ncommands:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'mnemo COMMAND -h' for a command's flags. Every flag also reads MNEMO_* from the environment.")
}

// verbOf reads the verb of a command with verbs (`mnemo edit propose ...`)
// before anything is opened: -h, --help or help print usage and return
// flag.ErrHelp (exit 0, no store created); no verb or an unknown one is an
// error that shows usage.
func verbOf(args []string, usage string, stderr io.Writer, verbs ...string) (string, error) {
	if len(args) == 0 {
		return "", errors.New(usage)
	}
	switch v := args[0]; {
	case v == "-h" || v == "--help" || v == "help":
		fmt.Fprintln(stderr, usage)
		return "", flag.ErrHelp
	case slices.Contains(verbs, v):
		return v, nil
	default:
		return "", fmt.Errorf("unknown verb %q; %s", v, usage)
	}
}
