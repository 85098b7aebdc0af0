package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/bench"
	"github.com/mnemo-dev/mnemo/vector"
	"github.com/mnemo-dev/mnemo/vector/local"
)

// runBenchSciFact measures the embedder and the embedded vector index on
// SciFact (BEIR format): every abstract (title + text) is embedded into a
// temporary vector/local index, every test claim searches it, and nDCG@10
// over the test qrels is printed.
func runBenchSciFact(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mnemo bench scifact", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", filepath.Join(bench.DataDir(), "scifact"), "SciFact directory (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	emb, err := bench.OpenEmbedder(os.Getenv, ".cache/mnemo")
	if err != nil {
		return fmt.Errorf("embedder: %w", err)
	}
	if emb == nil {
		return errors.New("no ONNX embedder: run `make model` (or set MNEMO_ORT_LIB and MNEMO_MODEL_DIR)")
	}
	defer emb.Close()
	corpus, err := readJSONL(filepath.Join(*dir, "corpus.jsonl"))
	if err != nil {
		return err
	}
	queries, err := readJSONL(filepath.Join(*dir, "queries.jsonl"))
	if err != nil {
		return err
	}
	qrels, err := readQrels(filepath.Join(*dir, "qrels", "test.tsv"))
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "mnemo-scifact-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	idx, err := local.Open(tmp, local.Options{Dimensions: emb.Dimensions()})
	if err != nil {
		return err
	}
	defer idx.Close()

	start := time.Now()
	const batch = 32
	for i := 0; i < len(corpus); i += batch {
		docs := corpus[i:min(i+batch, len(corpus))]
		texts := make([]string, len(docs))
		for j, d := range docs {
			texts[j] = strings.TrimSpace(d.Title + " " + d.Text)
		}
		vecs, err := emb.Embed(ctx, texts)
		if err != nil {
			return err
		}
		pts := make([]vector.Point, len(docs))
		for j, d := range docs {
			pts[j] = vector.Point{ID: d.ID, Vector: vecs[j], Payload: vector.Payload{TenantID: "scifact", Type: "document"}}
		}
		if err := idx.Upsert(ctx, pts); err != nil {
			return err
		}
		if (i/batch)%20 == 0 {
			fmt.Fprintf(stderr, "embedded %d/%d abstracts\n", i+len(docs), len(corpus))
		}
	}
	indexed := time.Since(start)

	var sum float64
	var n int
	for _, q := range queries {
		rel, ok := qrels[q.ID]
		if !ok {
			continue
		}
		vecs, err := emb.Embed(ctx, []string{q.Text})
		if err != nil {
			return err
		}
		hits, err := idx.Search(ctx, vecs[0], vector.Filter{TenantID: "scifact", AllUsers: true, Subscopes: true}, 10)
		if err != nil {
			return err
		}
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		sum += ndcg10(ids, rel)
		n++
	}
	if n == 0 {
		return errors.New("no test query has qrels")
	}
	fmt.Fprintf(stdout, "SciFact (%s): %d abstracts embedded in %s; %d test queries; nDCG@10 %.4f (model %s)\n",
		*dir, len(corpus), indexed.Round(time.Second), n, sum/float64(n), emb.ModelID())
	return nil
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

// ndcg10 is nDCG@10 with graded gains rel and log2 discounts, as BEIR's
// evaluation (pytrec_eval) computes it.
func ndcg10(ranked []string, rel map[string]int) float64 {
	var dcg float64
	for i, id := range ranked {
		if i == 10 {
			break
		}
		dcg += float64(rel[id]) / math.Log2(float64(i)+2)
	}
	var ideal []int
	for _, g := range rel {
		ideal = append(ideal, g)
	}
	for i := range ideal { // sort descending; qrels are tiny
		for j := i + 1; j < len(ideal); j++ {
			if ideal[j] > ideal[i] {
				ideal[i], ideal[j] = ideal[j], ideal[i]
			}
		}
	}
	var idcg float64
	for i, g := range ideal {
		if i == 10 {
			break
		}
		idcg += float64(g) / math.Log2(float64(i)+2)
	}
	if idcg == 0 {
		return 0
	}
	return dcg / idcg
}
