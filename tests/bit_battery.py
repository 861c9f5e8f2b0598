"""The bit-identity battery: a fixed set of sums (and of softmax,
log_softmax and logsumexp rows) whose output bits are
recorded once (tests/bit_digests.json) and must never change unless a change
of the reduction tree is announced and the digests are re-recorded on
purpose.

Inputs are made on the CPU from fixed seeds with integer arithmetic only
(random mantissas and exponents, combined with ldexp, plus an offset), so
they are the same bits on every machine; then moved to the device under test.
Each case's digest is the SHA-256 of its output's bytes.

    python tests/bit_battery.py record cpu    # rewrite the CPU digests
    python tests/bit_battery.py record cuda   # rewrite the CUDA digests (on a GPU)
    python tests/bit_battery.py check cuda    # compare, print mismatches
"""
import hashlib
import json
import os
import sys

import torch

DIGESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bit_digests.json")

FLOATS = (torch.float32, torch.float16, torch.bfloat16, torch.float64)


def make_input(shape, dtype, seed):
    """Values m * 2^e + 3 with m in [-2^20, 2^20), e in [-24, 2): exact in
    fp64, many exponents; integers in [-1000, 1000) for integer dtypes."""
    g = torch.Generator().manual_seed(seed)
    numel = 1
    for s in shape:
        numel *= s
    if not dtype.is_floating_point:
        return torch.randint(-1000, 1000, (numel,), generator=g, dtype=torch.int64).to(dtype).reshape(shape)
    m = torch.randint(-(1 << 20), 1 << 20, (numel,), generator=g, dtype=torch.int64)
    e = torch.randint(-24, 2, (numel,), generator=g, dtype=torch.int32)
    x = torch.ldexp(m.to(torch.float64), e) + 3.0
    return x.to(dtype).reshape(shape)


def _cases():
    """(name, shape, input dtype, view or exponential op, dim, result dtype)
    for every case."""
    full_sizes = [1, 2, 3, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 4095, 4096, 4097, 65535, 65536, 65537,
                  (1 << 20) - 1, (1 << 20) + 3, (1 << 22) + 1, (1 << 24) + 7, (1 << 26) + 5]
    for n in full_sizes:
        yield f"full_f32_{n}", (n,), torch.float32, None, None, None
    for dt in (torch.float16, torch.bfloat16, torch.float64, torch.int32):
        for n in (1, 33, 1025, 65537, (1 << 20) + 3, (1 << 23) + 9):
            yield f"full_{str(dt)[6:]}_{n}", (n,), dt, None, None, None
    for n in (1025, (1 << 22) + 1):
        yield f"full_f32_to_f64_{n}", (n,), torch.float32, None, None, torch.float64
        yield f"full_f16_to_f32_{n}", (n,), torch.float16, None, None, torch.float32
    rows = [(3, 1000), (64, 4097), (1000, 33), (7, 70000), (4, (1 << 20) + 1), (2048, 1024), (5, 3)]
    for dt in (torch.float32, torch.float16, torch.float64, torch.int64):
        for shape in rows:
            yield f"rows_{str(dt)[6:]}_{shape[0]}x{shape[1]}", shape, dt, None, [-1], None
    cols = [(1, 1000, 3), (2, 4099, 64), (1, 8192, 1025), (3, 5000, 130), (256, 512, 64), (1, 70000, 16)]
    for dt in (torch.float32, torch.bfloat16, torch.float64, torch.int64):
        for shape in cols:
            yield f"cols_{str(dt)[6:]}_{'x'.join(map(str, shape))}", shape, dt, None, [1], None
    for dt in (torch.float32, torch.float16):
        yield f"cols2d_{str(dt)[6:]}_8192x513", (8192, 513), dt, None, [0], None
    # Strided views: the plan reads dense layouts in memory order, copies others.
    yield "view_transpose_f32", (1000, 700), torch.float32, "t", [1], None
    yield "view_every_other_f32", (512, 2000), torch.float32, "step2", [1], None
    yield "view_channels_last_f32", (4, 33, 17, 19), torch.float32, "channels_last", [1], None
    yield "view_channels_last_hw_f16", (4, 33, 17, 19), torch.float16, "channels_last", [2, 3], None
    yield "view_offset_f32", (1 << 20) + 7, torch.float32, "offset1", None, None
    yield "multi_dim_f32", (6, 50, 7, 40), torch.float32, None, [0, 2], None
    yield "keep_all_f64", (9, 11, 13), torch.float64, None, [0, 1, 2], None
    # The exponential rows (inputs scaled into exp's range): a warp's and the
    # block's rows, kept in registers or read again, aligned or not, long rows.
    exp_rows = [(2048, 1024), (300, 512), (1000, 33), (64, 4096), (3, 8200), (7, 70000), (5, 3)]
    for op in EXP_OPS:
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            for shape in exp_rows:
                yield f"{op}_{str(dt)[6:]}_{shape[0]}x{shape[1]}", shape, dt, op, [-1], None


EXP_OPS = ("softmax", "log_softmax", "logsumexp")
EXP_SCALE = 2.0 ** -18  # a power of two: the scaled values stay exact in fp64


def case_input(shape, dt, view, seed):
    """The battery's input; an exponential op's is scaled about its offset
    into [-5, 11] in fp64, then rounded to dt."""
    if view not in EXP_OPS:
        return make_input(shape, dt, seed)
    return ((make_input(shape, torch.float64, seed) - 3.0) * EXP_SCALE + 3.0).to(dt)


def result(x, view, dim, rdt):
    """The case's output: the sum, or the exponential op that view names, along dim."""
    if view in ("softmax", "log_softmax"):
        return getattr(torch.ops.redux, view)(x, dim[0])
    if view == "logsumexp":
        return torch.ops.redux.logsumexp(x, dim)
    return torch.ops.redux.sum(apply_view(x, view), dim, False, dtype=rdt)


def apply_view(x, view):
    if view is None:
        return x
    if view == "t":
        return x.t()
    if view == "step2":
        return x[:, ::2]
    if view == "channels_last":
        return x.contiguous(memory_format=torch.channels_last)
    if view == "offset1":
        return x[1:]
    raise ValueError(view)


def run(device):
    """{case name: sha256 of the output bytes} on `device`."""
    out = {}
    for seed, (name, shape, dt, view, dim, rdt) in enumerate(_cases()):
        shape = (shape,) if isinstance(shape, int) else shape
        y = result(case_input(shape, dt, view, 1000 + seed).to(device), view, dim, rdt)
        data = y.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
        out[name] = hashlib.sha256(data).hexdigest()
    return out


def load():
    if not os.path.exists(DIGESTS):
        return {}
    with open(DIGESTS) as f:
        return json.load(f)


def main(argv):
    if len(argv) != 2 or argv[0] not in ("record", "check") or argv[1] not in ("cpu", "cuda"):
        print(__doc__)
        return 2
    import redux  # noqa: F401
    action, device = argv
    got = run(device)
    if action == "record":
        data = load()
        data[device] = got
        with open(DIGESTS, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"recorded {len(got)} {device} digests in {DIGESTS}")
        return 0
    want = load().get(device, {})
    bad = [k for k in want if got.get(k) != want[k]]
    print(f"{len(want) - len(bad)} of {len(want)} {device} cases have the recorded bits; mismatches: {bad}")
    return 1 if bad or not want else 0


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main(sys.argv[1:]))
