package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// MultihopKs are the cut-offs passage recall is reported at (HippoRAG's).
var MultihopKs = []int{2, 5}

// MultihopSet is one multi-hop set of the shared bench data
// (multihop/{musique,hotpotqa}-dev.json): a corpus of passages and
// questions naming the passages that support them.
type MultihopSet struct {
	Name      string             `json:"name"`
	Source    string             `json:"source"`
	License   string             `json:"license"`
	Corpus    []Passage          `json:"corpus"`
	Questions []MultihopQuestion `json:"questions"`
}

// Passage is one corpus passage, stored as one memory.
type Passage struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Content is the passage as stored: title, newline, text.
func (p Passage) Content() string { return p.Title + "\n" + p.Text }

// MultihopQuestion is one question and the ids of its supporting passages.
type MultihopQuestion struct {
	ID         string   `json:"id"`
	Question   string   `json:"question"`
	Supporting []string `json:"supporting"`
	Answer     string   `json:"answer"`
}

// LoadMultihop reads one multi-hop set and checks that every supporting
// passage is in its corpus.
func LoadMultihop(path string) (*MultihopSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s MultihopSet
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ids := make(map[string]bool, len(s.Corpus))
	for _, p := range s.Corpus {
		if ids[p.ID] {
			return nil, fmt.Errorf("%s: passage id %s appears twice", path, p.ID)
		}
		ids[p.ID] = true
	}
	for _, q := range s.Questions {
		for _, id := range q.Supporting {
			if !ids[id] {
				return nil, fmt.Errorf("%s: question %s names passage %s, which is not in the corpus", path, q.ID, id)
			}
		}
	}
	if s.Name == "" {
		s.Name = filepath.Base(path)
	}
	return &s, nil
}

// Subset keeps the first n questions and the corpus up to their last
// supporting passage plus pad more passages. The shared sets list each
// question's paragraphs together, in question order (HotpotQA's ten per
// question: two supporting, eight distractors chosen to be hard), so the
// prefix holds the kept questions' own distractors: a small set for tests
// on which search still has to choose.
func (s *MultihopSet) Subset(n, pad int) *MultihopSet {
	out := *s
	out.Questions = s.Questions[:min(n, len(s.Questions))]
	at := make(map[string]int, len(s.Corpus))
	for i, p := range s.Corpus {
		at[p.ID] = i
	}
	last := -1
	for _, q := range out.Questions {
		for _, id := range q.Supporting {
			last = max(last, at[id])
		}
	}
	out.Corpus = s.Corpus[:min(last+1+pad, len(s.Corpus))]
	return &out
}

// Variant is a policy searched under, named in the report.
type Variant struct {
	// Name labels the variant's rows ("" for the base policy).
	Name   string
	Policy *policy.Policy
}

// MultihopOptions configures one run of the multi-hop harness.
type MultihopOptions struct {
	// Modes are the search modes measured.
	Modes []string
	// Policy is the policy passages are ingested under, and the base
	// variant searched under.
	Policy *policy.Policy
	// Variants are further policies every mode is searched under, over the
	// same ingested store (retrieval knobs only: ingest used Policy).
	Variants []Variant
	// BM25 adds a plain BM25 row over the same passages (title + text).
	BM25 bool
	// TopK is the search limit (at least the largest of MultihopKs).
	TopK int
	// Embedder, when not nil, turns vectors on (it is not closed here).
	Embedder engine.Embedder
	// VectorCache, when set, is the directory vectors are cached in across
	// runs (see NewCachedEmbedder): a rerun embeds only new texts.
	VectorCache string
	// Dir holds the temporary stores.
	Dir string
	// Progress, when not nil, receives one line per stage and the
	// engine's warnings.
	Progress io.Writer
	// Tick, when not nil, is told how far each stage is.
	Tick Tick
}

// MultihopRow is one system's figures on one set.
type MultihopRow struct {
	Set string `json:"set"`
	// System is the mode (or bm25), with the variant's name after it.
	System    string `json:"system"`
	Questions int    `json:"questions"`
	// Recall maps k to passage recall@k averaged over questions.
	Recall  map[int]float64 `json:"recall"`
	Latency stats.Latency   `json:"latency"`
}

// MultihopReport is one run over one or more sets.
type MultihopReport struct {
	Rows []MultihopRow `json:"rows"`
	// Ingest says, per set, how many passages were ingested and how long
	// it took (graph write, extraction and embeddings).
	Ingest []IngestStat `json:"ingest"`
}

// IngestStat is how one set was ingested.
type IngestStat struct {
	Set      string        `json:"set"`
	Passages int           `json:"passages"`
	Took     time.Duration `json:"took_ns"`
	// Written counts the passages stored as a memory of their own; the
	// rest were reinforced or refused by the write path (named on the
	// progress writer).
	Written int `json:"written"`
	// Superseded counts the written passages the write path took for an
	// update of an earlier one, which it then superseded: the earlier
	// passage is no longer searched.
	Superseded int `json:"superseded"`
}

// Recall returns the row's recall@k for set and system, and whether the
// row exists.
func (r *MultihopReport) Recall(set, system string, k int) (float64, bool) {
	for _, row := range r.Rows {
		if row.Set == set && row.System == system {
			v, ok := row.Recall[k]
			return v, ok
		}
	}
	return 0, false
}

// Write prints the report as a markdown table.
func (r *MultihopReport) Write(w io.Writer) {
	fmt.Fprintln(w, "| set | system | questions | R@2 | R@5 | p50_ms | p95_ms | p99_ms |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "| %s | %s | %d | %.3f | %.3f | %s |\n", row.Set, row.System, row.Questions, row.Recall[2], row.Recall[5], latencyCells(row.Latency))
	}
	fmt.Fprintln(w)
	for _, in := range r.Ingest {
		fmt.Fprintf(w, "%s: %d passages ingested in %s (%.0f/s); %d written as memories of their own, %d of which superseded an earlier passage\n",
			in.Set, in.Passages, in.Took.Round(10*time.Millisecond), float64(in.Passages)/in.Took.Seconds(), in.Written, in.Superseded)
	}
}

// multihopTenant is the tenant every multi-hop memory lives in; each set is
// its own user.
const multihopTenant = "bench"

// ingestBatch is how many passages one IngestBatch call carries.
const ingestBatch = 100

// RunMultihop ingests each set into a fresh embedded store through the
// engine's write path (IngestBatch: classification, extraction, graph
// write, embeddings; one memory of type note per passage, content
// "title\ntext", one user per set), then searches every question within
// its set in each mode under each variant, scoring passage recall@2 and
// @5 of the supporting passages (as HippoRAG) and the search latency.
func RunMultihop(ctx context.Context, sets []*MultihopSet, o MultihopOptions) (*MultihopReport, error) {
	if len(sets) == 0 {
		return nil, errors.New("no multi-hop set selected")
	}
	if o.Policy == nil {
		return nil, errors.New("a policy is required")
	}
	if o.TopK == 0 {
		o.TopK = 5
	}
	if o.TopK < MultihopKs[len(MultihopKs)-1] {
		return nil, fmt.Errorf("top_k must be at least %d, got %d", MultihopKs[len(MultihopKs)-1], o.TopK)
	}
	progress := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, format+"\n", args...)
		}
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if o.Progress != nil {
		logger = slog.New(slog.NewTextHandler(o.Progress, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	variants := append([]Variant{{Policy: o.Policy}}, o.Variants...)
	var emb *CachedEmbedder
	if o.Embedder != nil {
		var err error
		if emb, err = NewCachedEmbedder(o.Embedder, o.VectorCache); err != nil {
			return nil, fmt.Errorf("vector cache: %w", err)
		}
	}
	rep := &MultihopReport{}
	for si, set := range sets {
		dir := filepath.Join(o.Dir, fmt.Sprintf("set%d", si))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		err := runMultihopSet(ctx, set, dir, variants, emb, o, logger, progress, rep)
		if emb != nil {
			if serr := emb.Save(); serr != nil {
				progress("vector cache not saved: %v", serr)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", set.Name, err)
		}
	}
	return rep, nil
}

func runMultihopSet(ctx context.Context, set *MultihopSet, dir string, variants []Variant, emb *CachedEmbedder, o MultihopOptions,
	logger *slog.Logger, progress func(string, ...any), rep *MultihopReport) error {
	store, err := sqlite.Open(ctx, filepath.Join(dir, "graph"), sqlite.Options{})
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer store.Close()
	base := engine.Options{Store: store, Logger: logger}
	if emb != nil {
		li, err := local.Open(filepath.Join(dir, "vectors"), local.Options{Dimensions: o.Embedder.Dimensions()})
		if err != nil {
			return fmt.Errorf("open vector index: %w", err)
		}
		defer li.Close()
		base.Index, base.Embedder = li, emb
	} else {
		base.VectorsOff = true
	}
	engines := make([]*engine.Engine, len(variants))
	for i, v := range variants {
		var err error
		if engines[i], err = newEngine(base, v.Policy); err != nil {
			return err
		}
	}
	p := graph.Principal{ID: "bench", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: multihopTenant}}

	progress("%s: ingest %d passages", set.Name, len(set.Corpus))
	passageOf, stat, err := ingestPassages(ctx, engines[0], p, set, progress, o.Tick)
	if err != nil {
		return err
	}
	rep.Ingest = append(rep.Ingest, stat)

	if o.BM25 {
		ids, texts := make([]string, len(set.Corpus)), make([]string, len(set.Corpus))
		for i, c := range set.Corpus {
			ids[i], texts[i] = c.ID, c.Title+" "+c.Text
		}
		bm := NewBM25(ids, texts)
		row := newRecallRow(set.Name, BaselineBM25)
		for _, q := range set.Questions {
			row.add(bm.Search(q.Question, o.TopK), q.Supporting)
		}
		rep.Rows = append(rep.Rows, row.done(nil))
	}
	if emb != nil { // embed every question up front: latency is the search's own
		for _, q := range set.Questions {
			if _, err := emb.Embed(ctx, []string{q.Question}); err != nil {
				return fmt.Errorf("embed question %s: %w", q.ID, err)
			}
		}
	}
	for _, mode := range o.Modes {
		for vi, v := range variants {
			name := mode
			if v.Name != "" {
				name += " " + v.Name
			}
			progress("%s: search %s", set.Name, name)
			eng := engines[vi]
			req := func(q string) engine.SearchRequest {
				return engine.SearchRequest{Query: q, Mode: mode, Limit: o.TopK, UserID: set.Name}
			}
			// One untimed search first: the keyword index and the
			// store's statements are built on first use.
			if _, err := eng.Search(ctx, p, req(set.Questions[0].Question)); err != nil {
				return fmt.Errorf("search %s: %w", name, err)
			}
			row := newRecallRow(set.Name, name)
			lat := make([]time.Duration, 0, len(set.Questions))
			for _, q := range set.Questions {
				o.Tick.at(set.Name+": search "+name, len(lat), len(set.Questions))
				start := time.Now()
				resp, err := eng.Search(ctx, p, req(q.Question))
				lat = append(lat, time.Since(start))
				if err != nil {
					return fmt.Errorf("search %s %q: %w", name, q.Question, err)
				}
				var ranked []string
				for _, r := range resp.Results {
					ranked = append(ranked, passageOf[r.Memory.ID]...)
				}
				row.add(ranked, q.Supporting)
			}
			o.Tick.at(set.Name+": search "+name, len(lat), len(set.Questions))
			rep.Rows = append(rep.Rows, row.done(lat))
		}
	}
	return nil
}

// ingestPassages writes one note per passage through IngestBatch and
// returns the passage ids of each memory (two passages with the same
// content would share one).
func ingestPassages(ctx context.Context, eng *engine.Engine, p graph.Principal, set *MultihopSet, progress func(string, ...any), tick Tick) (map[string][]string, IngestStat, error) {
	passageOf := make(map[string][]string, len(set.Corpus))
	stat := IngestStat{Set: set.Name, Passages: len(set.Corpus)}
	start := time.Now()
	tick.at(set.Name+": ingest", 0, len(set.Corpus))
	for i := 0; i < len(set.Corpus); i += ingestBatch {
		part := set.Corpus[i:min(i+ingestBatch, len(set.Corpus))]
		reqs := make([]engine.IngestRequest, len(part))
		for j, c := range part {
			reqs[j] = engine.IngestRequest{Type: "note", Content: c.Content(), UserID: set.Name, SourceKind: graph.SourceIngestedEvidence}
		}
		res, err := eng.IngestBatch(ctx, p, reqs)
		if err != nil {
			return nil, stat, fmt.Errorf("ingest passages %d-%d: %w", i, i+len(part)-1, err)
		}
		tick.at(set.Name+": ingest", i+len(part), len(set.Corpus))
		for j, r := range res {
			switch r.Status {
			case engine.StatusApproved:
				stat.Written++
			case engine.StatusSuperseded:
				stat.Written++
				stat.Superseded++
				progress("%s: passage %s superseded passage %v (memory %s): %s", set.Name, part[j].ID, passageOf[r.Supersedes], r.Supersedes, r.Integrity)
			default:
				why := r.Integrity
				if why == "" {
					why = r.Reason
				}
				progress("%s: passage %s %s (memory %s of passages %v): %s", set.Name, part[j].ID, r.Status, r.ID, passageOf[r.ID], why)
			}
			if r.ID != "" {
				passageOf[r.ID] = append(passageOf[r.ID], part[j].ID)
			}
		}
	}
	stat.Took = time.Since(start)
	return passageOf, stat, nil
}

// recallRow accumulates passage recall@k over questions.
type recallRow struct {
	row MultihopRow
	sum map[int]float64
}

func newRecallRow(set, system string) *recallRow {
	return &recallRow{row: MultihopRow{Set: set, System: system}, sum: map[int]float64{}}
}

// add scores one question: for each k, the fraction of its supporting
// passages among the first k ranked (a question with none counts as 1).
func (r *recallRow) add(ranked, supporting []string) {
	r.row.Questions++
	for _, k := range MultihopKs {
		r.sum[k] += RecallAt(ranked, supporting, k)
	}
}

func (r *recallRow) done(lat []time.Duration) MultihopRow {
	r.row.Recall = map[int]float64{}
	for _, k := range MultihopKs {
		if r.row.Questions > 0 {
			r.row.Recall[k] = r.sum[k] / float64(r.row.Questions)
		}
	}
	r.row.Latency = stats.Percentiles(lat)
	return r.row
}
