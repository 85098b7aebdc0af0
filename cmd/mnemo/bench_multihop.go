package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/bench"
	"github.com/mnemo-dev/mnemo/policy"
)

// multihopSets are the sets `bench multihop -set all` runs, in order.
var multihopSets = []string{"musique", "hotpotqa"}

// runBenchMultihop measures passage recall@2/@5 and search latency on the
// multi-hop sets (MuSiQue, HotpotQA) for each search mode, in-process on a
// temporary embedded store.
func runBenchMultihop(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo bench multihop", `mnemo bench multihop [-set musique|hotpotqa|all] [-modes graph,keyword,vector,hybrid] [flags]

Ingests each set's passages (one note per passage, "title\ntext") into a temporary
embedded store through the engine's write path, searches every question in each mode
and prints passage recall R@2, R@5 (as HippoRAG) and search latency p50/p95/p99_ms.
Each -fusion-weights and each -graph-weight value adds a variant of the policy,
searched over the same store: e.g. -modes hybrid -graph-weight 0,0.3,0.5.`, stdout, stderr)
	fs := c.fs
	dir := fs.String("dir", filepath.Join(bench.DataDir(), "multihop"), "directory holding <set>-dev.json")
	sets := fs.String("set", "all", "musique, hotpotqa or all (comma-separated)")
	modes := fs.String("modes", "graph,hybrid,vector,keyword", "search modes to measure, comma-separated")
	policyFile := fs.String("policy", "", "policy file (default: the embedded default policy)")
	vectors := fs.String("vectors", "auto", "auto (on when the ONNX embedder is installed) or off")
	topK := fs.Int("top-k", 5, "results per search (at least 5)")
	vcache := vectorCacheFlag(fs)
	bm25 := fs.Bool("bm25", true, "add a plain BM25 row (k1 1.2, b 0.75, title + text)")
	var weights []string
	fs.Func("fusion-weights", "a variant with these fusion weights, e.g. graph=0.3,vector=0.7,keyword=1 (unnamed signals keep the policy's); repeatable", func(s string) error {
		weights = append(weights, s)
		return nil
	})
	graphWeights := fs.String("graph-weight", "", "variants with these graph fusion weights, comma-separated (e.g. 0,0.3)")
	if _, err := c.parseN(args, 0); err != nil {
		return err
	}
	pol, err := benchPolicy(*policyFile)
	if err != nil {
		return err
	}
	bar := newProgress(stderr, "multihop", "", c.json)
	o := bench.MultihopOptions{Policy: pol, Modes: sortedModes(commaList(*modes)), TopK: *topK, BM25: *bm25, Progress: bar, Tick: bar.stage,
		VectorCache: vectorCache(*vcache)}
	for _, w := range weights {
		v, err := weightVariant(pol, w)
		if err != nil {
			return fmt.Errorf("-fusion-weights %q: %w", w, err)
		}
		o.Variants = append(o.Variants, v)
	}
	for _, g := range commaList(*graphWeights) {
		v, err := weightVariant(pol, "graph="+g)
		if err != nil {
			return fmt.Errorf("-graph-weight %q: %w", g, err)
		}
		o.Variants = append(o.Variants, v)
	}
	names := commaList(*sets)
	if slices.Equal(names, []string{"all"}) {
		names = multihopSets
	}
	var data []*bench.MultihopSet
	for _, n := range names {
		if !slices.Contains(multihopSets, n) {
			return fmt.Errorf("-set must be musique, hotpotqa or all, got %q", n)
		}
		s, err := bench.LoadMultihop(filepath.Join(*dir, n+"-dev.json"))
		if err != nil {
			return err
		}
		data = append(data, s)
	}
	emb, err := benchEmbedder(*vectors, stderr)
	if err != nil {
		return err
	}
	model := "off"
	if emb != nil {
		defer emb.Close()
		o.Embedder, model = emb, emb.ModelID()
	} else {
		o.Modes = dropMode(o.Modes, policy.ModeVector)
	}
	tmp, err := os.MkdirTemp("", "mnemo-multihop-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	o.Dir = tmp
	start := time.Now()
	rep, err := bench.RunMultihop(ctx, data, o)
	bar.done()
	if err != nil {
		return err
	}
	res := benchResult{Bench: "multihop", Data: *dir, Model: model, Seconds: time.Since(start).Seconds(), Report: rep}
	return c.print(res, func(w io.Writer) {
		fmt.Fprintf(w, "Multi-hop passage recall (%s; vectors: %s; top_k %d; policy %s; %s)\n\n",
			*dir, model, *topK, pol.Name(), time.Since(start).Round(time.Second))
		rep.Write(w)
	})
}

// weightVariant is pol with the fusion weights spec ("graph=0.3,vector=0.7")
// laid over its own, named by the spec.
func weightVariant(pol *policy.Policy, spec string) (bench.Variant, error) {
	w := maps.Clone(pol.Retrieval.FusionWeights)
	if w == nil {
		w = map[string]float64{}
	}
	var names []string
	for _, kv := range commaList(spec) {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || !slices.Contains([]string{"graph", "vector", "keyword"}, k) {
			return bench.Variant{}, fmt.Errorf("want signal=weight with signal graph, vector or keyword, got %q", kv)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 {
			return bench.Variant{}, fmt.Errorf("weight of %s must be a number >= 0, got %q", k, v)
		}
		w[k] = f
		names = append(names, fmt.Sprintf("%s=%g", k, f))
	}
	if len(names) == 0 {
		return bench.Variant{}, fmt.Errorf("no weight given")
	}
	cp := *pol
	cp.Retrieval.FusionWeights = w
	return bench.Variant{Name: strings.Join(names, ","), Policy: &cp}, nil
}
