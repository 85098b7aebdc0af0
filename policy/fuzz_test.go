package policy_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/mnemo-dev/mnemo/policy"
)

// FuzzParse checks that no document panics the parser and that every
// failure is an Errors list naming the file.
func FuzzParse(f *testing.F) {
	def, err := os.ReadFile(defaultPolicyPath)
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		minimal,
		string(def),
		"",
		"version: 1",
		"{}",
		"[]",
		"version: [",
		"types: {note: {index_text: [content], display: {primary: content}}}",
		"&a [*a]",
		"a: &a {b: *a}",
		"version: 1\ngate: {default: queue, rules: [{name: x, action: approve, match: {roles: [nobody]}}]}",
		strings.Repeat("- ", 50),
		"\x00\xff",
		"version: !!binary AAAA",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := policy.Parse("fuzz.yaml", data)
		if err == nil {
			if p == nil {
				t.Fatal("nil policy without error")
			}
			_ = p.Gate(policy.GateInput{Type: "note"})
			return
		}
		var errs policy.Errors
		if !errors.As(err, &errs) || len(errs) == 0 {
			t.Fatalf("error is not a policy.Errors: %T %v", err, err)
		}
		for _, e := range errs {
			if e.File != "fuzz.yaml" {
				t.Fatalf("error does not name the file: %v", e)
			}
		}
	})
}
