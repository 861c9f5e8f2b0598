"""Column targets at the torch level, timed the competition's way
(leaderboard/core.Timer), median of interleaved samples: torch.ops.redux.sum
vs torch.sum in fp32, fp16 and fp64, for the redux built in this checkout,
and the same op called through torch's own packet route
(OpOverloadPacket.__call__, without redux's eager entry). To A/B
two versions of the columns family, build and run it in each.
Run on the GPU: python bench/cols_ab.py [DTYPE ...] (default float32 float16
float64)"""
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import redux  # noqa: F401,E402
from leaderboard import core  # noqa: E402

SHAPES = [((8192, 8192), [0]), ((2048, 65536), [0]), ((256, 4096, 64), [1])]


def main():
    timer = core.Timer("cuda")
    route = torch._ops.OpOverloadPacket.__call__
    names = sys.argv[1:] or ["float32", "float16", "float64"]
    for dtype in (getattr(torch, name) for name in names):
        for shape, dim in SHAPES:
            x = torch.randn(shape, device="cuda", dtype=dtype) + 3
            ops = {"torch": lambda t: torch.sum(t, dim), "redux": lambda t: torch.ops.redux.sum(t, dim),
                   "route": lambda t: route(torch.ops.redux.sum, t, dim)}
            samples = {k: [] for k in ops}
            for f in ops.values():
                f(x)
            for _ in range(40):
                for k, f in ops.items():
                    samples[k].append(timer(f, x)[1] / 1e3)
            med = {k: statistics.median(v) for k, v in samples.items()}
            print(f"cols {str(dtype).replace('torch.', ''):8s} {str(shape):18s} torch {med['torch']:8.2f} us  "
                  f"redux {med['redux']:8.2f} us  ratio {med['redux'] / med['torch']:.3f}  "
                  f"(through torch's route {med['route']:8.2f} us, {med['route'] / med['torch']:.3f})", flush=True)


if __name__ == "__main__":
    main()
