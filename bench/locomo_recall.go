package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/extract"
	"github.com/mnemo-dev/mnemo/graph"
	"github.com/mnemo-dev/mnemo/graph/sqlite"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// LoCoMoKs are the cut-offs evidence recall is reported at.
var LoCoMoKs = []int{5, 10, 25}

// BaselineBM25 names the plain BM25 row of a report.
const BaselineBM25 = "bm25"

// LoCoMoOptions configures one run of the LoCoMo recall harness.
type LoCoMoOptions struct {
	// Convs keeps only these sample ids (empty: all).
	Convs []string
	// Modes are the search modes measured, besides the BM25 baseline.
	Modes []string
	// Embedder, when not nil, turns vectors on (it is not closed here).
	Embedder engine.Embedder
	// VectorCache, when set, is the directory vectors are cached in across
	// runs (see NewCachedEmbedder).
	VectorCache string
	// Policy is the policy searched under.
	Policy *policy.Policy
	// Dir holds the temporary stores.
	Dir string
	// Progress, when not nil, receives one line per stage.
	Progress io.Writer
	// Tick, when not nil, is told how far each stage is.
	Tick Tick
	// Depth is how many results each search asks for (default and
	// minimum 25, at most engine.MaxSearchLimit). Beyond 25 the token
	// budget is lifted, so that a rank past it is the ranking's, not the
	// display's. R@k is read from the same list: a search scores relevance
	// and decides abstention over its first Depth results, so a few
	// questions may answer that abstain at 25.
	Depth int
	// Ranks, when not nil, receives one JSON line per question and mode
	// (LoCoMoRanks): where each evidence turn ranked, for error analysis.
	Ranks io.Writer
}

// LoCoMoRanks is one line of LoCoMoOptions.Ranks: a question searched in
// one mode, and the 1-based rank of each of its evidence turns among the
// results (0: not among them).
type LoCoMoRanks struct {
	Conv      string         `json:"conv"`
	Question  string         `json:"question"`
	Category  string         `json:"category"`
	Mode      string         `json:"mode"`
	Abstained bool           `json:"abstained"`
	Evidence  map[string]int `json:"evidence"`
}

// locomoMetrics accumulates evidence R@k and nDCG@10 over questions.
type locomoMetrics struct {
	n      int
	recall map[int]float64
	ndcg   float64
}

func (m *locomoMetrics) add(ranked, evidence []string) {
	if m.recall == nil {
		m.recall = map[int]float64{}
	}
	m.n++
	if len(evidence) == 0 { // as the paper's evaluation: no evidence counts as found
		for _, k := range LoCoMoKs {
			m.recall[k]++
		}
		m.ndcg++
		return
	}
	for _, k := range LoCoMoKs {
		m.recall[k] += RecallAt(ranked, evidence, k)
	}
	rel := make(map[string]int, len(evidence))
	for _, e := range evidence {
		rel[e] = 1
	}
	m.ndcg += NDCG(ranked, rel, 10)
}

func (m *locomoMetrics) mean(k int) float64 {
	if m.n == 0 {
		return 0
	}
	return m.recall[k] / float64(m.n)
}

func (m *locomoMetrics) meanNDCG() float64 {
	if m.n == 0 {
		return 0
	}
	return m.ndcg / float64(m.n)
}

// LoCoMoReport holds, per system (a mode or bm25), metrics per category
// (0 is overall) and, per mode, the search latency.
type LoCoMoReport struct {
	Systems []string
	by      map[string]map[int]*locomoMetrics
	latency map[string]stats.Latency
}

func (r *LoCoMoReport) add(system string, category int, ranked, evidence []string) {
	if r.by == nil {
		r.by = map[string]map[int]*locomoMetrics{}
	}
	if r.by[system] == nil {
		r.by[system] = map[int]*locomoMetrics{}
		r.Systems = append(r.Systems, system)
	}
	for _, c := range []int{0, category} {
		if r.by[system][c] == nil {
			r.by[system][c] = &locomoMetrics{}
		}
		r.by[system][c].add(ranked, evidence)
	}
}

// Overall returns system's overall R@k.
func (r *LoCoMoReport) Overall(system string, k int) float64 {
	if m := r.by[system][0]; m != nil {
		return m.mean(k)
	}
	return 0
}

// Latency returns the search latency of mode (zero for bm25).
func (r *LoCoMoReport) Latency(system string) stats.Latency { return r.latency[system] }

var categoryNames = map[int]string{0: "overall", 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

// Write prints the report as markdown tables: one summary table with the
// search latency, then the metrics per category.
func (r *LoCoMoReport) Write(w io.Writer) {
	fmt.Fprintln(w, "| system | questions | R@5 | R@10 | R@25 | nDCG@10 | p50_ms | p95_ms | p99_ms |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, s := range r.Systems {
		m := r.by[s][0]
		fmt.Fprintf(w, "| %s | %d | %.3f | %.3f | %.3f | %.3f | %s |\n", s, m.n, m.mean(5), m.mean(10), m.mean(25), m.meanNDCG(), latencyCells(r.latency[s]))
	}
	fmt.Fprintln(w)
	fmt.Fprint(w, "| system | category | questions | R@5 | R@10 | R@25 | nDCG@10 |\n|---|---|---:|---:|---:|---:|---:|\n")
	for _, s := range r.Systems {
		for c := 1; c <= 5; c++ {
			m := r.by[s][c]
			if m == nil {
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %d | %.3f | %.3f | %.3f | %.3f |\n", s, categoryNames[c], m.n, m.mean(5), m.mean(10), m.mean(25), m.meanNDCG())
		}
	}
}

// locomoRow is one line of the report's JSON form.
type locomoRow struct {
	System    string          `json:"system"`
	Category  string          `json:"category"` // overall, multi-hop, temporal, ...
	Questions int             `json:"questions"`
	Recall    map[int]float64 `json:"recall"` // R@k by k
	NDCG10    float64         `json:"ndcg_10"`
	Latency   *stats.Latency  `json:"latency,omitempty"` // overall rows of the search modes
}

// MarshalJSON is the report as `mnemo bench recall --json` prints it: the
// rows of Write's two tables, overall first.
func (r *LoCoMoReport) MarshalJSON() ([]byte, error) {
	rows := []locomoRow{}
	for c := 0; c <= 5; c++ {
		for _, s := range r.Systems {
			m := r.by[s][c]
			if m == nil {
				continue
			}
			row := locomoRow{System: s, Category: categoryNames[c], Questions: m.n, Recall: map[int]float64{}, NDCG10: m.meanNDCG()}
			for _, k := range LoCoMoKs {
				row.Recall[k] = m.mean(k)
			}
			if l, ok := r.latency[s]; ok && c == 0 {
				row.Latency = &l
			}
			rows = append(rows, row)
		}
	}
	return json.Marshal(struct {
		Rows []locomoRow `json:"rows"`
	}{rows})
}

// benchTenant is the tenant every bench memory lives in.
const benchTenant = "bench"

// RunLoCoMo ingests the conversations into a fresh embedded store (one
// memory per turn, type episode, each conversation its own user and
// subject), then searches every question within its own conversation in
// each mode, and scores BM25 over the same turns. Questions are embedded
// before any search is timed, so the latency is the search's own.
func RunLoCoMo(ctx context.Context, convs []Conversation, o LoCoMoOptions) (*LoCoMoReport, error) {
	if len(o.Convs) > 0 {
		keep := convs[:0:0]
		for _, c := range convs {
			for _, id := range o.Convs {
				if c.ID == id {
					keep = append(keep, c)
				}
			}
		}
		convs = keep
	}
	if len(convs) == 0 {
		return nil, errors.New("no conversation selected")
	}
	depth, budget := max(o.Depth, 25), 0
	if depth > engine.MaxSearchLimit {
		return nil, fmt.Errorf("depth %d: at most %d", depth, engine.MaxSearchLimit)
	}
	if depth > 25 {
		budget = math.MaxInt32
	}
	var ranks *json.Encoder
	if o.Ranks != nil {
		ranks = json.NewEncoder(o.Ranks)
	}
	progress := func(format string, args ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, format+"\n", args...)
		}
	}
	store, err := sqlite.Open(ctx, filepath.Join(o.Dir, "graph"), sqlite.Options{})
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	defer store.Close()
	opts := engine.Options{Store: store, Policy: nil}
	var (
		idx    vector.Index // stays nil (not a typed nil) with vectors off
		cached *CachedEmbedder
	)
	if o.Embedder != nil {
		li, err := local.Open(filepath.Join(o.Dir, "vectors"), local.Options{Dimensions: o.Embedder.Dimensions()})
		if err != nil {
			return nil, fmt.Errorf("open vector index: %w", err)
		}
		defer li.Close()
		idx = li
		if cached, err = NewCachedEmbedder(o.Embedder, o.VectorCache); err != nil {
			return nil, fmt.Errorf("vector cache: %w", err)
		}
		defer func() {
			if err := cached.Save(); err != nil {
				progress("vector cache not saved: %v", err)
			}
		}()
		opts.Index, opts.Embedder = li, cached
	}
	eng, err := newEngine(opts, o.Policy)
	if err != nil {
		return nil, err
	}
	x := extract.NewExtractor(o.Policy, extract.NewNER())
	var turns, questions, done int
	for _, c := range convs {
		turns, questions = turns+len(c.Turns), questions+len(c.Questions)
	}
	o.Tick.at("ingest", 0, turns)
	for _, c := range convs {
		progress("ingest %s: %d turns", c.ID, len(c.Turns))
		if err := ingestConversation(ctx, store, idx, cached, x, c); err != nil {
			return nil, fmt.Errorf("ingest %s: %w", c.ID, err)
		}
		done += len(c.Turns)
		o.Tick.at("ingest", done, turns)
	}
	p := graph.Principal{ID: "bench", Roles: []string{"admin"}, Scope: graph.Scope{TenantID: benchTenant}}
	rep := &LoCoMoReport{latency: map[string]stats.Latency{}}
	for _, c := range convs {
		ids, texts := make([]string, len(c.Turns)), make([]string, len(c.Turns))
		for i, t := range c.Turns {
			ids[i], texts[i] = t.DiaID, turnText(t)
		}
		bm := NewBM25(ids, texts)
		for _, q := range c.Questions {
			rep.add(BaselineBM25, q.Category, bm.Search(q.Text, 25), q.Evidence)
		}
	}
	if cached != nil {
		for _, c := range convs {
			for _, q := range c.Questions {
				if _, err := cached.Embed(ctx, []string{q.Text}); err != nil {
					return nil, fmt.Errorf("embed question %q: %w", q.Text, err)
				}
			}
		}
	}
	for _, mode := range o.Modes {
		progress("search mode %s", mode)
		// One untimed search first: indexes and statements are built on
		// first use.
		if _, err := eng.Search(ctx, p, engine.SearchRequest{Query: "warm up", Mode: mode, Limit: 25, UserID: convs[0].ID}); err != nil {
			return nil, fmt.Errorf("search %s: %w", mode, err)
		}
		var lat []time.Duration
		for _, c := range convs {
			for _, q := range c.Questions {
				o.Tick.at("search "+mode, len(lat), questions)
				start := time.Now()
				resp, err := eng.Search(ctx, p, engine.SearchRequest{Query: q.Text, Mode: mode, Limit: depth, UserID: c.ID, TokenBudget: budget})
				lat = append(lat, time.Since(start))
				if err != nil {
					return nil, fmt.Errorf("search %s %q: %w", mode, q.Text, err)
				}
				ranked := make([]string, 0, len(resp.Results))
				for _, r := range resp.Results {
					ranked = append(ranked, strings.TrimPrefix(r.Memory.ID, c.ID+"."))
				}
				rep.add(mode, q.Category, ranked, q.Evidence)
				if ranks != nil {
					line := LoCoMoRanks{Conv: c.ID, Question: q.Text, Category: categoryNames[q.Category], Mode: mode,
						Abstained: resp.Abstained, Evidence: map[string]int{}}
					for _, ev := range q.Evidence {
						line.Evidence[ev] = slices.Index(ranked, ev) + 1
					}
					if err := ranks.Encode(line); err != nil {
						return nil, fmt.Errorf("ranks: %w", err)
					}
				}
			}
		}
		o.Tick.at("search "+mode, len(lat), questions)
		rep.latency[mode] = stats.Percentiles(lat)
	}
	return rep, nil
}

// turnText is a turn as stored: speaker and text.
func turnText(t locomoTurn) string { return t.Speaker + ": " + t.Text }

// ingestConversation writes one memory per turn (id "<conv>.<dia_id>") with
// the entities the extractor finds in the turn as stored, speaker label
// included, as the engine's write path extracts them from a memory's
// content (the label makes the speaker a person entity of the turn),
// straight through Store.CreateMemories: no canonical key, so no dedupe or
// supersession can collapse two turns. With vectors on, the turns are
// embedded and upserted.
func ingestConversation(ctx context.Context, store graph.Store, idx vector.Index, emb engine.Embedder, x *extract.Extractor, c Conversation) error {
	in := make([]graph.MemoryInput, 0, len(c.Turns))
	for _, t := range c.Turns {
		in = append(in, graph.MemoryInput{
			Memory: graph.Memory{
				ID: c.ID + "." + t.DiaID, Scope: graph.Scope{TenantID: benchTenant}, UserID: c.ID, Type: "episode",
				Layer: "World", Sublayer: "Event", SubjectType: "conversation", SubjectID: c.ID,
				SessionID: c.ID + "/" + turnSession(t.DiaID), Importance: 0.5, CreatedAt: t.At.UTC(), SourceKind: graph.SourceIngestedEvidence,
			},
			Version: graph.VersionInput{Content: turnText(t), IndexText: turnText(t), Entities: entityRefs(x, turnText(t))},
		})
	}
	created, err := store.CreateMemories(ctx, in)
	if err != nil {
		return err
	}
	if idx == nil {
		return nil
	}
	const batch = 64
	for i := 0; i < len(created); i += batch {
		if err := indexCreated(ctx, idx, emb, created[i:min(i+batch, len(created))]); err != nil {
			return err
		}
	}
	return nil
}

// newEngine opens an engine on opts under policy pol (opts.Policy is
// replaced).
func newEngine(opts engine.Options, pol *policy.Policy) (*engine.Engine, error) {
	holder, err := policy.NewHolder(pol)
	if err != nil {
		return nil, err
	}
	opts.Policy = holder
	return engine.New(opts)
}

// indexCreated embeds the content of memories just written and upserts
// them into idx with the payload the engine would give them.
func indexCreated(ctx context.Context, idx vector.Index, emb engine.Embedder, created []graph.Created) error {
	texts := make([]string, len(created))
	for j, cr := range created {
		texts[j] = cr.Version.Content
	}
	vecs, err := emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	pts := make([]vector.Point, len(created))
	for j, cr := range created {
		pts[j] = vector.Point{ID: cr.Memory.ID, Vector: vecs[j], Payload: engine.VectorPayload(cr.Memory, cr.Version.ID)}
	}
	return idx.Upsert(ctx, pts)
}

// turnSession is the session of a dialog id ("D3" of "D3:5"): the turns of
// one session are one session of the conversation's memories, so the store
// links each turn to the next (NEXT edges, which the graph walk follows).
func turnSession(diaID string) string {
	s, _, _ := strings.Cut(diaID, ":")
	return s
}
