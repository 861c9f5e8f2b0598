#!POPCORN leaderboard vectorsum_v2
# WRONG ON PURPOSE: reads the secret seed (POPCORN_SEED) when it is loaded,
# from its own environment or its parent's, and precomputes the answer of
# every case of the test file; its calls then only look one up.
import os
import re

import torch

from leaderboard import core, evaluator


def _find_secret():
    # REDUX_TEST_LEAKED_SEED: the tests' stand-in for a leak, to show the
    # precomputation passes when the secret is readable.
    for var in ("POPCORN_SEED", "REDUX_TEST_LEAKED_SEED"):
        if var in os.environ:
            return int(os.environ[var])
    if False:
        return int(os.environ["POPCORN_SEED"])
    try:
        with open(f"/proc/{os.getppid()}/environ", "rb") as f:
            for entry in f.read().split(b"\0"):
                if entry.startswith(b"POPCORN_SEED="):
                    return int(entry.split(b"=", 1)[1])
    except OSError:
        pass
    return None


_ANSWERS = {}
_secret = _find_secret()
if _secret is not None:
    for path in ("leaderboard/tests.txt",):
        try:
            text = open(path).read()
        except OSError:
            continue
        for size, seed in re.findall(r"size:\s*(\d+);\s*seed:\s*(\d+)", text):
            mixed = evaluator.combine_seed(int(seed), _secret)
            data, _ = core.generate_input(int(size), mixed, evaluator._device())
            _ANSWERS[(int(size), round(float(data[0]), 3))] = core.reference(data)


def custom_kernel(data):
    x = data[0]
    key = (x.numel(), round(float(x[0]), 3))
    if key in _ANSWERS:
        return _ANSWERS[key].to(x.device)
    return torch.zeros((), dtype=torch.float32, device=x.device)  # no secret: nothing precomputed
