package extract_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/extract"
)

var keyShape = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*-[A-Z][A-Za-z0-9]*-[A-Z][A-Za-z0-9]*$`)

func TestKeyRequired(t *testing.T) {
	k := extract.NewKeyer(defaultPolicy(t))
	tests := []struct{ in, want string }{
		{"I really prefer dark mode IDEs", "Self-Pref-DarkMode"},
		{"The server listens on 0.0.0.0", "Server-Config-Binding"},
		{"Do not use relative paths", "Dev-Path-Absolute"},
		// A weekday or month is when, not what: the keys are the subject.
		{"Rotate the staging API keys before Friday", "Key-Fact-RotateStaging"},
		{"Renew the TLS certificate in March", "Certificate-Fact-RenewTls"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, k.Key(tt.in))
		})
	}
}

// saqFacts groups statements by the fact they state: statements of one
// group must share a key, statements of different groups must not.
var saqFacts = []struct {
	key        string // the expected key, for readers and failure messages
	statements []string
}{
	{"Self-Pref-DarkMode", []string{"I really prefer dark mode IDEs", "I like dark mode in my editor", "My favorite IDE theme is dark mode", "I love using dark mode"}},
	{"Self-Pref-LightMode", []string{"I prefer light mode", "I like light mode in my IDE"}},
	{"Server-Config-Binding", []string{"The server listens on 0.0.0.0", "Our server binds to 0.0.0.0", "The server's listen address is 0.0.0.0"}},
	{"Server-Config-Port", []string{"The server port is 8080", "The server uses port 8080"}},
	{"Database-Config-Port", []string{"The database runs on port 5432", "The DB port is 5432", "Postgres uses port 5432"}},
	{"Dev-Path-Absolute", []string{"Do not use relative paths", "Always use absolute paths", "Never use relative file paths", "Avoid relative paths", "Never use relative directories", "Always use absolute directories"}},
	{"Dev-Path-Relative", []string{"Use relative paths", "Prefer relative paths"}},
	{"Dev-Indent-Tab", []string{"Use tabs for indentation", "Indent with tabs", "Don't indent with spaces"}},
	{"Self-Lang-Go", []string{"I mostly write code in Go", "Go is the language I use most"}},
	{"Self-Loc-Berlin", []string{"I live in Berlin", "I'm located in Berlin", "I am based in Berlin"}},
	{"Self-Name-Ada", []string{"My name is Ada", "I am called Ada", "I'm named Ada"}},
	{"Team-Deploy-Friday", []string{"We deploy on Fridays", "Our team deploys on Fridays", "We ship releases on Friday"}},
	{"Report-Due-General", []string{"The report is due Friday", "The report deadline is Friday"}},
	{"Self-Pref-TeaCoffee", []string{"I prefer tea over coffee", "I like tea more than coffee"}},
	{"Cache-Config-Timeout", []string{"The cache timeout is 30 seconds", "The cache has a 30 second timeout"}},
	{"Server-Config-Timeout", []string{"The server timeout is 60 seconds", "Server has a timeout of 60s"}},
	{"Self-Pref-Vim", []string{"I prefer vim", "Vim is my favorite editor"}},
	{"Api-Lang-General", []string{"The API is written in Go", "Our API is implemented in Go"}},
	{"Self-Pref-Tab", []string{"I prefer tabs", "I like tabs", "Tabs are my favourite"}},
	{"Worker-Config-Port", []string{"The worker listens on port 9090", "Worker port is 9090"}},
	{"Dev-Test-Handler", []string{"Write tests for every handler", "Add tests for each handler"}},
}

// TestKeyAgreement measures how often paraphrases share a key (agreement)
// and how often different facts get different keys (separation).
func TestKeyAgreement(t *testing.T) {
	k := extract.NewKeyer(defaultPolicy(t))
	type keyed struct {
		group int
		text  string
		key   string
	}
	var all []keyed
	for g, f := range saqFacts {
		for _, s := range f.statements {
			all = append(all, keyed{g, s, k.Key(s)})
		}
	}
	var same, sameOK, diff, diffOK int
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			a, b := all[i], all[j]
			if a.group == b.group {
				same++
				if a.key == b.key {
					sameOK++
				} else {
					t.Logf("paraphrases split: %q -> %s, %q -> %s", a.text, a.key, b.text, b.key)
				}
				continue
			}
			diff++
			if a.key != b.key {
				diffOK++
			} else {
				t.Logf("different facts merged: %q, %q -> %s", a.text, b.text, a.key)
			}
		}
	}
	for _, a := range all {
		if want := saqFacts[a.group].key; a.key != want {
			t.Logf("%q -> %s (table says %s)", a.text, a.key, want)
		}
	}
	agree := float64(sameOK) / float64(same)
	separate := float64(diffOK) / float64(diff)
	t.Logf("SAQ statements=%d paraphrase pairs=%d agreement=%.1f%% different-fact pairs=%d separation=%.1f%%",
		len(all), same, 100*agree, diff, 100*separate)
	require.GreaterOrEqual(t, same, 40, "need at least 40 paraphrase pairs")
	assert.GreaterOrEqual(t, agree, 0.90, "paraphrase agreement")
	assert.GreaterOrEqual(t, separate, 0.90, "different-fact separation")
}

func TestKeyShape(t *testing.T) {
	k := extract.NewKeyer(defaultPolicy(t))
	tests := []struct{ name, in, want string }{
		{"empty", "", "Note-Fact-General"},
		{"punctuation only", "?!...", "Note-Fact-General"},
		{"banned words never appear", "The new update is really very good", "Note-Fact-General"},
		{"long words are cut", "The internationalization listens on localhost", "Internationaliz-Config-Binding"},
		{"numbers are not qualifiers", "I prefer 42", "Self-Pref-General"},
		{"non-ascii letters dropped", "The café port is 80", "Caf-Config-Port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := k.Key(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Regexp(t, keyShape, got)
			assert.LessOrEqual(t, len(got), 30)
		})
	}
	assert.Equal(t, k.Key("I prefer vim"), extract.Key(defaultPolicy(t), "I prefer vim"))
}

func FuzzKey(f *testing.F) {
	k := extract.NewKeyer(defaultPolicy(f))
	for _, fact := range saqFacts {
		for _, s := range fact.statements {
			f.Add(s)
		}
	}
	for _, s := range []string{"", "\x00", "é", "I", "don't", "0.0.0.0", "v1.2.3", "'s", "... . .", "ÄÖÜ ß", "Prefer prefer prefer prefer prefer"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := k.Key(s)
		if len(got) > 30 || !keyShape.MatchString(got) {
			t.Fatalf("Key(%q) = %q: bad shape or longer than 30", s, got)
		}
	})
}
