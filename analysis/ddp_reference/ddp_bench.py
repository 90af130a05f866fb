"""One rank of the real-PyTorch DDP reference: resnet18, Gloo, CPU.

Run one process per rank (run_reference.sh starts them in the emulated
network's node namespaces):

    GLOO_SOCKET_IFNAME=IFACE python3 ddp_bench.py --rank R --world-size 2 \
        --master-addr ADDR --master-port PORT [--warmup 3 --iters 8]

Rank, world size, master address and port may also come from the usual
RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT variables. Gloo picks the
interface its pairs bind from GLOO_SOCKET_IFNAME; without it, it binds the
address the host name resolves to, which inside a network namespace is not
the node's address.

Phases, all timed with time.perf_counter on every rank (ranks run each
phase at the same time, because in DDP both compute on the shared cores at
once):

  compute    forward + loss + backward (and the SGD step, timed apart) of a
             local model, no DDP, no communication;
  allreduce  dist.all_reduce of one flat float32 tensor with as many
             elements as the model has parameters (the bytes DDP's buckets
             carry), each call after a barrier so both ranks start together;
  ddp        DistributedDataParallel with its defaults (bucket_cap_mb 25,
             1 MiB first bucket, broadcast_buffers on): zero_grad, forward +
             loss, backward (bucket allreduces overlap it; it returns with
             averaged gradients), SGD step (lr 0.05, momentum 0.9). No
             barrier between iterations, as in a training loop;
  allreduce_sizes  dist.all_reduce of 4 bytes, 1 MiB and each of the sizes
             DDP's buckets have after its rebuild, one size at a time
             (after one warm-up, --sizes-iters measured calls each).

The first three phases: `--warmup` iterations, then `--iters` measured
ones; medians and means of the measured ones. Rank 0 prints one JSON line with every
rank's numbers on stdout (log lines go to stderr).
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

from resnet18 import ResNet18

BATCH_SHAPE = (1, 28, 28)
CLASSES = 10


def log(rank, message):
    print(f"[rank {rank} {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def summary(values_s):
    """Median, mean, min and max in milliseconds, plus the raw values."""
    ms = [v * 1e3 for v in values_s]
    return {
        "median_ms": statistics.median(ms),
        "mean_ms": statistics.fmean(ms),
        "min_ms": min(ms),
        "max_ms": max(ms),
        "values_ms": [round(v, 3) for v in ms],
    }


def loadavg():
    return [round(x, 2) for x in os.getloadavg()]


def make_batch(args, rank):
    # Timing does not depend on the values; a per-rank seed gives each rank
    # its own shard as in data-parallel training.
    g = torch.Generator().manual_seed(1000 + rank)
    images = torch.randn((args.batch,) + BATCH_SHAPE, generator=g)
    labels = torch.randint(0, CLASSES, (args.batch,), generator=g)
    return images, labels


def make_model(args):
    torch.manual_seed(args.seed)  # the same initial model on every rank
    return ResNet18(channels=BATCH_SHAPE[0], classes=CLASSES)


def make_optimizer(args, model):
    return torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)


def phase_compute(args, rank, images, labels):
    model = make_model(args)
    model.train()
    optimizer = make_optimizer(args, model)
    fwd, bwd, step, fwd_bwd, cpu, cpu_s = [], [], [], [], [], []
    dist.barrier()
    for i in range(args.warmup + args.iters):
        c0 = time.process_time()
        t0 = time.perf_counter()
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), labels)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        t3 = time.perf_counter()
        c1 = time.process_time()
        if i >= args.warmup:
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
            step.append(t3 - t2)
            fwd_bwd.append(t2 - t0)
            cpu.append((c1 - c0) / (t3 - t0))
            cpu_s.append(c1 - c0)
    return {
        "forward": summary(fwd),
        "backward": summary(bwd),
        "optimizer_step": summary(step),
        "forward_backward": summary(fwd_bwd),
        # Process CPU time over wall time of an iteration: about 1 with one
        # intra-op thread when the process had a core to itself.
        "cpu_share_median": statistics.median(cpu),
        # CPU time of the whole iteration (step included): what the compute
        # costs when the process has a core to itself, less sensitive to
        # the other load on the host than the wall time.
        "cpu_time": summary(cpu_s),
    }


def phase_allreduce(args, rank, numel):
    flat = torch.ones(numel, dtype=torch.float32)
    times = []
    for i in range(args.warmup + args.iters):
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(flat)
        t1 = time.perf_counter()
        if i >= args.warmup:
            times.append(t1 - t0)
    return {"numel": numel, "bytes": numel * 4, "all_reduce": summary(times)}


def phase_allreduce_sizes(args, rank, sizes_bytes):
    """all_reduce of one element, of 1 MiB and of each of DDP's buckets, each
    call after a barrier: Gloo's time per collective against its size on
    this link (a fixed cost per call, and the rate DDP's buckets get)."""
    out = {}
    for nbytes in sizes_bytes:
        flat = torch.ones(max(1, nbytes // 4), dtype=torch.float32)
        times = []
        for i in range(1 + args.sizes_iters):
            dist.barrier()
            t0 = time.perf_counter()
            dist.all_reduce(flat)
            t1 = time.perf_counter()
            if i >= 1:
                times.append(t1 - t0)
        out[str(flat.numel() * 4)] = summary(times)
    return {"warmup": 1, "iters": args.sizes_iters, "by_bytes": out}


def expected_buckets(model, bucket_cap_mb):
    """DDP's bucket layout after its rebuild, when gradients become ready in
    reverse registration order: a 1 MiB first bucket, then bucket_cap_mb."""
    params = list(model.parameters())[::-1]
    limits = [dist._DEFAULT_FIRST_BUCKET_BYTES, int(bucket_cap_mb * 1024 * 1024)]
    assignment = dist._compute_bucket_assignment_by_size(params, limits, [False] * len(params))
    # 1.13 returns (bucket indices, per-bucket limits); older ones the list.
    indices = assignment[0] if isinstance(assignment, tuple) else assignment
    return [sum(params[i].numel() * 4 for i in bucket) for bucket in indices]


def phase_ddp(args, rank, images, labels):
    model = make_model(args)
    model.train()
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=args.bucket_cap_mb)
    optimizer = make_optimizer(args, ddp)
    fwd, bwd, step, total, cpu, fwd_share, first = [], [], [], [], [], [], []
    dist.barrier()
    for i in range(args.warmup + args.iters):
        c0 = time.process_time()
        t0 = time.perf_counter()
        optimizer.zero_grad()
        loss = F.cross_entropy(ddp(images), labels)
        t1 = time.perf_counter()
        cf = time.process_time()
        loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        t3 = time.perf_counter()
        c1 = time.process_time()
        if i < args.warmup:
            first.append(round((t3 - t0) * 1e3, 3))
        else:
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
            step.append(t3 - t2)
            total.append(t3 - t0)
            cpu.append(c1 - c0)
            fwd_share.append((cf - c0) / (t1 - t0))
    logging_data = ddp._get_ddp_logging_data()
    # DDP's own record: initial and rebuilt bucket sizes (bytes, in the
    # order they are reduced), and its sampled timings (ns).
    ddp_info = {k: v for k, v in logging_data.items()
                if "bucket" in k or k.startswith("avg_") or k in ("gloo_num_threads", "total_parameter_size_bytes")}
    bucket_sizes = ddp_info.get("rebuilt_bucket_sizes") or ddp_info.get("bucket_sizes", "")
    return {
        "iteration": summary(total),
        "forward": summary(fwd),
        "backward_with_allreduce": summary(bwd),
        "optimizer_step": summary(step),
        # The process's CPU time per iteration, Gloo's threads included.
        "cpu_time": summary(cpu),
        # CPU time over wall time of the forward, which is compute but for
        # the buffer broadcast (one round trip): well below 1 means another
        # process took the core, and the iteration's compute is inflated.
        "forward_cpu_share": [round(x, 3) for x in fwd_share],
        "warmup_iterations_ms": first,
        "buckets": len([s for s in str(bucket_sizes).split(",") if s.strip()]),
        "bucket_sizes_bytes": [int(s) for s in str(bucket_sizes).split(",") if s.strip()],
        "expected_bucket_sizes_bytes": expected_buckets(model, args.bucket_cap_mb),
        "ddp_logging_data": ddp_info,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    env = os.environ
    parser.add_argument("--rank", type=int, default=int(env.get("RANK", "0")))
    parser.add_argument("--world-size", type=int, default=int(env.get("WORLD_SIZE", "2")))
    parser.add_argument("--master-addr", default=env.get("MASTER_ADDR", "127.0.0.1"))
    parser.add_argument("--master-port", type=int, default=int(env.get("MASTER_PORT", "29500")))
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads per process")
    parser.add_argument("--bucket-cap-mb", type=float, default=25.0)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--phases", default="compute,allreduce,ddp,allreduce_sizes")
    parser.add_argument("--sizes-iters", type=int, default=4,
                        help="measured iterations per size of allreduce_sizes (after 1 warm-up)")
    parser.add_argument("--timeout-s", type=float, default=600)
    args = parser.parse_args()
    phases = [p for p in args.phases.split(",") if p]
    unknown = set(phases) - {"compute", "allreduce", "ddp", "allreduce_sizes"}
    if unknown:
        parser.error(f"unknown phases {sorted(unknown)}")
    rank = args.rank

    # Two processes share two cores: one intra-op thread each, as the C++
    # engine's nodes run; Gloo's communication threads are separate.
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    log(rank, f"connecting to {args.master_addr}:{args.master_port} as rank {rank} of {args.world_size}, "
              f"GLOO_SOCKET_IFNAME={env.get('GLOO_SOCKET_IFNAME', '')}")
    dist.init_process_group("gloo", init_method=f"tcp://{args.master_addr}:{args.master_port}", rank=rank,
                            world_size=args.world_size, timeout=datetime.timedelta(seconds=args.timeout_s))
    images, labels = make_batch(args, rank)
    numel = sum(p.numel() for p in make_model(args).parameters())

    result = {"rank": rank, "loadavg_start": loadavg(), "phases": {}}
    for phase in phases:
        log(rank, f"{phase}: load {loadavg()}")
        load_before = loadavg()
        t0 = time.perf_counter()
        if phase == "compute":
            out = phase_compute(args, rank, images, labels)
        elif phase == "allreduce":
            out = phase_allreduce(args, rank, numel)
        elif phase == "allreduce_sizes":
            sizes = [4, 1 << 20] + expected_buckets(make_model(args), args.bucket_cap_mb)
            out = phase_allreduce_sizes(args, rank, sizes)
        else:
            out = phase_ddp(args, rank, images, labels)
        out["wall_s"] = round(time.perf_counter() - t0, 3)
        out["loadavg_before"] = load_before
        out["loadavg_after"] = loadavg()
        result["phases"][phase] = out
        log(rank, f"{phase}: done in {out['wall_s']} s")
    result["loadavg_end"] = loadavg()

    everyone = [None] * args.world_size
    dist.all_gather_object(everyone, result)
    dist.barrier()
    dist.destroy_process_group()
    if rank == 0:
        print(json.dumps({
            "torch": torch.__version__,
            "python": platform.python_version(),
            "backend": "gloo",
            "world_size": args.world_size,
            "nproc": os.cpu_count(),
            "threads_per_process": args.threads,
            "model": "resnet18",
            "parameters": numel,
            "input": list(BATCH_SHAPE),
            "classes": CLASSES,
            "batch_per_process": args.batch,
            "warmup": args.warmup,
            "iters": args.iters,
            "bucket_cap_mb": args.bucket_cap_mb,
            "first_bucket_bytes": dist._DEFAULT_FIRST_BUCKET_BYTES,
            "optimizer": {"name": "sgd", "lr": args.lr, "momentum": args.momentum},
            "ranks": everyone,
        }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
