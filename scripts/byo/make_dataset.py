#!/usr/bin/python3
"""A dataset file for `dataset: {name: npz, file: FILE}` (docs/byo.md).

The format, read by core/data/npz_dataset.h: one NumPy .npz holding
  x_train, y_train, x_test, y_test   images [N, C, H, W] (or [N, H, W]) as uint8
                                     or float32, labels as integers 0..K-1
  x_val, y_val                       optional: the split learning rates are
                                     tuned on (else a fixed tenth of x_train)
  classes                            optional: K (else max label + 1)
  mean, std                          optional: per-channel normalisation (else
                                     x_train's statistics)

Three sources:
  --kind fashion-mnist  a random subset (--train/--val/--test images) of
                    Fashion-MNIST from the IDX files Debian's
                    dataset-fashion-mnist installs (--idx-dir)
  --kind patterns   a learnable synthetic task: each class is a fixed random
                    pattern, each image that pattern shifted by up to two
                    pixels plus noise (numpy only; what the tests use)
  --kind arrays     your own arrays: --arrays FILE.npz holding x and y (or
                    x_train/y_train and x_test/y_test) in any layout numpy
                    reads; NHWC images are transposed when --nhwc is given,
                    and a test split is cut off when the file has none

  /usr/bin/python3 scripts/byo/make_dataset.py --out data.npz --kind patterns --shape 1 28 28 --classes 10
"""
import argparse
import gzip
import os

import numpy as np


def patterns(args):
    rng = np.random.default_rng(args.seed)
    c, h, w = args.shape
    templates = rng.integers(0, 256, size=(args.classes, c, h, w)).astype(np.float32)

    def draw(n):
        labels = rng.integers(0, args.classes, size=n)
        images = templates[labels]
        shifts = rng.integers(-2, 3, size=(n, 2))
        images = np.stack([np.roll(img, tuple(s), axis=(1, 2)) for img, s in zip(images, shifts)])
        images = images * 0.6 + rng.normal(0, args.noise, size=images.shape) + 50
        return np.clip(images, 0, 255).astype(np.uint8), labels.astype(np.int64)

    out = {}
    out["x_train"], out["y_train"] = draw(args.train)
    out["x_test"], out["y_test"] = draw(args.test)
    if args.val > 0:
        out["x_val"], out["y_val"] = draw(args.val)
    out["classes"] = np.int32(args.classes)
    return out


def read_idx(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        raw = f.read()
    dims = raw[3]
    shape = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def fashion_mnist(args):
    def split(stem):
        images = read_idx(os.path.join(args.idx_dir, f"{stem}-images-idx3-ubyte.gz"))
        labels = read_idx(os.path.join(args.idx_dir, f"{stem}-labels-idx1-ubyte.gz"))
        return images[:, None, :, :], labels.astype(np.int64)

    rng = np.random.default_rng(args.seed)
    x, y = split("train")
    order = rng.permutation(len(x))
    take = order[:args.train + args.val]
    out = {"x_train": x[take[:args.train]], "y_train": y[take[:args.train]]}
    if args.val > 0:
        out["x_val"], out["y_val"] = x[take[args.train:]], y[take[args.train:]]
    x, y = split("t10k")
    pick = rng.permutation(len(x))[:args.test]
    out["x_test"], out["y_test"] = x[pick], y[pick]
    out["classes"] = np.int32(10)
    return out


def from_arrays(args):
    data = np.load(args.arrays)
    rng = np.random.default_rng(args.seed)
    if "x_train" in data.files:
        out = {k: data[k] for k in data.files}
    else:
        x, y = data["x"], data["y"]
        order = rng.permutation(len(x))
        cut = len(x) - max(1, len(x) // 6)
        out = {"x_train": x[order[:cut]], "y_train": y[order[:cut]],
               "x_test": x[order[cut:]], "y_test": y[order[cut:]]}
    for key in [k for k in out if k.startswith("x_")]:
        if args.nhwc and out[key].ndim == 4:
            out[key] = out[key].transpose(0, 3, 1, 2)
        out[key] = np.ascontiguousarray(out[key])
        if out[key].dtype not in (np.uint8, np.float32):
            out[key] = out[key].astype(np.float32)
    for key in [k for k in out if k.startswith("y_")]:
        out[key] = out[key].astype(np.int64).reshape(-1)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--kind", choices=["fashion-mnist", "patterns", "arrays"], default="patterns")
    parser.add_argument("--shape", type=int, nargs=3, default=[1, 28, 28], metavar=("C", "H", "W"))
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--train", type=int, default=4000)
    parser.add_argument("--val", type=int, default=500, help="0: no x_val (a tenth of x_train is held out)")
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=60.0, help="patterns: pixel noise (standard deviation)")
    parser.add_argument("--arrays", help="arrays: the .npz to convert")
    parser.add_argument("--idx-dir", default=os.environ.get("ST_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist"),
                        help="fashion-mnist: the IDX files' folder")
    parser.add_argument("--nhwc", action="store_true", help="arrays: images are [N, H, W, C]")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    out = {"fashion-mnist": fashion_mnist, "patterns": patterns, "arrays": from_arrays}[args.kind](args)
    np.savez(args.out, **out)
    sizes = ", ".join(f"{k} {tuple(v.shape)} {v.dtype}" for k, v in out.items())
    print(f"wrote {args.out}: {sizes}")


if __name__ == "__main__":
    main()
