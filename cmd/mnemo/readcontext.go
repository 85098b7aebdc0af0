package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mnemo-dev/mnemo/engine"
)

// runContext implements `mnemo context [flags] QUERY...`: read_context from
// the command line (docs/curation.md): version-pinned items with their
// citations, of the published baseline by default, of an older one with
// --baseline.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo context", "mnemo context [--selector published|current|baseline] [--baseline ID] [--max-items N] QUERY...",
		stdout, stderr).withConfig()
	id := c.scope("reader")
	fs := c.fs
	selector := fs.String("selector", "", "published (default), current, or baseline (with --baseline)")
	baseline := fs.String("baseline", "", "read this baseline's versions (selector baseline)")
	maxItems := fs.Int("max-items", 0, fmt.Sprintf("at most this many items (default %d)", engine.DefaultContextItems))
	tt := registerTimeTravel(fs)
	query, t, err := c.parseQuery(args, tt)
	if err != nil {
		return err
	}
	a, err := c.openParsed(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	resp, err := a.engine.ReadContext(ctx, id.principal(), engine.ContextRequest{Query: query,
		Selector: engine.ContextSelector{Kind: *selector, BaselineID: *baseline},
		Limits:   engine.ContextLimits{MaxItems: *maxItems}, TimeTravel: t})
	if err != nil {
		return err
	}
	return c.print(resp, func(w io.Writer) {
		fmt.Fprintf(w, "context %s (%s)\n", resp.ContextID, resp.BaselineSelectorUsed.Kind)
		for i, it := range resp.Items {
			fmt.Fprintf(w, "%2d. %s @ %s  %s\n    %s\n", i+1, it.ElementID, it.VersionID, strings.Join(it.WhyIncluded, ","),
				oneLine(it.Content, 160))
		}
	})
}

// parseQuery parses args as flags and QUERY... (the words joined), with
// the time-travel flags tt: the command lines of search and context.
func (c *cmdline) parseQuery(args []string, tt timeTravelFlags) (string, engine.TimeTravel, error) {
	pos, err := c.parse(args)
	if err != nil {
		return "", engine.TimeTravel{}, err
	}
	query := strings.Join(pos, " ")
	if strings.TrimSpace(query) == "" {
		return "", engine.TimeTravel{}, c.usageErr("no QUERY")
	}
	t, err := tt.parse()
	return query, t, err
}
