package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/bench/stats"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// SciFactReport is one run of the SciFact harness.
type SciFactReport struct {
	Model string `json:"model"`
	// Abstracts were embedded in Indexed (all of them, or only those not
	// in the vector cache).
	Abstracts int           `json:"abstracts"`
	Indexed   time.Duration `json:"indexed_ns"`
	// Queries is the number of test claims with qrels; NDCG10 their mean
	// nDCG@10.
	Queries int     `json:"queries"`
	NDCG10  float64 `json:"ndcg_10"`
	// Latency is that of one query: embedding the claim and searching the
	// index.
	Latency stats.Latency `json:"latency"`
}

// Write prints the report as a markdown table.
func (r *SciFactReport) Write(w io.Writer) {
	fmt.Fprintln(w, "| model | abstracts | queries | nDCG@10 | p50_ms | p95_ms | p99_ms |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|")
	fmt.Fprintf(w, "| %s | %d | %d | %.4f | %s |\n", r.Model, r.Abstracts, r.Queries, r.NDCG10, latencyCells(r.Latency))
	fmt.Fprintf(w, "\n%d abstracts indexed in %s\n", r.Abstracts, r.Indexed.Round(time.Second))
}

// RunSciFact measures the embedder and the embedded vector index on
// SciFact (BEIR format, in dir): every abstract (title + text) is embedded
// into a temporary vector/local index under tmp, every test claim searches
// it, and nDCG@10 over the test qrels is returned. With vectorCache set,
// abstract vectors are cached across runs (see NewCachedEmbedder); claims
// are always embedded, as their latency includes it. tick is told how far
// the two stages are (abstracts embedded, claims searched); progress gets
// what is worth a line of its own (a vector cache that was not saved).
func RunSciFact(ctx context.Context, dir, tmp string, emb engine.Embedder, vectorCache string, progress io.Writer, tick Tick) (*SciFactReport, error) {
	corpus, err := readJSONL(filepath.Join(dir, "corpus.jsonl"))
	if err != nil {
		return nil, err
	}
	queries, err := readJSONL(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return nil, err
	}
	qrels, err := readQrels(filepath.Join(dir, "qrels", "test.tsv"))
	if err != nil {
		return nil, err
	}
	idx, err := local.Open(tmp, local.Options{Dimensions: emb.Dimensions()})
	if err != nil {
		return nil, err
	}
	defer idx.Close()
	cached, err := NewCachedEmbedder(emb, vectorCache)
	if err != nil {
		return nil, fmt.Errorf("vector cache: %w", err)
	}

	start := time.Now()
	const batch = 32
	for i := 0; i < len(corpus); i += batch {
		docs := corpus[i:min(i+batch, len(corpus))]
		texts := make([]string, len(docs))
		for j, d := range docs {
			texts[j] = strings.TrimSpace(d.Title + " " + d.Text)
		}
		vecs, err := cached.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		pts := make([]vector.Point, len(docs))
		for j, d := range docs {
			pts[j] = vector.Point{ID: d.ID, Vector: vecs[j], Payload: vector.Payload{TenantID: "scifact", Type: "document"}}
		}
		if err := idx.Upsert(ctx, pts); err != nil {
			return nil, err
		}
		tick.at("embed abstracts", i+len(docs), len(corpus))
	}
	if err := cached.Save(); err != nil && progress != nil {
		fmt.Fprintf(progress, "vector cache not saved: %v\n", err)
	}
	rep := &SciFactReport{Model: emb.ModelID(), Abstracts: len(corpus), Indexed: time.Since(start)}

	var (
		sum float64
		lat []time.Duration
	)
	tested := 0
	for _, q := range queries {
		if _, ok := qrels[q.ID]; ok {
			tested++
		}
	}
	for _, q := range queries {
		rel, ok := qrels[q.ID]
		if !ok {
			continue
		}
		t0 := time.Now()
		vecs, err := emb.Embed(ctx, []string{q.Text})
		if err != nil {
			return nil, err
		}
		hits, err := idx.Search(ctx, vecs[0], vector.Filter{TenantID: "scifact", AllUsers: true, Subscopes: true}, 10)
		if err != nil {
			return nil, err
		}
		lat = append(lat, time.Since(t0))
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		sum += NDCG(ids, rel, 10)
		tick.at("search", len(lat), tested)
	}
	if len(lat) == 0 {
		return nil, errors.New("no test query has qrels")
	}
	rep.Queries, rep.NDCG10, rep.Latency = len(lat), sum/float64(len(lat)), stats.Percentiles(lat)
	return rep, nil
}

type beirDoc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

func readJSONL(path string) ([]beirDoc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []beirDoc
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var d beirDoc
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, d)
	}
	return out, sc.Err()
}

// readQrels reads a BEIR qrels TSV (query-id, corpus-id, score; header
// first) into query -> document -> graded relevance.
func readQrels(path string) (map[string]map[string]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]int{}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(strings.TrimSpace(line), "\t")
		if i == 0 || len(f) != 3 {
			continue
		}
		var score int
		if _, err := fmt.Sscan(f[2], &score); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		if out[f[0]] == nil {
			out[f[0]] = map[string]int{}
		}
		out[f[0]][f[1]] = score
	}
	return out, nil
}
