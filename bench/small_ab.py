"""Full sums around one wide chunk (the sizes a lone block sums, up to
2048 16-byte vectors, and two chunks past them), timed the competition's way (leaderboard/core.Timer:
L2 evicted, CUDA events around the call), medians of interleaved samples:
torch.ops.redux.sum beside torch.sum, for the redux that `import redux`
finds. To A/B two builds, run it once per build (PYTHONPATH naming each
build's package) and alternate the runs.
Run on the GPU: PYTHONPATH=. python bench/small_ab.py [--label NAME]"""
import argparse
import os
import statistics
import sys

import torch

import redux  # noqa: F401  (the build under test: whatever PYTHONPATH names)

sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from leaderboard import core  # noqa: E402

# Elements of fp32: the short kernel's range (<= 1024), then one chunk's
# (1025-8192), then two chunks.
SIZES = [1024, 1025, 2048, 4096, 6144, 8192, 8193, 16384]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", default="redux", help="this build's name in the output")
    ap.add_argument("--samples", type=int, default=200)
    args = ap.parse_args(argv)
    timer = core.Timer("cuda")
    for dtype in (torch.float32, torch.float16):
        scale = 4 // torch.empty((), dtype=dtype).element_size()  # the same vectors in fp16
        for n in SIZES:
            x = torch.randn(n * scale, device="cuda", dtype=dtype) + 3
            ops = {"torch": torch.sum, "redux": torch.ops.redux.sum}
            samples = {k: [] for k in ops}
            for f in ops.values():
                f(x)
            for _ in range(args.samples):
                for k, f in ops.items():
                    samples[k].append(timer(f, x)[1] / 1e3)
            med = {k: statistics.median(v) for k, v in samples.items()}
            print(f"small {args.label:8s} {str(dtype).replace('torch.', ''):8s} n={n * scale:<6d} "
                  f"torch {med['torch']:6.2f} us  redux {med['redux']:6.2f} us  ratio "
                  f"{med['redux'] / med['torch']:.3f}", flush=True)


if __name__ == "__main__":
    main()
