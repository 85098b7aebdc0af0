package main

import (
	"context"
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
	c := newCmdline("mnemo get", "mnemo get [flags] ID", stdout, stderr).withConfig()
	id := c.scope("reader")
	tt := registerTimeTravel(c.fs)
	pos, err := c.parseN(args, 1)
	if err != nil {
		return err
	}
	t, err := tt.parse()
	if err != nil {
		return err
	}
	a, err := c.openParsed(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	view, err := a.engine.GetWith(ctx, id.principal(), pos[0], engine.GetOptions{TimeTravel: t})
	if err != nil {
		return err
	}
	return c.print(view, func(w io.Writer) {
		m := view.Memory
		fmt.Fprintf(w, "%s  %s  %s  version %d of %d  %s\n", m.ID, m.Type, m.Status, view.Version.Number, m.VersionCount, m.Title)
		if view.HeadID != "" {
			fmt.Fprintf(w, "superseded; the chain's head: %s\n", view.HeadID)
		}
		fmt.Fprintln(w, view.Content)
	})
}
