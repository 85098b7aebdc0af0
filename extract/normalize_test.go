package extract_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mnemo-dev/mnemo/extract"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"hedge at start", "I think the server listens on 0.0.0.0", "The server listens on 0.0.0.0"},
		{"maybe with comma", "Maybe, we should use Postgres.", "We should use Postgres."},
		{"basically and just", "Basically we just deploy on Fridays", "We deploy on Fridays"},
		{"you know mid sentence", "The cache is, you know, flushed hourly", "The cache is, flushed hourly"},
		{"actually keeps negation", "I actually don't use tabs", "I don't use tabs"},
		{"never kept", "Honestly, never push to main", "Never push to main"},
		{"kind of hedge", "It is kind of slow", "It is slow"},
		{"kind of meaningful", "What kind of database is it?", "What kind of database is it?"},
		{"sort of after article", "a sort of cache", "a sort of cache"},
		{"like as verb kept", "I like dark mode", "I like dark mode"},
		{"like as filler commas", "It was, like, huge", "It was, huge"},
		{"like before number keeps number", "There were like 5 errors", "There were 5 errors"},
		{"numbers kept", "Maybe set timeout to 30s and retries to 3", "Set timeout to 30s and retries to 3"},
		{"fillers", "Um, so yeah the build is green", "The build is green"},
		{"really dropped", "I really prefer dark mode IDEs", "I prefer dark mode IDEs"},
		{"lower case stays lower", "maybe use absolute paths", "use absolute paths"},
		{"whitespace collapsed", "  a   b\t\tc  \n\n\n\n d ", "a b c\n\nd"},
		{"crlf", "one\r\ntwo", "one\ntwo"},
		{"url untouched", "see https://example.com/just/maybe for details", "see https://example.com/just/maybe for details"},
		{"path untouched", "edit ./just/like.go please", "edit ./just/like.go please"},
		{"inline code untouched", "call `just maybe()` now", "call `just maybe()` now"},
		{"identifiers untouched", "set just_in_time and likeCount", "set just_in_time and likeCount"},
		{"justice is not just", "Justice matters", "Justice matters"},
		{"sentence middle", "Deploy it. Maybe tomorrow we test.", "Deploy it. Tomorrow we test."},
		{"empty", "", ""},
		{"only fluff", "um, you know, basically", ""},
		{"i mean", "I mean the port is 8080", "The port is 8080"},
		{"do not kept", "Do not use relative paths", "Do not use relative paths"},
		{"perhaps lower mid", "we perhaps need 2 replicas", "we need 2 replicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, extract.Normalize(tt.in))
		})
	}
}
