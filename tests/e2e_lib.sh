# Shared by the `stellatrain` command's shell tests (run_e2e_test.sh,
# run_options_e2e_test.sh, through run_e2e_common.sh,
# byo_e2e_test.sh, slurm_e2e_test.sh, math_kernels_test.sh,
# freed_memory_test.sh): sourced, not run.

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_error 'message part' command...: the command fails and its output
# says the message.
expect_error() {
  local expected=$1
  shift
  if "$@" > out.txt 2>&1; then fail "expected an error from: $*"; fi
  grep -qF -- "$expected" out.txt || { cat out.txt; fail "expected '$expected' from: $*"; }
}

# write_tiny_scenario FILE SOURCE_DIR [SEEDS]: the MLP on synthetic data,
# 2 clusters x 1 GPU, stellatrain (label st, 5% density) and ddp, 20
# iterations priced by the shipped 2-core profile; a target that ddp's plain
# SGD reaches within 20 iterations and stellatrain does not (both branches
# of TTA). SEEDS defaults to [1].
write_tiny_scenario() {
  cat > "$1" <<EOF2
name: tiny
clusters:
  - {name: a, nodes: 1, gpus_per_node: 1, cost_per_hour: 2}
  - {name: b, nodes: 1, gpus_per_node: 1, cost_per_hour: 1}
links:
  lan: {mbps: 10000, delay_ms: 0.05}
  wan:
    default: {mbps: 50, delay_ms: 10}
compute: {model: profile, profile: $2/scenarios/profiles/cpu-2core.yaml}
model: mlp
dataset: synthetic
batch: {global: 32}
systems:
  - {name: stellatrain, label: st, density: 0.05}
  - ddp
target_accuracy: 0.9
budget: {iterations: 20}
eval: {interval: 5, samples: 500}
seeds: ${3:-[1]}
EOF2
}

# write_quick_headline FILE SOURCE_DIR: the headline scenario
# (scenarios/fluct-115mbps.yaml) evaluated every 5 iterations on 2,000 test
# images, its trace and profile named by absolute path so that FILE may
# live anywhere: the headline's math at a test's cost (run it with --seeds 1
# and a few --iterations).
write_quick_headline() {
  local file=$1 source_dir=$2
  sed -e 's/^eval: .*/eval: {interval: 5, samples: 2000}/' \
    -e "s#\.\./traces/#$source_dir/traces/#; s#profiles/cpu-2core.yaml#$source_dir/scenarios/profiles/cpu-2core.yaml#" \
    "$source_dir/scenarios/fluct-115mbps.yaml" > "$file"
  grep -q '^eval: {interval: 5' "$file" || fail "could not set the evaluation of $file"
}
