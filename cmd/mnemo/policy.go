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
	c := newCmdline("mnemo policy", "mnemo policy check [flags] FILE [FILE ...]", stdout, stderr)
	if _, err := c.verb(args, "check"); err != nil {
		return err
	}
	files, err := c.parseN(args[1:], someArgs)
	if err != nil {
		return err
	}
	var (
		checks []policyCheck
		failed bool
	)
	for _, f := range files {
		ch := policyCheck{File: f, OK: true}
		if p, err := policy.LoadFile(f); err != nil {
			ch.OK, ch.Error, failed = false, err.Error(), true
		} else {
			ch.Policy = p.Name()
		}
		checks = append(checks, ch)
	}
	err = c.print(checks, func(w io.Writer) {
		for _, ch := range checks {
			if ch.OK {
				fmt.Fprintf(w, "%s: ok (%s)\n", ch.File, ch.Policy)
			} else {
				fmt.Fprintln(w, ch.Error)
			}
		}
	})
	if err == nil && failed {
		err = errors.New("policy check failed")
	}
	return err
}

// policyCheck is one file's outcome of `mnemo policy check`.
type policyCheck struct {
	File   string `json:"file"`
	OK     bool   `json:"ok"`
	Policy string `json:"policy,omitempty"` // the policy's name, when ok
	Error  string `json:"error,omitempty"`  // file:line errors, when not
}
