#!/usr/bin/env bash
# Installs every Debian package the project needs. Idempotent: when all
# packages are present it prints one line and exits without touching apt.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config git python3
  libtorch-dev libopenblas0-pthread
  libns3-dev ns3 libgsl-dev
  libeigen3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libspdlog-dev libfmt-dev
  libgloo-dev libasio-dev zlib1g-dev
  libzip-dev   # .npz dataset files (core/data/npz.h)
  libnl-route-3-dev libnetfilter-queue-dev iptables iproute2 iperf3
  dataset-fashion-mnist python3-matplotlib python3-pandas
  python3-yaml    # analysis/paired_systems.py reads results folders' scenario.yaml
  python3-torch   # real PyTorch DDP for the simulator's reference (analysis/ddp_reference/),
                  # and TorchScript models and .npz datasets of one's own (scripts/byo/)
  # `run --slurm` / `sweep --slurm` and their test's one-node cluster
  # (tests/slurm_e2e_test.sh, which starts and stops its own daemons). On a
  # machine with systemd, Debian starts munge's service at install; slurmctld
  # and slurmd stay down without an /etc/slurm/slurm.conf.
  slurmctld slurmd slurm-client munge
  # The sanitizer and fuzzer builds (scripts/sanitize.sh, scripts/fuzz.sh):
  # clang with libFuzzer and the sanitizer runtimes, its OpenMP, and
  # llvm-symbolizer for readable reports.
  clang libclang-rt-14-dev libomp-14-dev llvm-14
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${#missing[@]} missing packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
