package extract_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/extract"
)

// shortNotes generates n deterministic short notes (10-25 words).
func shortNotes(n int) []string {
	rng := rand.New(rand.NewSource(42))
	subjects := []string{"The server", "I", "Our team", "The cache", "Postgres", "The API", "We"}
	verbs := []string{"listens on port 8080", "really prefer dark mode in VS Code", "deploys to Kubernetes on Fridays",
		"has a 30 second timeout", "should never use relative paths", "is written in Go", "calls policy.Parse from cmd/mnemo/main.go"}
	tails := []string{"basically.", "I think, for now.", "since v1.4.2 shipped.", "see https://example.com/runbook.", "ask @ada_l about #release.", "as Ada Lovelace said in London."}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s %s, %s", subjects[rng.Intn(len(subjects))], verbs[rng.Intn(len(verbs))], tails[rng.Intn(len(tails))])
	}
	return out
}

// markdownDoc generates a deterministic ~6 KB markdown document.
func markdownDoc() string {
	var b strings.Builder
	b.WriteString("Intro paragraph about mnemo and Neo4j.\n\n")
	for i := 0; i < 12; i++ {
		fmt.Fprintf(&b, "## Section %d\n\nThe server listens on port %d. Use absolute paths such as /srv/data/%d.\n", i, 8000+i, i)
		b.WriteString("Kubernetes runs the workers; see https://example.com/docs and call extract.ChunkMarkdown.\n\n")
		b.WriteString("```go\n# not a heading\nfmt.Println(\"hi\")\n```\n\n### Details\n\nMore text about PostgreSQL and v2.3.4 by @ada.\n\n")
	}
	return b.String()
}

func benchExtract(b *testing.B, x *extract.Extractor, texts []string) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		r := x.Extract(texts[i%len(texts)], extract.Hint{})
		lat = append(lat, time.Since(t0))
		if r.Key == "" {
			b.Fatal("empty key")
		}
	}
	b.StopTimer()
	stats.Report(b, lat)
}

// BenchmarkExtractShortNote is Normalize+Classify+Entities+Key per short
// note, with and without the name finder.
func BenchmarkExtractShortNote(b *testing.B) {
	p := defaultPolicy(b)
	notes := shortNotes(256)
	b.Run("ner=off", func(b *testing.B) { benchExtract(b, extract.NewExtractor(p, nil), notes) })
	b.Run("ner=on", func(b *testing.B) { benchExtract(b, extract.NewExtractor(p, extract.NewNER()), notes) })
}

// BenchmarkExtractMarkdownDoc is the same per ~6 KB markdown document, plus
// chunking.
func BenchmarkExtractMarkdownDoc(b *testing.B) {
	p := defaultPolicy(b)
	doc := markdownDoc()
	for _, ner := range []bool{false, true} {
		b.Run(fmt.Sprintf("ner=%v", map[bool]string{false: "off", true: "on"}[ner]), func(b *testing.B) {
			var n *extract.NER
			if ner {
				n = extract.NewNER()
			}
			x := extract.NewExtractor(p, n)
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = extract.ChunkMarkdown(doc)
				_ = x.Extract(doc, extract.Hint{Type: "document"})
			}
		})
	}
}

// BenchmarkExtractSize is the write path's extraction (Normalize, Classify,
// Entities with the name finder, Key) on notes of growing size; ms/KiB shows
// the cost is linear and what the largest accepted content costs. Run with
// -benchtime=1x: the 1 MiB case takes about a second.
func BenchmarkExtractSize(b *testing.B) {
	x := extract.NewExtractor(defaultPolicy(b), extract.NewNER())
	notes := shortNotes(512)
	for _, kib := range []int{1, 16, 256, 1024} {
		var sb strings.Builder
		for i := 0; sb.Len() < kib<<10; i++ {
			sb.WriteString(notes[i%len(notes)])
			sb.WriteString(" ")
		}
		text := sb.String()[:kib<<10]
		b.Run(fmt.Sprintf("kib=%d", kib), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				_ = x.Extract(text, extract.Hint{})
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(kib), "ms/KiB")
		})
	}
}
