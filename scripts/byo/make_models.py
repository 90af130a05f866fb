#!/usr/bin/python3
"""Example TorchScript models for `model: {torchscript: FILE}` (docs/byo.md).

Writes, for images of --input C H W and --classes K:
  cnn.pt          the zoo's `cnn` (core/model/cnn.cc) layer for layer, scripted:
                  the tests compare its per-layer gradient readiness, FLOPs and
                  arithmetic with the built-in one's
  resnet.pt       a small ResNet (three stages of basic blocks, BatchNorm), scripted
  transformer.pt  a small vision transformer (patch embedding, two pre-norm
                  encoder blocks, class token), scripted
  cnn-traced.pt   the cnn through torch.jit.trace instead of torch.jit.script

Each file carries stellatrain.json ({"input": [C, H, W], "classes": K}), which
the engine checks against the dataset. Needs PyTorch: Debian's python3-torch
(/usr/bin/python3), or any PyTorch whose TorchScript LibTorch 1.13 reads.

  /usr/bin/python3 scripts/byo/make_models.py --out models --input 1 28 28 --classes 10
"""
import argparse
import json
import os

import torch
from torch import nn
import torch.nn.functional as F


class Cnn(nn.Module):
    """Two 3x3 convolutions (32, 64 channels) with ReLU and 2x2 pooling, then
    fc 128 and fc K: registered in the zoo's order and names."""

    def __init__(self, channels: int, height: int, width: int, classes: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 32, 3, padding=1)
        self.conv2 = nn.Conv2d(32, 64, 3, padding=1)
        self.fc1 = nn.Linear(64 * (height // 4) * (width // 4), 128)
        self.fc2 = nn.Linear(128, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(x.flatten(1)))
        return self.fc2(x)


class BasicBlock(nn.Module):
    def __init__(self, inputs: int, outputs: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.shortcut = nn.Sequential()
        if stride != 1 or inputs != outputs:
            self.shortcut = nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride=stride, bias=False),
                                          nn.BatchNorm2d(outputs))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class SmallResNet(nn.Module):
    """A CIFAR-style ResNet: 3x3 stem, stages of 16, 32, 64 channels (one basic
    block each, the later ones with stride 2), global pooling, linear."""

    def __init__(self, channels: int, classes: int):
        super().__init__()
        self.stem = nn.Conv2d(channels, 16, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.layer1 = BasicBlock(16, 16, 1)
        self.layer2 = BasicBlock(16, 32, 2)
        self.layer3 = BasicBlock(32, 64, 2)
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = F.relu(self.bn(self.stem(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class EncoderBlock(nn.Module):
    def __init__(self, dim: int, heads: int, hidden: int):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        batch, tokens, dim = x.shape
        head = dim // self.heads
        qkv = self.qkv(self.norm1(x)).reshape(batch, tokens, 3, self.heads, head).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attention = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / (head ** 0.5), dim=-1)
        mixed = torch.matmul(attention, v).transpose(1, 2).reshape(batch, tokens, dim)
        x = x + self.proj(mixed)
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class SmallTransformer(nn.Module):
    """A vision transformer: patches of `patch` pixels embedded by a strided
    convolution, a class token, learned positions, two encoder blocks."""

    def __init__(self, channels: int, height: int, width: int, classes: int, patch: int = 4, dim: int = 64):
        super().__init__()
        self.embed = nn.Conv2d(channels, dim, patch, stride=patch)
        tokens = (height // patch) * (width // patch) + 1
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.positions = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        self.block1 = EncoderBlock(dim, 4, 2 * dim)
        self.block2 = EncoderBlock(dim, 4, 2 * dim)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.positions
        x = self.block2(self.block1(x))
        return self.head(self.norm(x[:, 0]))


def save(module, path, metadata):
    torch.jit.save(module, path, _extra_files={"stellatrain.json": json.dumps(metadata)})
    print(f"wrote {path}: {sum(p.numel() for p in module.parameters())} parameters")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="folder for the .pt files")
    parser.add_argument("--input", type=int, nargs=3, default=[1, 28, 28], metavar=("C", "H", "W"))
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--models", default="cnn,resnet,transformer,cnn-traced")
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed before each model")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    c, h, w = args.input
    metadata = {"input": [c, h, w], "classes": args.classes}
    for name in args.models.split(","):
        torch.manual_seed(args.seed)
        if name == "cnn":
            module = torch.jit.script(Cnn(c, h, w, args.classes))
        elif name == "cnn-traced":
            module = torch.jit.trace(Cnn(c, h, w, args.classes), torch.zeros(2, c, h, w))
        elif name == "resnet":
            module = torch.jit.script(SmallResNet(c, args.classes))
        elif name == "transformer":
            module = torch.jit.script(SmallTransformer(c, h, w, args.classes))
        else:
            parser.error(f"unknown model {name} (cnn, resnet, transformer, cnn-traced)")
        save(module, os.path.join(args.out, f"{name}.pt"), metadata)


if __name__ == "__main__":
    main()
