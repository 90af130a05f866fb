"""The project's resnet18 (core/model/resnet.cc) in plain PyTorch.

Same layers, names and parameter registration order as the C++ model, so
that DistributedDataParallel cuts its gradient buckets from the same list of
tensors as the simulator's ddp: a CIFAR-style stem (3x3 stride 1, no
max-pooling), four stages of two BasicBlocks (64, 128, 256, 512 channels,
stride 2 from the second stage on), a projection shortcut only where the
shape changes, BatchNorm, global average pooling and one linear layer.
11,172,810 parameters for 1x28x28 inputs and 10 classes.

    python3 resnet18.py [--check cxx_resnet18_params.txt]

prints the parameter names and shapes in the C++ model's order and, with
--check, compares them with the list dumped from the C++ model
(dump_cxx_params.cc).
"""

import argparse
import sys

import torch
import torch.nn.functional as F
from torch import nn

STAGE_WIDTHS = (64, 128, 256, 512)
BLOCKS_PER_STAGE = 2


def conv(cin, cout, kernel, stride):
    return nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, bias=False)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        # Attribute order is registration order; it must follow resnet.cc.
        self.conv1 = conv(cin, cout, 3, stride)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = conv(cout, cout, 3, 1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(conv(cin, cout, 1, stride), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (self.shortcut(x) if self.shortcut is not None else x))


class ResNet18(nn.Module):
    def __init__(self, channels=1, classes=10):
        super().__init__()
        self.conv1 = conv(channels, STAGE_WIDTHS[0], 3, 1)
        self.bn1 = nn.BatchNorm2d(STAGE_WIDTHS[0])
        cin = STAGE_WIDTHS[0]
        for stage, width in enumerate(STAGE_WIDTHS):
            blocks = []
            for b in range(BLOCKS_PER_STAGE):
                stride = 2 if stage > 0 and b == 0 else 1
                blocks.append(BasicBlock(cin, width, stride))
                cin = width
            setattr(self, f"layer{stage + 1}", nn.Sequential(*blocks))
        self.fc = nn.Linear(cin, classes)
        # torchvision's init, as resnet.cc does (timing does not depend on it,
        # but the model should be the same one).
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        for stage in range(1, len(STAGE_WIDTHS) + 1):
            x = getattr(self, f"layer{stage}")(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def parameter_lines(model):
    """One line per parameter, 'name dim dim ...', in registration order."""
    return [" ".join([name] + [str(s) for s in p.shape]) for name, p in model.named_parameters()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", help="the C++ model's parameter list (dump_cxx_params.cc)")
    args = parser.parse_args()
    model = ResNet18()
    lines = parameter_lines(model)
    total = sum(p.numel() for p in model.parameters())
    for line in lines:
        print(line)
    print(f"total {total}")
    if args.check:
        with open(args.check) as f:
            expected = [line.strip() for line in f if line.strip() and not line.startswith("buffer ")]
        if expected != lines + [f"total {total}"]:
            print(f"MISMATCH with {args.check}", file=sys.stderr)
            return 1
        print(f"same names, shapes, order and total as {args.check}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
