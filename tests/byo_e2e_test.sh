#!/usr/bin/env bash
# End-to-end test of bringing one's own model and data (docs/byo.md): the
# repository's scripts make a TorchScript ResNet and transformer
# (scripts/byo/make_models.py) and a .npz dataset file, a Fashion-MNIST
# subset with its own validation split (scripts/byo/make_dataset.py); then
# `stellatrain run` trains both models with stellatrain and ddp over the sim
# backend and the real one, and the results say which files they read.
# Also: `data check`, `data convert`, `bench profile` of a TorchScript file,
# a sweep that tunes on the file's x_val, and the errors for bad files.
#
#   tests/byo_e2e_test.sh path/to/stellatrain [work dir]
set -euo pipefail

STELLATRAIN=${1:?usage: byo_e2e_test.sh path/to/stellatrain [work dir]}
STELLATRAIN=$(cd "$(dirname "$STELLATRAIN")" && pwd)/$(basename "$STELLATRAIN")
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
WORK=${2:-}
if [ -z "$WORK" ]; then
  WORK=$(mktemp -d /tmp/byo_e2e_test.XXXXXX)
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK"
cd "$WORK"
PYTHON=/usr/bin/python3  # Debian's, with python3-torch and numpy (scripts/install-deps.sh)

source "$SOURCE_DIR/tests/e2e_lib.sh"

"$PYTHON" "$SOURCE_DIR/scripts/byo/make_models.py" --out models --input 1 28 28 --classes 10 --models resnet,transformer
"$PYTHON" "$SOURCE_DIR/scripts/byo/make_dataset.py" --kind fashion-mnist --out data.npz --train 6000 --val 1000 --test 2000
"$STELLATRAIN" data check data.npz | tee check.log
grep -q "1000 validation (x_val)" check.log || fail "data check: the file's validation split"

cat > byo.yaml <<EOF
name: byo
clusters:
  - {name: a, nodes: 1, gpus_per_node: 1}
  - {name: b, nodes: 1, gpus_per_node: 1}
links:
  lan: {mbps: 10000, delay_ms: 0.05}
  wan:
    default: {mbps: 100, delay_ms: 10}
compute: {model: analytic, device_tflops: 2}
model: {torchscript: models/transformer.pt, name: my-transformer}
dataset: {name: npz, file: data.npz}
batch: {global: 64}
systems:
  - {name: stellatrain, label: st, density: 0.1}
  - ddp
target_accuracy: 0.3
budget: {iterations: 40}
eval: {interval: 10, samples: 2000}
seeds: [1]
EOF
sed -e 's|model: {torchscript: models/transformer.pt, name: my-transformer}|model: {torchscript: models/resnet.pt}|' \
    byo.yaml > byo-resnet.yaml

check_run() {  # results dir, backend, model name, lowest best accuracy
  "$PYTHON" - "$@" "$WORK" <<'PY'
import json, os, sys, zlib
out, backend, model, floor, work = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
summary = json.load(open(os.path.join(out, "summary.json")))
def check(ok, what):
    if not ok:
        sys.exit(f"FAIL ({out}): {what}")
check(summary["backend"] == backend, "backend")
check(summary["model"] == model, f"model {summary['model']}")
check(summary["model_file"].endswith(".pt") and os.path.isfile(summary["model_file"]), "summary names the model file")
check(summary["dataset"] == "npz" and summary["dataset_file"] == os.path.join(work, "data.npz"), "summary names the data file")
for label in ("st", "ddp"):
    entry = summary["systems"][label]
    check("error" not in entry, f"{label} failed: {entry.get('error')}")
    check(entry["iterations"] == 40, f"{label}: 40 iterations")
    check(entry["best_accuracy"] >= floor, f"{label}: best accuracy {entry['best_accuracy']} below {floor} (chance 0.1)")
    manifest = json.load(open(os.path.join(out, label, "manifest.json")))
    for key, path in (("model_file", summary["model_file"]), ("dataset_file", summary["dataset_file"])):
        data = open(path, "rb").read()
        check(manifest[key]["bytes"] == len(data), f"{label}: {key} size")
        check(manifest[key]["crc32"] == f"{zlib.crc32(data):08x}", f"{label}: {key} crc32")
print(f"ok: {out}: " + ", ".join(f"{l} best {e['best_accuracy']:.3f}" for l, e in summary["systems"].items()))
PY
}

"$STELLATRAIN" run byo.yaml --out sim-transformer --quiet
check_run sim-transformer sim my-transformer 0.3
"$STELLATRAIN" run byo-resnet.yaml --out sim-resnet --quiet
check_run sim-resnet sim resnet 0.15
# On the real backend a forward takes each layer's newest version published
# by then (docs/engine.md), which wall-clock timing decides: stellatrain's
# 40-iteration best accuracy there varies from run to run (0.287 to 0.393
# over nine runs on two machines, the sim's deterministic run 0.380), so
# the floor asks for twice chance, not the sim's 0.3.
"$STELLATRAIN" run byo.yaml --backend real --out real-transformer --quiet
check_run real-transformer real my-transformer 0.2
"$STELLATRAIN" run byo-resnet.yaml --backend real --out real-resnet --quiet
check_run real-resnet real resnet 0.15

# The sim runs are deterministic: a rerun gives the same iterations.
"$STELLATRAIN" run byo.yaml --out sim-transformer-again --quiet
cmp sim-transformer/ddp/iterations.csv sim-transformer-again/ddp/iterations.csv || fail "ddp rerun differs"
cmp sim-transformer/st/iterations.csv sim-transformer-again/st/iterations.csv || fail "stellatrain rerun differs"

# A sweep tunes on the file's own validation split.
"$STELLATRAIN" sweep byo.yaml --systems ddp --lr 0.02,0.05 --out sweep --quiet
"$PYTHON" - <<'PY'
import json
m = json.load(open("sweep/ddp.lr-0.02/manifest.json"))
assert m["eval"]["on"] == "validation", m["eval"]
PY

# bench profile times a TorchScript file by the name it is given.
"$STELLATRAIN" bench profile --models tf=models/transformer.pt --min-time 0.02 --repetitions 1 --out profile.yaml
grep -q "^  tf:" profile.yaml || fail "profile has no entry for tf"

# Bad files: named in the error, nothing written.
cp data.npz bad.npz
"$PYTHON" - <<'PY'
import numpy as np
d = dict(np.load("bad.npz"))
d["y_test"] = d["y_test"].copy(); d["y_test"][7] = 12
np.savez("bad.npz", **d)
PY
sed -e 's|file: data.npz|file: bad.npz|' byo.yaml > bad-data.yaml
expect_error "bad.npz: y_test[7]: label 12 is outside 0..9" "$STELLATRAIN" run bad-data.yaml --out bad-data
[ ! -e bad-data ] || fail "a refused scenario must not create its results folder"
echo "not a model" > broken.pt
sed -e 's|models/transformer.pt|broken.pt|' byo.yaml > bad-model.yaml
expect_error "broken.pt: not a TorchScript module" "$STELLATRAIN" run bad-model.yaml --out bad-model
sed -e 's|name: my-transformer}|name: my-transformer, input: [3, 32, 32]}|' byo.yaml > bad-input.yaml
expect_error "transformer.pt: the model takes [3, 32, 32] (channels, height, width) but the dataset's images are [1, 28, 28]" \
  "$STELLATRAIN" run bad-input.yaml --out bad-input
[ ! -e bad-input ] || fail "a refused scenario must not create its results folder"
echo "byo_e2e: ok"
