package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mnemo-dev/mnemo/policy"
)

// runPolicy implements `mnemo policy check FILE...`.
func runPolicy(_ context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "usage: mnemo policy check FILE [FILE ...]"
	if _, err := verbOf(args, usage, stderr, "check"); err != nil {
		return err
	}
	if len(args) < 2 {
		return errors.New(usage)
	}
	var failed bool
	for _, f := range args[1:] {
		p, err := policy.LoadFile(f)
		if err != nil {
			failed = true
			fmt.Fprintln(stdout, err)
			continue
		}
		fmt.Fprintf(stdout, "%s: ok (%s)\n", f, p.Name())
	}
	if failed {
		return errors.New("policy check failed")
	}
	return nil
}
