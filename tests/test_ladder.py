"""The kernel ladder: every rung against the fp64 reference (CUDA), clear
errors elsewhere, and the variants table held to the registered ops."""
import pytest
import torch

import redux
from conftest import cuda
from leaderboard import core

RUNGS = [v.name for v in redux.VARIANTS if not v.general]
SIZES = [1, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 2048, 4096, 4097, 65537, 2**20 + 3, 3_000_017]


def test_variants_table_is_the_registered_ops():
    registered = {n.split("::")[1] for n in torch._C._dispatch_get_all_op_names() if n.startswith("redux::")}
    public = {n for n in registered if not n.startswith("_")}
    # mean, var, ..., softmax are torch's ops on the product's sum, amax and amin its other reductions:
    # not sum variants the harness scores
    others = {"mean", "var", "std", "var_mean", "logsumexp", "softmax", "log_softmax", "vector_norm", "amax", "amin"}
    assert public == {v.name for v in redux.VARIANTS} | others, "VARIANTS and the C++ registrations disagree"
    assert len(RUNGS) == 8 and "sum" not in RUNGS
    for v in redux.VARIANTS:
        assert v.idea and isinstance(v.deterministic, bool)


@pytest.mark.parametrize("rung", RUNGS)
def test_rungs_reject_cpu_tensors(rung):
    with pytest.raises(RuntimeError, match=f"redux.{rung}: argument 'x' is on cpu"):
        getattr(torch.ops.redux, rung)(torch.ones(8))


@cuda
@pytest.mark.cuda
@pytest.mark.parametrize("rung", RUNGS)
@pytest.mark.parametrize("n", SIZES)
def test_rung_matches_fp64_reference(rung, n):
    data = core.generate_input(n, seed=n * 7 + 1)
    got = getattr(torch.ops.redux, rung)(data[0])
    ref = core.reference(data[0])
    assert got.shape == () and got.dtype == torch.float32
    assert core.check(got, ref) == ""
    # tighter than the competition: fp64 accumulation (cub: fp32) gives ~1 ulp
    tol = 2e-6 if rung == "sum_cub" else 2**-22
    assert abs(got.item() - ref.item()) <= tol * abs(ref.item()) + 1e-6


@cuda
@pytest.mark.cuda
@pytest.mark.parametrize("rung", RUNGS)
def test_rung_inputs(rung):
    op = getattr(torch.ops.redux, rung)
    with pytest.raises(RuntimeError, match=f"redux.{rung}: argument 'x' must be a 1-D float32"):
        op(torch.ones(4, 4, device="cuda"))
    with pytest.raises(RuntimeError, match="argument 'x' must be a 1-D float32"):
        op(torch.ones(16, device="cuda", dtype=torch.float64))
    assert op(torch.empty(0, device="cuda")).item() == 0.0
    base = core.generate_input(100_003, seed=3)[0]
    for x in (base[1:], base[::3]):  # misaligned start, strided
        assert core.check(op(x), core.reference(x)) == ""


@cuda
@pytest.mark.cuda
def test_deterministic_rungs_are_bitwise_stable():
    x = core.generate_input(13_107_200, seed=5)[0]
    for v in redux.VARIANTS:
        if v.deterministic and not v.general:
            op = getattr(torch.ops.redux, v.name)
            first = op(x)
            for _ in range(5):
                assert torch.equal(op(x), first), v.name


@cuda
@pytest.mark.cuda
@pytest.mark.parametrize("pattern", ["grid-stride", "pieces"])
@pytest.mark.parametrize("evict_first", [False, True])
def test_read_probe_reads_everything(evict_first, pattern):
    # 2^20 + 12 floats: the pieces pattern's last block holds 3 vectors
    x = torch.rand((1 << 20) + 12, device="cuda")
    for i in (0, 123457, (1 << 20) + 11):  # the probe's per-block max of |x| must see each
        x[i] = 7.5
        assert torch.ops.redux._read_probe(x, evict_first, pattern).max().item() == 7.5, (pattern, i)
        x[i] = 0.5
    with pytest.raises(RuntimeError, match="argument 'x' must start at a 16-byte aligned address"):
        torch.ops.redux._read_probe(x[1:], evict_first, pattern)


@cuda
@pytest.mark.cuda
def test_read_probe_names_a_bad_pattern():
    with pytest.raises(RuntimeError, match="argument 'pattern' must be 'grid-stride' or 'pieces', got 'slabs'"):
        torch.ops.redux._read_probe(torch.rand(64, device="cuda"), False, "slabs")
