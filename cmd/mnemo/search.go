package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/mnemo-dev/mnemo/engine"
)

// runSearch implements `mnemo search [flags] QUERY...`: the read path from
// the command line, printing ranked results (or the full response as JSON).
func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo search", "mnemo search [flags] QUERY...", stdout, stderr).withConfig()
	id := c.scope("reader") // --user is the search's narrowing here
	fs := c.fs
	mode := fs.String("mode", "", "graph, vector, keyword or hybrid (default: the policy's)")
	limit := fs.Int("limit", engine.DefaultSearchLimit, "number of results")
	user := fs.String("user", "", "only this user's memories")
	types := fs.String("types", "", "only these memory types, comma-separated")
	tags := fs.String("tags", "", "only memories carrying all these tags, comma-separated")
	daysBack := fs.Int("days-back", 0, "only memories created in the last N days")
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
	resp, err := a.engine.Search(ctx, id.principal(), engine.SearchRequest{
		Query: query, Mode: *mode, Limit: *limit, UserID: *user,
		Types: commaList(*types), Tags: commaList(*tags), DaysBack: *daysBack, TimeTravel: t,
	})
	if err != nil {
		return err
	}
	return c.print(resp, func(w io.Writer) { printSearch(w, resp) })
}

// printSearch is the text form of a search response.
func printSearch(stdout io.Writer, resp engine.SearchResponse) {
	if resp.Message != "" {
		fmt.Fprintln(stdout, resp.Message)
	}
	for _, w := range resp.Warnings {
		fmt.Fprintln(stdout, "warning:", w)
	}
	for i, r := range resp.Results {
		fmt.Fprintf(stdout, "%2d. %s  %-8s score %.4f  confidence %.2f  %s\n    %s\n",
			i+1, r.Memory.ID, r.Memory.Type, r.Score, r.Confidence, strings.Join(r.WhyIncluded, ","),
			oneLine(r.Content, 160))
	}
	for _, c := range resp.Contradictions {
		fmt.Fprintf(stdout, "contradiction: %s vs %s (%s)\n", c.A, c.B, c.Reason)
	}
	if resp.Budget.TokenBudgetExceeded {
		fmt.Fprintf(stdout, "token budget %d: %d left out\n", resp.Budget.TokenBudget, resp.Budget.ExcludedCount)
	}
}

// oneLine folds whitespace and cuts s to n characters.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
