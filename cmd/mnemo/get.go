package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/mnemo-dev/mnemo/engine"
)

// timeTravelFlags are the --as-of and --known-at flags of the read
// commands (docs/time.md).
type timeTravelFlags struct{ asOf, knownAt *string }

func registerTimeTravel(fs *flag.FlagSet) timeTravelFlags {
	return timeTravelFlags{
		asOf:    fs.String("as-of", "", "valid time: memories valid at this instant (RFC 3339 or YYYY-MM-DD)"),
		knownAt: fs.String("known-at", "", "transaction time: what mnemo knew at this instant (RFC 3339 or YYYY-MM-DD)"),
	}
}

func (f timeTravelFlags) parse() (engine.TimeTravel, error) {
	var (
		t   engine.TimeTravel
		err error
	)
	if t.AsOf, err = cliTime("as-of", *f.asOf); err != nil {
		return t, err
	}
	t.KnownAt, err = cliTime("known-at", *f.knownAt)
	return t, err
}

// runGet implements `mnemo get [--as-of T] [--known-at T] [--json] ID`: one
// memory's effective view, as GET /v1/memories/{id} answers it.
func runGet(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mnemo get", flag.ContinueOnError)
	var id identity
	id.registerScope(fs, "reader")
	tt := registerTimeTravel(fs)
	asJSON := fs.Bool("json", false, "print the memory view as JSON")
	a, pos, err := openWith(ctx, "mnemo get", fs, args, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	if len(pos) != 1 {
		return errors.New("usage: mnemo get [flags] ID")
	}
	t, err := tt.parse()
	if err != nil {
		return err
	}
	view, err := a.engine.GetWith(ctx, id.principal(), pos[0], engine.GetOptions{TimeTravel: t})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, view)
	}
	m := view.Memory
	fmt.Fprintf(stdout, "%s  %s  %s  version %d of %d  %s\n", m.ID, m.Type, m.Status, view.Version.Number, m.VersionCount, m.Title)
	if view.HeadID != "" {
		fmt.Fprintf(stdout, "superseded; the chain's head: %s\n", view.HeadID)
	}
	fmt.Fprintln(stdout, view.Content)
	return nil
}

// printJSON writes v to w as indented JSON (the --json output of the read
// commands).
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
