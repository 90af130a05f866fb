#!/usr/bin/env bash
# The real-PyTorch DDP reference: resnet18, Gloo, 2 nodes x 1 process, over
# the emulation backend's 115 Mbps WAN at 0 and 20 ms one way
# (analysis/ddp_reference/README.md).
#
#   sudo analysis/ddp_reference/run_reference.sh RESULTS.json [options]
#
# Options: --delays "0 20" (each needs link-115mbps-<d>ms.yaml here),
# --warmup 3, --iters 8, --batch 64, --iperf-s 10 (seconds per direction),
# --max-load L (before each delay, wait up to --load-wait-s 900 s for the
# 1-minute load average to fall below L; 0, the default, does not wait).
# Environment: ST_BIN (default build/apps/stellatrain of this repository),
# PYTHON (default /usr/bin/python3: Debian's python3-torch lives there, not
# in a virtual environment's or pyenv's python3).
#
# Per delay: `stellatrain emu up` the scenario, an RTT probe and iperf3
# through the idle link (each direction alone, then both at once), then the
# two ranks of ddp_bench.py
# in the two node namespaces, then `emu down`. The network is removed on any
# exit (trap), and only the network this script brought up.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
st=${ST_BIN:-$repo/build/apps/stellatrain}
python=${PYTHON:-/usr/bin/python3}

die() { echo "run_reference.sh: $*" >&2; exit 1; }

[[ $# -ge 1 && $1 != -* ]] || die "usage: run_reference.sh RESULTS.json [--delays \"0 20\"] [--warmup N] [--iters N] [--batch N] [--iperf-s S] [--max-load L] [--load-wait-s S]"
out=$1
shift
delays="0 20" warmup=3 iters=8 batch=64 iperf_s=10 max_load=0 load_wait_s=900
while [[ $# -gt 0 ]]; do
  case $1 in
    --delays) delays=$2 ;;
    --warmup) warmup=$2 ;;
    --iters) iters=$2 ;;
    --batch) batch=$2 ;;
    --iperf-s) iperf_s=$2 ;;
    --max-load) max_load=$2 ;;
    --load-wait-s) load_wait_s=$2 ;;
    *) die "unknown option $1" ;;
  esac
  shift 2
done
[[ $EUID -eq 0 ]] || die "needs root (network namespaces and shaping): run it with sudo"
[[ -x $st ]] || die "no stellatrain binary at $st (build it, or set ST_BIN)"
"$python" -c 'import torch.distributed' 2>/dev/null || die "$python cannot import torch.distributed (set PYTHON)"
command -v iperf3 >/dev/null || die "iperf3 is missing (apt-get install iperf3)"
for d in $delays; do [[ -f $here/link-115mbps-${d}ms.yaml ]] || die "no scenario link-115mbps-${d}ms.yaml in $here"; done

work=$(mktemp -d "${TMPDIR:-/tmp}/st-ddpref.XXXXXX")
run_id=""
pids=()

cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ -n $run_id ]]; then "$st" emu down "$run_id" >&2 || true; fi
  if [[ $rc -eq 0 ]]; then rm -rf "$work"; else echo "run_reference.sh: failed; logs kept in $work" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# `ip netns exec` runs the command itself in the namespace, so each pid
# below is the process to stop.
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# The interface holding ADDR in namespace NS: Gloo binds its pairs there.
iface_of() { in_ns "$1" ip -o -4 addr show | awk -v a="$2" '{split($4, x, "/"); if (x[1] == a) print $2}'; }

wait_for_load() {
  local waited=0 load
  load=$(cut -d' ' -f1 /proc/loadavg)
  if [[ $max_load != 0 ]]; then
    while awk -v l="$load" -v m="$max_load" 'BEGIN { exit !(l >= m) }' && [[ $waited -lt $load_wait_s ]]; do
      sleep 10
      waited=$((waited + 10))
      load=$(cut -d' ' -f1 /proc/loadavg)
    done
  fi
  echo "max_load=$max_load waited_s=$waited load1=$load"
}

# iperf3 through the idle link: the goodput TCP gets out of the shaping.
iperf_direction() {  # NS_SERVER NS_CLIENT SERVER_ADDR OUT_JSON [-R | --bidir]
  local server_pid tries=0
  in_ns "$1" iperf3 -s -1 -p 5201 >/dev/null 2>&1 &
  server_pid=$!
  pids+=("$server_pid")
  # iperf3 3.12 exits 0 with -J even when it could not connect (the error
  # is in the JSON), so wait until the server listens, and check the JSON.
  until in_ns "$1" ss -Htln 'sport = :5201' | grep -q .; do
    tries=$((tries + 1))
    [[ $tries -lt 50 ]] || die "the iperf3 server in $1 did not start"
    sleep 0.2
  done
  in_ns "$2" iperf3 -c "$3" -p 5201 -t "$iperf_s" -J ${5:-} >"$4" 2>/dev/null || true
  if ! "$python" -c 'import json, sys; sys.exit("error" in json.load(open(sys.argv[1])))' "$4"; then
    kill "$server_pid" 2>/dev/null || true
    die "iperf3 to $3 failed: $(cat "$4")"
  fi
  wait "$server_pid" || true
}

run_files=()
for d in $delays; do
  scenario=$here/link-115mbps-${d}ms.yaml
  dir=$work/delay-$d
  mkdir -p "$dir"
  echo "== ${d} ms: waiting for load (max ${max_load})" >&2
  wait_for_load >"$dir/load-wait.txt"
  cat "$dir/load-wait.txt" >&2

  up=$("$st" emu up "$scenario")
  echo "$up" >&2
  run_id=$(sed -n 's/.*(run id \([a-z0-9]*\)).*/\1/p' <<<"$up")
  [[ -n $run_id ]] || die "could not read the run id from emu up"
  read -r ns0 addr0 < <(awk '$1 == "node" && $2 == "0" {print $(NF - 1), $NF}' <<<"$up")
  read -r ns1 addr1 < <(awk '$1 == "node" && $2 == "1" {print $(NF - 1), $NF}' <<<"$up")
  if0=$(iface_of "$ns0" "$addr0")
  if1=$(iface_of "$ns1" "$addr1")
  [[ -n $if0 && -n $if1 ]] || die "no interface for $addr0 in $ns0 or $addr1 in $ns1"

  in_ns "$ns1" "$python" "$here/rtt_probe.py" serve 5202 &
  rtt_server=$!
  pids+=("$rtt_server")
  in_ns "$ns0" "$python" "$here/rtt_probe.py" probe "$addr1" 5202 20 >"$dir/rtt.json"
  wait "$rtt_server" || true
  iperf_direction "$ns1" "$ns0" "$addr1" "$dir/iperf-a-b.json"
  iperf_direction "$ns1" "$ns0" "$addr1" "$dir/iperf-b-a.json" -R
  # Both directions at once, as in the ring allreduce: each direction's
  # ACKs then queue behind the other direction's data.
  iperf_direction "$ns1" "$ns0" "$addr1" "$dir/iperf-bidir.json" --bidir
  echo "rtt $(cat "$dir/rtt.json")" >&2

  uptime >"$dir/uptime-before.txt"
  cat "$dir/uptime-before.txt" >&2
  # What else holds the cores (command names only), to judge contention.
  ps -eo pcpu=,etimes=,comm= --sort=-pcpu | head -n 5 >"$dir/top-before.txt"
  bench=(--world-size 2 --master-addr "$addr0" --master-port 29500 --warmup "$warmup" --iters "$iters" --batch "$batch")
  GLOO_SOCKET_IFNAME=$if1 in_ns "$ns1" "$python" "$here/ddp_bench.py" --rank 1 "${bench[@]}" \
    >"$dir/rank1.json" 2>"$dir/rank1.log" &
  rank1=$!
  pids+=("$rank1")
  GLOO_SOCKET_IFNAME=$if0 in_ns "$ns0" "$python" "$here/ddp_bench.py" --rank 0 "${bench[@]}" \
    >"$dir/rank0.json" 2> >(tee "$dir/rank0.log" >&2) &
  rank0=$!
  pids+=("$rank0")
  wait "$rank0" || { cat "$dir/rank1.log" >&2; die "rank 0 failed at ${d} ms"; }
  wait "$rank1" || { cat "$dir/rank1.log" >&2; die "rank 1 failed at ${d} ms"; }
  # All of this delay's processes have been waited for: forget their pids
  # so that cleanup cannot signal a reused one.
  pids=()
  uptime >"$dir/uptime-after.txt"
  cat "$dir/uptime-after.txt" >&2

  "$st" emu down "$run_id" >&2
  emu_id=$run_id
  run_id=""
  rel_scenario=${scenario#"$repo"/}
  "$python" "$here/collect.py" run "$dir" "$d" "$rel_scenario" "$emu_id" >"$work/run-$d.json"
  run_files+=("$work/run-$d.json")
done

"$python" "$here/collect.py" results "$out" \
  "analysis/ddp_reference/run_reference.sh RESULTS.json --delays \"$delays\" --warmup $warmup --iters $iters --batch $batch --iperf-s $iperf_s --max-load $max_load" \
  "${run_files[@]}"
"$python" "$here/collect.py" table "$out"
echo "results: $out" >&2
