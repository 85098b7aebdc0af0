package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/extract"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// The abstention bench asks two corpora two kinds of question: questions
// their memories answer, and questions on a topic they do not hold. Search
// should answer the first and abstain on the second:
//
//	memories            answerable                          absent topic
//	LoCoMo turns        LoCoMo questions with evidence      SciFact claims
//	                    (categories 1-4, own conversation)  (round robin over the conversations)
//	SciFact abstracts   SciFact test claims with qrels      the same LoCoMo questions
//
// Each corpus lives in its own tenant, so its keyword statistics are its own.

// AbstainOptions configures one run of the abstention bench.
type AbstainOptions struct {
	// Convs keeps only these LoCoMo sample ids (empty: all).
	Convs []string
	// Claims caps the SciFact claims asked of LoCoMo as absent topics
	// (0: every claim).
	Claims int
	// TestClaims caps the SciFact test claims asked of SciFact as
	// answerable (0: every test claim with qrels).
	TestClaims int
	// Abstracts caps the SciFact abstracts stored besides those the asked
	// test claims cite (0: the whole corpus).
	Abstracts int
	// Embedder turns vectors on (it is not closed here); nil measures
	// keyword and graph alone.
	Embedder engine.Embedder
	// Policy is the policy searched under.
	Policy *policy.Policy
	// Dir holds the temporary stores.
	Dir string
	// VectorCache, when set, is the directory RunAbstain keeps vectors in
	// across runs (NewCachedEmbedder).
	VectorCache string
	// Progress, when not nil, receives one line per stage.
	Progress io.Writer
	// Tick, when not nil, is told how far each stage is.
	Tick Tick
	// Dump, when not nil, receives one JSON line per question: its best
	// results and what each signal said of them (for calibration).
	Dump io.Writer
}

// abstainTenants: each corpus is its own tenant.
const (
	abstainLoCoMoTenant  = "locomo"
	abstainSciFactTenant = "scifact"
	abstainSciFactUser   = "scifact"
)

// AbstainGroup counts, for one kind of question on one corpus, how many
// questions search abstained on, and keeps each question's best confidence.
type AbstainGroup struct {
	Asked     int       `json:"asked"`
	Abstained int       `json:"abstained"`
	Best      []float64 `json:"best"` // best result's confidence per question (0 when abstained)
}

// Rate is the fraction of questions abstained on.
func (g *AbstainGroup) Rate() float64 {
	if g.Asked == 0 {
		return 0
	}
	return float64(g.Abstained) / float64(g.Asked)
}

func (g *AbstainGroup) add(resp engine.SearchResponse) {
	g.Asked++
	if resp.Abstained || len(resp.Results) == 0 {
		g.Abstained++
		g.Best = append(g.Best, 0)
		return
	}
	g.Best = append(g.Best, resp.Results[0].Confidence)
}

// AbstainPairing is one corpus with its answerable and absent questions.
type AbstainPairing struct {
	Corpus     string       `json:"corpus"`
	Answerable AbstainGroup `json:"answerable"`
	Absent     AbstainGroup `json:"absent"`
}

// AbstainReport holds both pairings.
type AbstainReport struct {
	Pairings []*AbstainPairing `json:"pairings"`
}

// write prints the rates and the spread of the best confidence.
func (r *AbstainReport) Write(w io.Writer) {
	fmt.Fprintln(w, "| memories | answerable asked | answerable abstained | absent asked | absent abstained |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, p := range r.Pairings {
		fmt.Fprintf(w, "| %s | %d | %.1f%% | %d | %.1f%% |\n", p.Corpus, p.Answerable.Asked, 100*p.Answerable.Rate(),
			p.Absent.Asked, 100*p.Absent.Rate())
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "best result's confidence (0 when abstained), percentiles p1 / p5 / p50 / p95 / p99:")
	for _, p := range r.Pairings {
		for _, g := range []struct {
			name string
			g    *AbstainGroup
		}{{"answerable", &p.Answerable}, {"absent", &p.Absent}} {
			fmt.Fprintf(w, "  %-8s %-10s %s\n", p.Corpus, g.name, abstainPercentiles(g.g.Best))
		}
	}
}

func abstainPercentiles(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(p float64) float64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	return fmt.Sprintf("%.3f / %.3f / %.3f / %.3f / %.3f", at(0.01), at(0.05), at(0.5), at(0.95), at(0.99))
}

// abstainQuestion is one question asked in the bench.
type abstainQuestion struct {
	Text     string
	Relevant []string // memory ids that answer it (answerable questions)
}

// RunAbstain reads the LoCoMo bench file and the SciFact directory and runs
// the bench on them (runAbstain). With o.VectorCache set, the vectors of
// every text embedded are kept there across runs.
func RunAbstain(ctx context.Context, locomoFile, sciFactDir string, o AbstainOptions) (*AbstainReport, error) {
	convs, err := LoadLoCoMo(locomoFile)
	if err != nil {
		return nil, err
	}
	corpus, err := readJSONL(filepath.Join(sciFactDir, "corpus.jsonl"))
	if err != nil {
		return nil, err
	}
	claims, err := readJSONL(filepath.Join(sciFactDir, "queries.jsonl"))
	if err != nil {
		return nil, err
	}
	qrels, err := readQrels(filepath.Join(sciFactDir, "qrels", "test.tsv"))
	if err != nil {
		return nil, err
	}
	if o.Embedder != nil {
		cached, err := NewCachedEmbedder(o.Embedder, o.VectorCache)
		if err != nil {
			return nil, err
		}
		o.Embedder = cached
		defer func() {
			if err := cached.Save(); err != nil && o.Progress != nil {
				fmt.Fprintf(o.Progress, "vector cache %s: %v\n", o.VectorCache, err)
			}
		}()
	}
	return runAbstain(ctx, convs, corpus, claims, qrels, o)
}

// runAbstain stores LoCoMo's turns and SciFact's abstracts in a fresh
// embedded store and asks each corpus its answerable and its absent-topic
// questions under o.Policy.
func runAbstain(ctx context.Context, convs []Conversation, corpus, claims []beirDoc, qrels map[string]map[string]int, o AbstainOptions) (*AbstainReport, error) {
	if len(o.Convs) > 0 {
		convs = slices.DeleteFunc(slices.Clone(convs), func(c Conversation) bool { return !slices.Contains(o.Convs, c.ID) })
	}
	if len(convs) == 0 {
		return nil, errors.New("no conversation selected")
	}
	progress := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, format+"\n", args...)
		}
	}
	// The questions: answerable LoCoMo questions per conversation, SciFact
	// test claims with qrels, and every claim as an absent topic.
	var locomoQs [][]abstainQuestion
	for _, c := range convs {
		var qs []abstainQuestion
		for _, q := range c.Questions {
			if q.Category >= 1 && q.Category <= 4 && len(q.Evidence) > 0 {
				rel := make([]string, len(q.Evidence))
				for i, e := range q.Evidence {
					rel[i] = c.ID + "." + e
				}
				qs = append(qs, abstainQuestion{Text: q.Text, Relevant: rel})
			}
		}
		locomoQs = append(locomoQs, qs)
	}
	var tested []abstainQuestion
	cited := map[string]bool{}
	for _, q := range claims {
		rel, ok := qrels[q.ID]
		if !ok || o.TestClaims > 0 && len(tested) == o.TestClaims {
			continue
		}
		var ids []string
		for id := range rel {
			ids = append(ids, "sf."+id)
			cited[id] = true
		}
		slices.Sort(ids)
		tested = append(tested, abstainQuestion{Text: q.Text, Relevant: ids})
	}
	absentClaims := claims
	if o.Claims > 0 {
		absentClaims = claims[:min(o.Claims, len(claims))]
	}
	var docs []beirDoc
	others := 0
	for _, d := range corpus {
		if cited[d.ID] {
			docs = append(docs, d)
		} else if o.Abstracts == 0 || others < o.Abstracts {
			docs = append(docs, d)
			others++
		}
	}

	store, err := sqlite.Open(ctx, filepath.Join(o.Dir, "graph"), sqlite.Options{})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	defer store.Close()
	opts := engine.Options{Store: store}
	var idx vector.Index // stays nil (not a typed nil) with vectors off
	if o.Embedder != nil {
		li, err := local.Open(filepath.Join(o.Dir, "vectors"), local.Options{Dimensions: o.Embedder.Dimensions()})
		if err != nil {
			return nil, fmt.Errorf("open vector index: %w", err)
		}
		defer li.Close()
		idx = li
		opts.Index, opts.Embedder = li, o.Embedder
	}
	eng, err := newEngine(opts, o.Policy)
	if err != nil {
		return nil, err
	}
	x := extract.NewExtractor(o.Policy, extract.NewNER())
	for _, c := range convs {
		progress("ingest %s: %d turns", c.ID, len(c.Turns))
		if err := abstainIngest(ctx, store, idx, o.Embedder, conversationInputs(x, c), progress); err != nil {
			return nil, fmt.Errorf("ingest %s: %w", c.ID, err)
		}
	}
	progress("ingest SciFact: %d abstracts", len(docs))
	if err := abstainIngest(ctx, store, idx, o.Embedder, abstractInputs(x, docs), progress); err != nil {
		return nil, fmt.Errorf("ingest SciFact: %w", err)
	}

	// The two stages of questions, for Tick: asked of total.
	var stage string
	var asked, total, locomoAsked int
	for _, qs := range locomoQs {
		locomoAsked += len(qs)
	}
	ask := func(g *AbstainGroup, corpus, kind string, tenant, user string, q abstainQuestion) error {
		asked++
		o.Tick.at(stage, asked, total)
		p := graph.Principal{ID: "bench", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: tenant}}
		resp, err := eng.Search(ctx, p, engine.SearchRequest{Query: q.Text, Limit: 10, UserID: user})
		if err != nil {
			return fmt.Errorf("search %q: %w", q.Text, err)
		}
		g.add(resp)
		if o.Dump != nil {
			return abstainDump(o.Dump, corpus, kind, q, resp)
		}
		return nil
	}
	locomo := &AbstainPairing{Corpus: "LoCoMo"}
	scifact := &AbstainPairing{Corpus: "SciFact"}
	progress("ask LoCoMo its questions and SciFact's claims")
	stage, asked, total = "ask LoCoMo", 0, locomoAsked+len(absentClaims)
	for i, c := range convs {
		for _, q := range locomoQs[i] {
			if err := ask(&locomo.Answerable, "locomo", "answerable", abstainLoCoMoTenant, c.ID, q); err != nil {
				return nil, err
			}
		}
	}
	for i, q := range absentClaims {
		c := convs[i%len(convs)]
		if err := ask(&locomo.Absent, "locomo", "absent", abstainLoCoMoTenant, c.ID, abstainQuestion{Text: q.Text}); err != nil {
			return nil, err
		}
	}
	progress("ask SciFact its test claims and LoCoMo's questions")
	stage, asked, total = "ask SciFact", 0, len(tested)+locomoAsked
	for _, q := range tested {
		if err := ask(&scifact.Answerable, "scifact", "answerable", abstainSciFactTenant, abstainSciFactUser, q); err != nil {
			return nil, err
		}
	}
	for _, qs := range locomoQs {
		for _, q := range qs {
			if err := ask(&scifact.Absent, "scifact", "absent", abstainSciFactTenant, abstainSciFactUser, abstainQuestion{Text: q.Text}); err != nil {
				return nil, err
			}
		}
	}
	return &AbstainReport{Pairings: []*AbstainPairing{locomo, scifact}}, nil
}

// conversationInputs makes one memory per turn (id "<conv>.<dia_id>"),
// as the recall bench stores them, in tenant locomo.
func conversationInputs(x *extract.Extractor, c Conversation) []graph.MemoryInput {
	in := make([]graph.MemoryInput, 0, len(c.Turns))
	for _, t := range c.Turns {
		in = append(in, graph.MemoryInput{
			Memory: graph.Memory{
				ID: c.ID + "." + t.DiaID, Scope: graph.Scope{TenantID: abstainLoCoMoTenant}, UserID: c.ID, Type: "episode",
				Layer: "World", Sublayer: "Event", SubjectType: "conversation", SubjectID: c.ID,
				Importance: 0.5, CreatedAt: t.At.UTC(), SourceKind: graph.SourceIngestedEvidence,
			},
			Version: graph.VersionInput{Content: turnText(t), IndexText: turnText(t), Entities: entityRefs(x, turnText(t))},
		})
	}
	return in
}

// abstractInputs makes one note per abstract (id "sf.<doc id>", content
// "title\ntext"), in tenant scifact.
func abstractInputs(x *extract.Extractor, docs []beirDoc) []graph.MemoryInput {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	in := make([]graph.MemoryInput, 0, len(docs))
	for i, d := range docs {
		text := strings.TrimSpace(d.Title + "\n" + d.Text)
		in = append(in, graph.MemoryInput{
			Memory: graph.Memory{
				ID: "sf." + d.ID, Scope: graph.Scope{TenantID: abstainSciFactTenant}, UserID: abstainSciFactUser, Type: "note",
				Layer: "World", Sublayer: "Fact", Importance: 0.5, CreatedAt: at.Add(time.Duration(i) * time.Second),
				SourceKind: graph.SourceIngestedEvidence,
			},
			Version: graph.VersionInput{Content: text, IndexText: text, Entities: entityRefs(x, text)},
		})
	}
	return in
}

// entityRefs are the entities the extractor finds in text, the first
// reference per norm name.
func entityRefs(x *extract.Extractor, text string) []graph.EntityRef {
	var refs []graph.EntityRef
	seen := map[string]bool{}
	for _, m := range x.Entities(text) {
		n := m.NormName
		if n == "" {
			n = graph.NormName(m.Name)
		}
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		refs = append(refs, graph.EntityRef{Name: m.Name, NormName: m.NormName, Type: m.Type, Aliases: m.Aliases})
	}
	return refs
}

// abstainIngest writes the memories straight through Store.CreateMemories
// (no canonical key: nothing dedupes or supersedes) and, with vectors on,
// embeds and upserts them.
func abstainIngest(ctx context.Context, store graph.Store, idx vector.Index, emb engine.Embedder, in []graph.MemoryInput, progress func(string, ...any)) error {
	const batch = 64
	for i := 0; i < len(in); i += batch {
		if i > 0 && i%(16*batch) == 0 {
			progress("  %d/%d", i, len(in))
		}
		created, err := store.CreateMemories(ctx, in[i:min(i+batch, len(in))])
		if err != nil {
			return err
		}
		if idx == nil {
			continue
		}
		if err := indexCreated(ctx, idx, emb, created); err != nil {
			return err
		}
	}
	return nil
}

// abstainDumpLine is one question in the dump.
type abstainDumpLine struct {
	Corpus    string             `json:"corpus"`
	Kind      string             `json:"kind"`
	Query     string             `json:"query"`
	Relevant  []string           `json:"relevant,omitempty"`
	Abstained bool               `json:"abstained"`
	Results   []abstainDumpEntry `json:"results"`
}

type abstainDumpEntry struct {
	ID         string                       `json:"id"`
	Confidence float64                      `json:"confidence"`
	Signals    map[string]engine.SignalRank `json:"signals"`
	Content    string                       `json:"content"`
}

func abstainDump(w io.Writer, corpus, kind string, q abstainQuestion, resp engine.SearchResponse) error {
	line := abstainDumpLine{Corpus: corpus, Kind: kind, Query: q.Text, Relevant: q.Relevant, Abstained: resp.Abstained}
	for _, r := range resp.Results {
		line.Results = append(line.Results, abstainDumpEntry{ID: r.Memory.ID, Confidence: r.Confidence, Signals: r.Signals, Content: r.Content})
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
