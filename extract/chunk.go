package extract

import (
	"strconv"
	"strings"
)

// PreambleKey is the chunk key of the text before the first heading.
const PreambleKey = "(preamble)"

// Chunk is one section of a markdown document: the heading that opens it
// (none for the preamble) and everything up to the next heading, as byte
// offsets [Start, End) into the original text.
type Chunk struct {
	// Key is the heading path ("Install > Linux"), unique within the
	// document: a repeated path gets a " (2)", " (3)", ... suffix, which
	// its subsections inherit ("Install (2) > Linux").
	Key string
	// Level is the heading level 1-6, 0 for the preamble.
	Level int
	// Heading is the heading text.
	Heading string
	Start   int
	End     int
}

// ChunkMarkdown splits a markdown document into sections by ATX (# ...) and
// setext (underlined) headings; headings inside fenced code blocks do not
// count. The chunks tile the text exactly: concatenating text[Start:End]
// over the chunks gives the text back. A chunk's key depends only on the
// headings above it, so editing one section's body leaves every key as it
// was.
func ChunkMarkdown(text string) []Chunk {
	heads := headings(text)
	var chunks []Chunk
	if len(heads) == 0 || heads[0].start > 0 {
		end := len(text)
		if len(heads) > 0 {
			end = heads[0].start
		}
		if end > 0 {
			chunks = append(chunks, Chunk{Key: PreambleKey, Start: 0, End: end})
		}
	}
	type open struct {
		level int
		key   string
	}
	var stack []open // open headings, by increasing level
	issued := map[string]bool{PreambleKey: true}
	for i, h := range heads {
		for len(stack) > 0 && stack[len(stack)-1].level >= h.level {
			stack = stack[:len(stack)-1]
		}
		key := h.text
		if len(stack) > 0 {
			key = stack[len(stack)-1].key + " > " + h.text
		}
		if issued[key] {
			n := 2
			for issued[key+" ("+strconv.Itoa(n)+")"] {
				n++
			}
			key += " (" + strconv.Itoa(n) + ")"
		}
		issued[key] = true
		stack = append(stack, open{level: h.level, key: key})
		end := len(text)
		if i+1 < len(heads) {
			end = heads[i+1].start
		}
		chunks = append(chunks, Chunk{Key: key, Level: h.level, Heading: h.text, Start: h.start, End: end})
	}
	return chunks
}

type heading struct {
	level int
	text  string
	start int // byte offset of the heading's first line
}

// line is one line of the text without its terminator.
type line struct {
	start int
	text  string
}

func splitLines(text string) []line {
	var out []line
	for start := 0; start < len(text); {
		end := strings.IndexByte(text[start:], '\n')
		next := len(text)
		if end < 0 {
			end = len(text)
		} else {
			end += start
			next = end + 1
		}
		out = append(out, line{start: start, text: strings.TrimSuffix(text[start:end], "\r")})
		start = next
	}
	return out
}

// headings finds the document's headings in order.
func headings(text string) []heading {
	var out []heading
	var fence string // the open fence marker, "" outside code
	para := -1       // index of the first line of the open paragraph
	lines := splitLines(text)
	for i, l := range lines {
		if fence != "" {
			if closesFence(l.text, fence) {
				fence = ""
			}
			continue
		}
		if f := opensFence(l.text); f != "" {
			fence, para = f, -1
			continue
		}
		if level, txt, ok := atxHeading(l.text); ok {
			out = append(out, heading{level: level, text: txt, start: l.start})
			para = -1
			continue
		}
		if strings.TrimSpace(l.text) == "" {
			para = -1
			continue
		}
		if level := setextUnderline(l.text); level > 0 && para >= 0 {
			parts := make([]string, 0, i-para)
			for _, pl := range lines[para:i] {
				parts = append(parts, strings.TrimSpace(pl.text))
			}
			out = append(out, heading{level: level, text: cleanHeading(strings.Join(parts, " ")), start: lines[para].start})
			para = -1
			continue
		}
		if para < 0 && indent(l.text) < 4 && !blockStart(l.text) {
			para = i
		}
	}
	return out
}

func indent(s string) int {
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	return n
}

// atxHeading parses "## Title ##" with at most three spaces of indent.
func atxHeading(s string) (int, string, bool) {
	ind := indent(s)
	if ind > 3 {
		return 0, "", false
	}
	s = s[ind:]
	level := 0
	for level < len(s) && s[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(s) && s[level] != ' ' && s[level] != '\t') {
		return 0, "", false
	}
	body := strings.TrimSpace(s[level:])
	// Drop a closing sequence of #s preceded by a space (or the whole body).
	trimmed := strings.TrimRight(body, "#")
	if trimmed == "" || strings.HasSuffix(trimmed, " ") || strings.HasSuffix(trimmed, "\t") {
		body = strings.TrimSpace(trimmed)
	}
	return level, cleanHeading(body), true
}

func cleanHeading(s string) string { return strings.Join(strings.Fields(s), " ") }

// setextUnderline returns 1 for "===", 2 for "---", else 0.
func setextUnderline(s string) int {
	if indent(s) > 3 {
		return 0
	}
	t := strings.TrimSpace(s)
	if t == "" {
		return 0
	}
	switch strings.Trim(t, string(t[0])) {
	case "":
		switch t[0] {
		case '=':
			return 1
		case '-':
			return 2
		}
	}
	return 0
}

// blockStart reports lines that cannot begin a setext heading's paragraph:
// list items, block quotes, tables and thematic breaks.
func blockStart(s string) bool {
	t := strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(t, ">"), strings.HasPrefix(t, "|"):
		return true
	case len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t'):
		return true
	case t == "***" || t == "___":
		return true
	}
	return false
}

// opensFence returns the fence marker (``` or ~~~, possibly longer) that s
// opens, or "".
func opensFence(s string) string {
	if indent(s) > 3 {
		return ""
	}
	t := strings.TrimLeft(s, " ")
	for _, c := range []byte{'`', '~'} {
		n := 0
		for n < len(t) && t[n] == c {
			n++
		}
		if n >= 3 {
			if c == '`' && strings.IndexByte(t[n:], '`') >= 0 {
				return "" // a backtick fence's info string has no backticks
			}
			return t[:n]
		}
	}
	return ""
}

// closesFence reports whether s closes a block opened by fence.
func closesFence(s, fence string) bool {
	if indent(s) > 3 {
		return false
	}
	t := strings.TrimSpace(s)
	if len(t) < len(fence) {
		return false
	}
	return strings.Trim(t, fence[:1]) == ""
}
