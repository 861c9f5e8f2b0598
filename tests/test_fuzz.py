"""Seeded fuzz against torch.sum and the fp64 reference: random shapes (0-5
dims, 0-size dims anywhere), dims, keepdim, input and output dtypes, views
(transpose, permute, step slices, storage offsets, expand, channels_last)
and value distributions (offset normals, wide magnitudes, subnormals, NaN and
inf, integers). REDUX_FUZZ_CASES sets the count (default 2000 per device);
REDUX_FUZZ_SEED the seed. Zero mismatches in shape, dtype or value allowed."""
import os
import random

import pytest
import torch

from conftest import DEVICES, assert_matches

CASES = int(os.environ.get("REDUX_FUZZ_CASES", "2000"))
SEED = int(os.environ.get("REDUX_FUZZ_SEED", "20261122"))
IN_DTYPES = [torch.float32, torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
             torch.uint8, torch.bool]
OUT_DTYPES = [None, None, None, torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64]


def _values(rng, shape, dtype, device):
    g = torch.Generator().manual_seed(rng.randrange(2**31))
    kind = rng.choice(["offset", "offset", "wide", "subnormal", "special", "small"])
    if dtype == torch.bool:
        return (torch.rand(shape, generator=g) > 0.5).to(device)
    if not dtype.is_floating_point:
        lo = 0 if dtype == torch.uint8 else -100
        return torch.randint(lo, 100, shape, generator=g).to(dtype).to(device)
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    if kind == "offset":
        x = x * rng.uniform(0.1, 10) + rng.uniform(-100, 100)
    elif kind == "wide":
        x = x * torch.exp2(torch.randint(-20, 20, shape, generator=g).double())
    elif kind == "subnormal":
        tiny = {torch.float32: 1e-40, torch.float64: 1e-310, torch.float16: 1e-6, torch.bfloat16: 1e-39}[dtype]
        x = x * tiny
    elif kind == "small":
        x = x * 1e-3
    x = x.to(dtype)
    if kind == "special" and x.numel() > 0:
        flat = x.view(-1)
        for v in (float("nan"), float("inf"), float("-inf")):
            if rng.random() < 0.5:
                flat[rng.randrange(flat.numel())] = v
    return x.to(device)


def _view(rng, x):
    """A random non-trivial view of x with the same values semantics."""
    kind = rng.choice(["none", "none", "transpose", "permute", "step", "offset", "expand", "channels_last"])
    if kind == "transpose" and x.dim() >= 2:
        return x.transpose(0, -1)
    if kind == "permute" and x.dim() >= 2:
        perm = list(range(x.dim()))
        rng.shuffle(perm)
        return x.permute(perm)
    if kind == "step" and x.dim() >= 1:
        d = rng.randrange(x.dim())
        return x.narrow(d, 0, x.size(d)).__getitem__((slice(None),) * d + (slice(None, None, rng.choice([2, 3])),))
    if kind == "offset" and x.numel() > 0:
        k = rng.randrange(1, 8)
        flat = torch.empty(x.numel() + k, dtype=x.dtype, device=x.device)
        flat[k:].copy_(x.reshape(-1))
        return flat[k:].view(x.shape)
    if kind == "expand" and x.dim() >= 1:
        d = rng.randrange(x.dim())
        sizes = list(x.shape)
        sizes[d] = rng.choice([1, 3])
        base = x.narrow(d, 0, min(1, x.size(d)))
        if base.size(d) == 1:
            return base.expand(*sizes)
    if kind == "channels_last" and x.dim() == 4:
        return x.contiguous(memory_format=torch.channels_last)
    return x


def _case(rng, device):
    ndim = rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5])
    shape = []
    for _ in range(ndim):
        r = rng.random()
        shape.append(0 if r < 0.04 else 1 if r < 0.15 else rng.choice([2, 3, 7, 16, 31, 33, 64, 100, 257]))
    while shape and torch.Size(shape).numel() > 300_000:
        shape[rng.randrange(len(shape))] = rng.choice([1, 2, 3])
    dtype = rng.choice(IN_DTYPES)
    x = _view(rng, _values(rng, tuple(shape), dtype, device))
    if rng.random() < 0.2 or x.dim() == 0:
        dim = rng.choice([None, []]) if x.dim() else rng.choice([None, [], [0], [-1]])
    else:
        k = rng.randrange(1, x.dim() + 1)
        dim = rng.sample(range(x.dim()), k)
        dim = [d - x.dim() if rng.random() < 0.3 else d for d in dim]
    keepdim = rng.random() < 0.4
    out = rng.choice(OUT_DTYPES)
    return x, dim, keepdim, out


@pytest.mark.parametrize("device", DEVICES)
def test_fuzz_against_torch_sum(device):
    rng = random.Random(SEED + (0 if device == "cpu" else 1))
    for i in range(CASES):
        x, dim, keepdim, out = _case(rng, device)
        got = torch.ops.redux.sum(x, dim, keepdim, dtype=out)
        ref_dim = None if not dim and not keepdim else (dim if dim else list(range(x.dim())))
        try:
            assert_matches(got, x, ref_dim, keepdim, dtype=out)
        except AssertionError as e:
            raise AssertionError(f"case {i}: shape {tuple(x.shape)} strides {x.stride()} {x.dtype} dim={dim} "
                                 f"keepdim={keepdim} dtype={out}: {e}") from e
