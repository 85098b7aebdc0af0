package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mnemo-dev/mnemo/policy"
)

// runPolicy implements `mnemo policy check FILE...`.
func runPolicy(_ context.Context, args []string, stdout, _ io.Writer) error {
	if len(args) < 2 || args[0] != "check" {
		return errors.New("usage: mnemo policy check FILE [FILE ...]")
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
