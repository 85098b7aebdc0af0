package extract_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mnemo-dev/mnemo/extract"
)

const sampleDoc = `Intro text before any heading.

# Install

Run the installer.

## Linux
apt-get install mnemo

` + "```sh\n# not a heading\nmake\n```" + `

## macOS

brew install mnemo

Usage
=====

Call it.

Options
-------
--data-dir

## Linux

Linux again, a second section with the same path.

   ### Indented three is a heading #
    # indented four is code
#hashtag is not a heading
`

func TestChunkMarkdown(t *testing.T) {
	chunks := extract.ChunkMarkdown(sampleDoc)
	var keys []string
	for _, c := range chunks {
		keys = append(keys, c.Key)
	}
	assert.Equal(t, []string{
		"(preamble)",
		"Install",
		"Install > Linux",
		"Install > macOS",
		"Usage",
		"Usage > Options",
		"Usage > Linux",
		"Usage > Linux > Indented three is a heading",
	}, keys)
	requireTiles(t, sampleDoc, chunks)
	assert.True(t, strings.HasPrefix(sampleDoc[chunks[4].Start:chunks[4].End], "Usage\n=====\n"))
	assert.Equal(t, 1, chunks[4].Level)
	assert.Equal(t, 2, chunks[5].Level)
	assert.Contains(t, sampleDoc[chunks[2].Start:chunks[2].End], "# not a heading")
}

func TestChunkMarkdownCases(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"no headings", "just text\n", []string{"(preamble)"}},
		{"heading first", "# A\nx\n", []string{"A"}},
		{"duplicate paths get suffixes", "# A\n## B\n## B\n# A\n## B\n", []string{"A", "A > B", "A > B (2)", "A (2)", "A (2) > B"}},
		{"suffix never collides", "# A\n# A\n# A (2)\n# (preamble)\n", []string{"A", "A (2)", "A (2) (2)", "(preamble) (2)"}},
		{"skipped levels", "# A\n### C\n## B\n", []string{"A", "A > C", "A > B"}},
		{"closing hashes", "## Title ##\n", []string{"Title"}},
		{"empty heading", "#\ntext\n", []string{""}},
		{"tilde fence", "~~~\n# no\n~~~\n# yes\n", []string{"(preamble)", "yes"}},
		{"unclosed fence", "```\n# no\n", []string{"(preamble)"}},
		{"longer fence needs longer close", "````\n```\n# no\n````\n# yes\n", []string{"(preamble)", "yes"}},
		{"thematic break is not setext", "text\n\n---\nmore\n", []string{"(preamble)"}},
		{"multi-line setext", "first line\nsecond line\n---\n", []string{"first line second line"}},
		{"list item is not setext", "- item\n---\n", []string{"(preamble)"}},
		{"crlf", "# A\r\ntext\r\n## B\r\n", []string{"A", "A > B"}},
		{"seven hashes", "####### no\n", []string{"(preamble)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := extract.ChunkMarkdown(tt.in)
			var keys []string
			for _, c := range chunks {
				keys = append(keys, c.Key)
			}
			assert.Equal(t, tt.want, keys)
			requireTiles(t, tt.in, chunks)
		})
	}
}

// TestChunkKeysStableUnderEdit edits one section's body and checks that
// every other section keeps its key and its text.
func TestChunkKeysStableUnderEdit(t *testing.T) {
	before := extract.ChunkMarkdown(sampleDoc)
	edited := strings.Replace(sampleDoc, "brew install mnemo", "brew install mnemo\n\nand a much longer paragraph\nwith # hashes inside", 1)
	require.NotEqual(t, sampleDoc, edited)
	after := extract.ChunkMarkdown(edited)
	require.Len(t, after, len(before))
	for i := range before {
		assert.Equal(t, before[i].Key, after[i].Key)
		if before[i].Key == "Install > macOS" {
			assert.NotEqual(t, sampleDoc[before[i].Start:before[i].End], edited[after[i].Start:after[i].End])
			continue
		}
		assert.Equal(t, sampleDoc[before[i].Start:before[i].End], edited[after[i].Start:after[i].End], before[i].Key)
	}
}

func requireTiles(t *testing.T, text string, chunks []extract.Chunk) {
	t.Helper()
	var b strings.Builder
	pos := 0
	for _, c := range chunks {
		require.Equal(t, pos, c.Start, "chunk %q does not start where the previous ended", c.Key)
		require.Less(t, c.Start, c.End, "chunk %q is empty", c.Key)
		b.WriteString(text[c.Start:c.End])
		pos = c.End
	}
	require.Equal(t, text, b.String())
}

func FuzzChunkMarkdown(f *testing.F) {
	for _, s := range []string{sampleDoc, "", "#", "# A\n## B\n## B\n", "```\n# x", "a\n===\n", "\r\n#\r\n", "   ### x ###", "~~~~\n~~~\n", "- a\n---\n", "#\t\x00\n==\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		chunks := extract.ChunkMarkdown(s)
		var b strings.Builder
		pos := 0
		keys := map[string]bool{}
		for _, c := range chunks {
			if c.Start != pos || c.End <= c.Start || c.End > len(s) {
				t.Fatalf("bad chunk %+v at %d of %d", c, pos, len(s))
			}
			if keys[c.Key] {
				t.Fatalf("duplicate key %q", c.Key)
			}
			keys[c.Key] = true
			b.WriteString(s[c.Start:c.End])
			pos = c.End
		}
		if b.String() != s {
			t.Fatalf("chunks do not tile the input")
		}
	})
}
