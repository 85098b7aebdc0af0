package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/mnemo-dev/mnemo/bench"
	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/engine"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector/embed"
)

// The bench subcommands parse flags and wire the harnesses of package
// bench; the harnesses, metrics and report formats live there
// (docs/benchmarks.md names the metrics).

// runBench dispatches the bench subcommands.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo bench", "mnemo bench recall|multihop|scifact|abstain [flags]   (LoCoMo evidence recall; "+
		"MuSiQue/HotpotQA passage recall; SciFact nDCG@10 of the embedder; abstention on absent topics; "+
		"mnemo bench VERB -h for its flags)", stdout, stderr)
	verb, err := c.verb(args, "recall", "multihop", "scifact", "abstain")
	if err != nil {
		return err
	}
	run := map[string]func(context.Context, []string, io.Writer, io.Writer) error{
		"recall": runBenchRecall, "multihop": runBenchMultihop, "scifact": runBenchSciFact, "abstain": runBenchAbstain,
	}[verb]
	return run(ctx, args[1:], stdout, stderr)
}

// runBenchRecall measures evidence R@5/10/25, nDCG@10 and search latency
// on the LoCoMo dev file for each search mode and for plain BM25,
// in-process on a temporary embedded store.
func runBenchRecall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo bench recall", "mnemo bench recall [flags]", stdout, stderr)
	fs := c.fs
	file := fs.String("file", filepath.Join(bench.DataDir(), "locomo-dev.json"), "LoCoMo bench file")
	modes := fs.String("modes", "graph,hybrid,vector,keyword", "search modes to measure, comma-separated")
	convs := fs.String("conv", "", "only these sample ids, comma-separated (default all)")
	vectors := fs.String("vectors", "auto", "auto (on when the ONNX embedder is installed) or off")
	vcache := vectorCacheFlag(fs)
	policyFile := fs.String("policy", "", "policy file (default: the embedded default policy)")
	depth := fs.Int("depth", 25, "results each search asks for, 25 to 100 (beyond 25 with the token budget lifted; R@k is read from the same list)")
	ranksFile := fs.String("ranks", "", "write where each question's evidence turns ranked, one JSON line per question and mode, to this file")
	if _, err := c.parseN(args, 0); err != nil {
		return err
	}
	if *depth < 25 || *depth > engine.MaxSearchLimit {
		return c.usageErr(fmt.Sprintf("-depth %d: must be 25 to %d", *depth, engine.MaxSearchLimit))
	}
	pol, err := benchPolicy(*policyFile)
	if err != nil {
		return err
	}
	bar := newProgress(stderr, "recall", "", c.json)
	o := bench.LoCoMoOptions{Policy: pol, Progress: bar, Tick: bar.stage, Modes: sortedModes(commaList(*modes)), Convs: commaList(*convs),
		VectorCache: vectorCache(*vcache), Depth: *depth}
	if *ranksFile != "" {
		f, err := os.Create(*ranksFile)
		if err != nil {
			return fmt.Errorf("-ranks: %w", err)
		}
		defer f.Close()
		w := bufio.NewWriter(f)
		defer w.Flush()
		o.Ranks = w
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
	dir, err := os.MkdirTemp("", "mnemo-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	o.Dir = dir
	data, err := bench.LoadLoCoMo(*file)
	if err != nil {
		return err
	}
	start := time.Now()
	rep, err := bench.RunLoCoMo(ctx, data, o)
	bar.done()
	if err != nil {
		return err
	}
	return c.print(benchResult{Bench: "recall", Data: *file, Model: model, Seconds: time.Since(start).Seconds(), Report: rep}, func(w io.Writer) {
		fmt.Fprintf(w, "LoCoMo evidence recall (%s; vectors: %s; %s)\n\n", *file, model, time.Since(start).Round(time.Second))
		rep.Write(w)
	})
}

// benchResult is the --json form of a bench run: what ran, on what, with
// which model, how long it took and the report.
type benchResult struct {
	Bench   string  `json:"bench"`
	Data    string  `json:"data"`
	Model   string  `json:"model"`
	Seconds float64 `json:"seconds"`
	Report  any     `json:"report"`
}

// runBenchSciFact measures the embedder and the embedded vector index on
// SciFact (BEIR format): nDCG@10 over the test qrels and query latency.
func runBenchSciFact(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c := newCmdline("mnemo bench scifact", "mnemo bench scifact [flags]", stdout, stderr)
	fs := c.fs
	dir := fs.String("dir", filepath.Join(bench.DataDir(), "scifact"), "SciFact directory (corpus.jsonl, queries.jsonl, qrels/test.tsv)")
	vcache := vectorCacheFlag(fs)
	if _, err := c.parseN(args, 0); err != nil {
		return err
	}
	emb, err := bench.OpenEmbedder(os.Getenv, filepath.Join(".cache", "mnemo"))
	if err != nil {
		return fmt.Errorf("embedder: %w", err)
	}
	if emb == nil {
		return errors.New("no ONNX embedder: run `make model` (or set MNEMO_ORT_LIB and MNEMO_MODEL_DIR)")
	}
	defer emb.Close()
	tmp, err := os.MkdirTemp("", "mnemo-scifact-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bar := newProgress(stderr, "scifact", "", c.json)
	start := time.Now()
	rep, err := bench.RunSciFact(ctx, *dir, tmp, emb, vectorCache(*vcache), bar, bar.stage)
	bar.done()
	if err != nil {
		return err
	}
	return c.print(benchResult{Bench: "scifact", Data: *dir, Model: emb.ModelID(), Seconds: time.Since(start).Seconds(), Report: rep}, func(w io.Writer) {
		fmt.Fprintf(w, "SciFact (%s)\n\n", *dir)
		rep.Write(w)
	})
}

// vectorCacheFlag declares -vector-cache on fs.
func vectorCacheFlag(fs *flag.FlagSet) *string {
	return fs.String("vector-cache", bench.DefaultVectorCache(), `directory caching corpus vectors across runs per model ("off": none)`)
}

// vectorCache is the -vector-cache value as a directory ("" for none).
func vectorCache(v string) string {
	if v == "off" {
		return ""
	}
	return v
}

// benchEmbedder opens the embedder per -vectors: with auto, the ONNX
// embedder when it is installed (nil, said on stderr, when not); with off,
// nil.
func benchEmbedder(vectors string, stderr io.Writer) (*embed.ONNX, error) {
	switch vectors {
	case "off":
		return nil, nil
	case "auto":
		emb, err := bench.OpenEmbedder(os.Getenv, filepath.Join(".cache", "mnemo"))
		if err != nil {
			return nil, fmt.Errorf("embedder: %w", err)
		}
		if emb == nil {
			fmt.Fprintln(stderr, "vectors off: no ONNX embedder (run bash vector/embed/install.sh or set MNEMO_ORT_LIB and MNEMO_MODEL_DIR)")
		}
		return emb, nil
	}
	return nil, fmt.Errorf("-vectors must be auto or off, got %q", vectors)
}

// benchPolicy loads the policy the bench searches under.
func benchPolicy(path string) (*policy.Policy, error) {
	if path != "" {
		return policy.LoadFile(path)
	}
	return policy.Parse("default_policy.yaml", config.DefaultPolicy())
}

func dropMode(ms []string, mode string) []string {
	out := ms[:0]
	for _, m := range ms {
		if m != mode {
			out = append(out, m)
		}
	}
	return out
}

// sortedModes lists the search modes in report order.
func sortedModes(ms []string) []string {
	order := map[string]int{policy.ModeGraph: 0, policy.ModeHybrid: 1, policy.ModeVector: 2, policy.ModeKeyword: 3}
	sort.SliceStable(ms, func(a, b int) bool { return order[ms[a]] < order[ms[b]] })
	return ms
}
