#!/usr/bin/env bash
# `run --slurm` and `sweep --slurm` against a one-node Slurm cluster that
# this test starts from Debian's packages (munge, slurmctld, slurmd,
# slurm-client: scripts/install-deps.sh) in a folder of its own, on ports
# of its own, and stops again by the PIDs it started (docs/byo.md, "Sweeps
# on a cluster"). Checks:
#   * run --slurm writes the same summary.json as the local run;
#   * a rerun after one run's outcome is lost submits that run alone and
#     gives the same summary again; other settings are refused;
#   * --slurm-no-wait returns at once, and rerunning merges (and, with
#     --plot, draws the figures);
#   * sweep --slurm (with its grid extended past the edge) writes the same
#     sweep.json and summary.json as the local sweep.
# Needs root (slurmd runs the tasks as the submitting user; munged and the
# daemons run as root here); exits 77 (skipped) without root or Slurm.
#
#   tests/slurm_e2e_test.sh path/to/stellatrain [work dir]
set -euo pipefail

STELLATRAIN=${1:?usage: slurm_e2e_test.sh path/to/stellatrain [work dir]}
STELLATRAIN=$(cd "$(dirname "$STELLATRAIN")" && pwd)/$(basename "$STELLATRAIN")
SOURCE_DIR=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" -ne 0 ]; then echo "slurm_e2e: skipped (needs root)"; exit 77; fi
for tool in munged mungekey slurmctld slurmd sbatch squeue sinfo scontrol; do
  command -v "$tool" > /dev/null || { echo "slurm_e2e: skipped ($tool not installed: scripts/install-deps.sh)"; exit 77; }
done

WORK=${2:-}
if [ -z "$WORK" ]; then WORK=$(mktemp -d /tmp/slurm_e2e_test.XXXXXX); KEEP=0; else KEEP=1; mkdir -p "$WORK"; fi
cd "$WORK"
source "$SOURCE_DIR/tests/e2e_lib.sh"
source "$SOURCE_DIR/tests/port_lib.sh"
fail() {  # with the cluster's logs
  echo "FAIL: $*" >&2
  tail -20 "$WORK"/cluster/*.log 2>/dev/null >&2 || true
  exit 1
}

# --- the cluster -------------------------------------------------------------
mkdir -p cluster/state cluster/spool cluster/munge
chmod 700 cluster/munge
PIDS=()
stop_cluster() {
  # Our own daemons only, by the PIDs we started.
  for pid in "${PIDS[@]}"; do kill "$pid" 2> /dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2> /dev/null || true
  done
  [ "$KEEP" = 1 ] || rm -rf "$WORK"
}
trap stop_cluster EXIT

mungekey --create --keyfile="$WORK/cluster/munge/munge.key" --bits=1024
munged --foreground --force --socket="$WORK/cluster/munge/munge.sock" --key-file="$WORK/cluster/munge/munge.key" \
  --pid-file="$WORK/cluster/munge/munged.pid" --seed-file="$WORK/cluster/munge/munged.seed" \
  --log-file="$WORK/cluster/munged.log" > "$WORK/cluster/munged.out" 2>&1 &
PIDS+=($!)
NODE=$(hostname -s)
CTLD_PORT=$(free_port)
SLURMD_PORT=$(free_port)
while [ "$SLURMD_PORT" = "$CTLD_PORT" ]; do SLURMD_PORT=$(free_port); done
cat > cluster/slurm.conf <<EOF
ClusterName=st-test
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$WORK/cluster/munge/munge.sock
StateSaveLocation=$WORK/cluster/state
SlurmdSpoolDir=$WORK/cluster/spool
SlurmctldPidFile=$WORK/cluster/slurmctld.pid
SlurmdPidFile=$WORK/cluster/slurmd.pid
SlurmctldLogFile=$WORK/cluster/slurmctld.log
SlurmdLogFile=$WORK/cluster/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$WORK/cluster/slurm.conf
for _ in $(seq 50); do [ -S cluster/munge/munge.sock ] && break; sleep 0.1; done
slurmctld -D -i > cluster/slurmctld.out 2>&1 &
PIDS+=($!)
slurmd -D > cluster/slurmd.out 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do sinfo --noheader --states=idle 2> /dev/null | grep -q idle && break; sleep 0.2; done
sinfo --noheader --states=idle | grep -q idle || fail "the test cluster's node never became idle"

# --- the runs ----------------------------------------------------------------
write_tiny_scenario tiny.yaml "$SOURCE_DIR" "[1, 2]"
sed -i -e 's/^target_accuracy: .*/target_accuracy: 0.2/' tiny.yaml
S=(--quiet --slurm --slurm-partition test)

"$STELLATRAIN" run tiny.yaml --out local --quiet > local.log 2>&1 || fail "local run"
"$STELLATRAIN" run tiny.yaml --out slurm "${S[@]}" > slurm.log 2>&1 || { cat slurm.log; fail "run --slurm"; }
cmp local/summary.json slurm/summary.json || fail "run --slurm: summary.json differs from the local run's"
[ -s slurm/slurm/array-1.sh ] || fail "no array script"

# One run's outcome lost (as a task killed by its time limit leaves it):
# the rerun submits that run alone.
rm slurm/logs/ddp_seed-2.outcome.json
"$STELLATRAIN" run tiny.yaml --out slurm "${S[@]}" > resubmit.log 2>&1 || { cat resubmit.log; fail "rerun"; }
grep -q "1 run(s) of tiny" resubmit.log || { cat resubmit.log; fail "the rerun should submit exactly the lost run"; }
python3 - <<'PY' || fail "submissions.json"
import json
s = json.load(open("slurm/slurm/submissions.json"))
assert [x["tasks"] for x in s] == [["st/seed-1", "st/seed-2", "ddp/seed-1", "ddp/seed-2"], ["ddp/seed-2"]], s
PY
cmp local/summary.json slurm/summary.json || fail "summary.json after the resubmission"
if "$STELLATRAIN" run tiny.yaml --out slurm "${S[@]}" --iterations 10 > mixed.log 2>&1; then fail "other settings accepted"; fi
grep -q "holds runs made with iterations" mixed.log || { cat mixed.log; fail "the refusal should name the setting"; }

# Submit and return; the same command later merges.
"$STELLATRAIN" run tiny.yaml --out later "${S[@]}" --slurm-no-wait > later.log 2>&1 || fail "--slurm-no-wait"
grep -q "run the same command again" later.log || { cat later.log; fail "--slurm-no-wait should say how to merge"; }
"$STELLATRAIN" run tiny.yaml --out later "${S[@]}" --plot > later2.log 2>&1 || { cat later2.log; fail "merge after no-wait"; }
cmp local/summary.json later/summary.json || fail "summary.json after --slurm-no-wait and a rerun"
[ -s later/figures/tta.png ] || fail "--plot: no figures once the runs were merged"

# A sweep whose best learning rate sits at the grid's edge (extra rounds).
SW=(--systems ddp,st --lr 0.02,0.05 --iterations 15 --quiet)
"$STELLATRAIN" sweep tiny.yaml "${SW[@]}" --out sweep-local > sweep-local.log 2>&1 || fail "local sweep"
"$STELLATRAIN" sweep tiny.yaml "${SW[@]}" --out sweep-slurm --slurm --slurm-partition test > sweep-slurm.log 2>&1 ||
  { cat sweep-slurm.log; fail "sweep --slurm"; }
cmp sweep-local/sweep.json sweep-slurm/sweep.json || fail "sweep --slurm: sweep.json differs from the local sweep's"
cmp sweep-local/summary.json sweep-slurm/summary.json || fail "sweep --slurm: summary.json differs"
python3 - <<'PY' || fail "the sweep should have taken several rounds"
import json
assert len(json.load(open("sweep-slurm/slurm/submissions.json"))) >= 2
PY
echo "slurm_e2e: ok"
