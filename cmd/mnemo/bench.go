package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemo-dev/mnemo/bench"
	"github.com/mnemo-dev/mnemo/config"
	"github.com/mnemo-dev/mnemo/policy"
	"github.com/mnemo-dev/mnemo/vector/embed"
)

// runBench dispatches the bench subcommands.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && args[0] == "recall":
		return runBenchRecall(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "multihop":
		return runBenchMultihop(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "scifact":
		return runBenchSciFact(ctx, args[1:], stdout, stderr)
	}
	fmt.Fprintln(stderr, "usage: mnemo bench recall|multihop|scifact [flags]   (LoCoMo evidence recall; MuSiQue/HotpotQA passage recall; SciFact nDCG@10 of the embedder; -h for flags)")
	return errors.New("unknown or missing bench")
}

// runBenchRecall measures evidence recall@5/10/25 and nDCG@10 on the LoCoMo
// dev file for each search mode and for plain BM25, in-process on a
// temporary embedded store.
func runBenchRecall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("mnemo bench recall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("file", filepath.Join(bench.DataDir(), "locomo-dev.json"), "LoCoMo bench file")
	modes := fs.String("modes", "graph,hybrid,vector,keyword", "search modes to measure, comma-separated")
	convs := fs.String("conv", "", "only these sample ids, comma-separated (default all)")
	vectors := fs.String("vectors", "auto", "auto (on when the ONNX embedder is installed) or off")
	policyFile := fs.String("policy", "", "policy file (default: the embedded default policy)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	pol, err := benchPolicy(*policyFile)
	if err != nil {
		return err
	}
	o := recallOptions{Policy: pol, Progress: stderr, Modes: sortedModes(benchList(*modes)), Convs: benchList(*convs)}
	emb, err := benchEmbedder(*vectors, stderr)
	if err != nil {
		return err
	}
	if emb != nil {
		defer emb.Close()
		o.Embedder = emb
	} else {
		o.Modes = dropMode(o.Modes, policy.ModeVector)
	}
	dir, err := os.MkdirTemp("", "mnemo-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	o.Dir = dir
	convsData, err := loadLoCoMo(*file)
	if err != nil {
		return err
	}
	start := time.Now()
	rep, err := runRecall(ctx, convsData, o)
	if err != nil {
		return err
	}
	model := "off"
	if o.Embedder != nil {
		model = o.Embedder.ModelID()
	}
	fmt.Fprintf(stdout, "LoCoMo evidence recall (%s; vectors: %s; %s)\n\n", *file, model, time.Since(start).Round(time.Second))
	rep.write(stdout)
	return nil
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

func benchList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
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
