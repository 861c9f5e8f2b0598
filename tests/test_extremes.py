"""redux.amax and redux.amin: torch.amax's and torch.amin's values, shapes,
dtypes and errors; bits that depend on the values alone (-0 below +0, any
NaN the canonical NaN); torch's gradients (backward, double backward,
forward mode); Meta, torch.compile, vmap and opcheck. A maximum is exact, so
every check against torch is bit for bit (torch.equal), on fresh offset data
at lengths around powers of two, vector widths and the kernels' segment
boundaries, for the rows, columns and full forms."""
import struct

import pytest
import torch

import redux
from conftest import DEVICES, on_one_thread, random_tensor

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
          torch.int8, torch.uint8, torch.bool]
OPS = [(redux.amax, torch.amax), (redux.amin, torch.amin)]
# reduced lengths: around vector widths, a warp's row (4 KB), the CPU's pieces
# (32768) and the CUDA segments (2048-element quanta), powers of two
LENGTHS = [1, 2, 7, 8, 9, 31, 33, 255, 256, 257, 1023, 1025, 4095, 4097, 8193, 32767, 32769, 65537]


def same(got, want):
    assert got.shape == want.shape and got.dtype == want.dtype and got.device == want.device
    assert torch.equal(got.cpu(), want.cpu()), f"{got} != {want}"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_rows_columns_and_full_reductions_are_torchs(device, dtype):
    for i, n in enumerate(LENGTHS):
        for shape, dim in (((3, n), 1), ((n, 5), 0), ((n,), ()), ((2, n, 3), 1), ((2, 3, n), (0, 2))):
            x = random_tensor(shape, dtype, device, seed=i)
            for mine, torchs in OPS:
                for keepdim in (False, True):
                    same(mine(x, dim, keepdim), torchs(x, dim, keepdim))


@pytest.mark.parametrize("device", DEVICES)
def test_long_rows_and_tall_columns_cut_into_segments(device):
    """Few rows or columns of many elements: the kernels cut n into
    segments and reduce their extremes again."""
    for shape, dim in (((1, 3_000_001), 1), ((2, 1 << 20), 1), ((1 << 20, 3), 0), ((3, 300_007, 2), 1),
                       ((1 << 22,), ()), ((20_000, 256), 0), ((4096, 1000), 0), ((2, 5000, 64), 1)):
        for dtype in (torch.float32, torch.bfloat16, torch.int64):
            x = random_tensor(shape, dtype, device, seed=7)
            for mine, torchs in OPS:
                same(mine(x, dim), torchs(x, dim))
    # a start off 16 bytes: the columns read one element a lane
    x = random_tensor((20_000 * 256 + 1,), torch.float32, device, seed=8)[1:].view(20_000, 256)
    for mine, torchs in OPS:
        same(mine(x, 0), torchs(x, 0))


@pytest.mark.parametrize("device", DEVICES)
def test_layouts_the_kernels_read_in_place_or_copy(device):
    base = random_tensor((64, 48, 5), torch.float32, device, seed=3)
    views = [base.transpose(0, 1), base.permute(2, 0, 1), base[:, ::3], base[:, :1].expand(64, 9, 5),
             base.contiguous(memory_format=torch.contiguous_format)]
    for x in views:
        for dim in ((), 0, 1, 2, (0, 2), (1, 2), -1):
            for mine, torchs in OPS:
                same(mine(x, dim, True), torchs(x, dim, True))
                same(mine(x, dim), torchs(x, dim))


def bits(x):
    """The result's bits as an int (0-dim floating tensor)."""
    x = x.cpu()
    if x.dtype in (torch.float16, torch.bfloat16):
        return x.view(torch.int16).item() & 0xFFFF
    if x.dtype == torch.float32:
        return struct.unpack("<I", struct.pack("<f", x.item()))[0]
    return struct.unpack("<Q", struct.pack("<d", x.item()))[0]


CANONICAL_NAN = {torch.float32: 0x7FC00000, torch.float64: 0x7FF8000000000000, torch.float16: 0x7E00,
                 torch.bfloat16: 0x7FC0}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", list(CANONICAL_NAN), ids=str)
def test_signed_zeros_and_nans_give_the_same_bits_in_any_order(device, dtype):
    zeros = torch.tensor([-0.0, 0.0] * 3000, dtype=dtype, device=device)
    for order in (zeros, zeros.flip(0), zeros[:1], zeros[1:2].expand(5)):
        has_plus = bool((~torch.signbit(order)).any())
        got_max, got_min = redux.amax(order), redux.amin(order)
        assert got_max.item() == 0 and got_min.item() == 0
        # a maximum is +0 where any +0 is present, a minimum -0 where any -0 is
        assert (torch.signbit(got_max).item()) == (not has_plus)
        has_minus = bool(torch.signbit(order).any())
        assert torch.signbit(got_min).item() == has_minus
    x = random_tensor((4, 50_000), dtype, device, seed=5)
    for where in (0, 4097, 49_999):
        y = x.clone()
        y[1, where] = float("nan")
        y[2, where] = -float("nan")
        for op in (redux.amax, redux.amin):
            r = op(y, 1)
            assert bits(r[1]) == bits(r[2]) == CANONICAL_NAN[dtype]
            assert not r[[0, 3]].isnan().any()
            assert bits(op(y)) == CANONICAL_NAN[dtype]  # a full reduction (segments on CUDA)
            assert bits(op(y.t().contiguous(), 0)[1]) == CANONICAL_NAN[dtype]  # columns


@pytest.mark.parametrize("device", DEVICES)
def test_infinities_and_the_integer_range_ends(device):
    x = torch.tensor([[1.0, float("inf"), -float("inf")], [-float("inf"), -float("inf"), -3.0]], device=device)
    for mine, torchs in OPS:
        same(mine(x, 1), torchs(x, 1))
    big = torch.tensor([-(2**63), 2**63 - 1, 0], dtype=torch.int64, device=device)
    assert redux.amax(big).item() == 2**63 - 1 and redux.amin(big).item() == -(2**63)
    small = torch.tensor([-128, 127], dtype=torch.int8, device=device)
    same(redux.amax(small), torch.amax(small))
    same(redux.amin(small), torch.amin(small))


def test_thread_counts_give_the_same_bits():
    x = random_tensor((3, 1 << 20), torch.float32, "cpu", seed=11)
    for dim in ((), 1, 0):
        for op in (redux.amax, redux.amin):
            assert torch.equal(op(x, dim), on_one_thread(lambda: op(x, dim)))


@pytest.mark.parametrize("device", DEVICES)
def test_a_row_of_a_batch_is_the_row_alone(device):
    x = random_tensor((16, 3000), torch.bfloat16, device, seed=2)
    for op in (redux.amax, redux.amin):
        whole = op(x, -1)
        for b in (1, 3, 16):
            same(op(x[:b], -1), whole[:b])


@pytest.mark.parametrize("device", DEVICES)
def test_empty_and_zero_dim_inputs(device):
    scalar = torch.tensor(2.5, device=device)
    for mine, torchs in OPS:
        for dim in ((), 0, -1, (0,)):
            same(mine(scalar, dim), torchs(scalar, dim))
            same(mine(scalar, dim, True), torchs(scalar, dim, True))
        empty = torch.empty(0, 3, device=device)
        same(mine(empty, 1), torchs(empty, 1))
        same(mine(empty, 1, True), torchs(empty, 1, True))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_inputs_get_torchs_error_types_naming_the_argument(device):
    cases = [
        (torch.empty(0, device=device), (), RuntimeError, "argument 'dim' is empty"),
        (torch.empty(0, 3, device=device), 0, IndexError, "reduces dimension 0, which has size 0"),
        (torch.ones(2, 3, device=device), (0, 0), RuntimeError, "lists dimension 0 more than once"),
        (torch.ones(2, 3, device=device), 2, IndexError, "argument 'dim' has 2, out of range"),
        (torch.ones(2, device=device, dtype=torch.complex64), (), NotImplementedError, "argument 'self' has dtype"),
        (torch.ones(2, device=device, dtype=torch.uint32), (), NotImplementedError, "argument 'self' has dtype"),
    ]
    for x, dim, error, words in cases:
        with pytest.raises(error, match=words.replace("(", r"\(")):
            redux.amax(x, dim)
        with pytest.raises(error):
            torch.amax(x, dim)  # torch refuses it with the same type
    with pytest.raises(RuntimeError, match="redux.amin"):
        redux.amin(torch.ones(3, 3).to_sparse().to(device), 0)


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_are_torchs(device):
    """Ties share the gradient evenly, as torch's formula; a NaN result
    gives NaN gradients, as torch's."""
    x = torch.tensor([[1.0, 3.0, 3.0, -2.0], [5.0, 5.0, 5.0, 5.0], [float("nan"), 1.0, 2.0, 0.0]], device=device)
    for mine, torchs in OPS:
        for dim, keepdim in ((1, False), (0, True), ((), False)):
            a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
            g = torch.randn_like(torchs(x, dim, keepdim))
            mine(a, dim, keepdim).backward(g)
            torchs(b, dim, keepdim).backward(g)
            assert torch.equal(a.grad.isnan(), b.grad.isnan())
            assert torch.equal(a.grad.nan_to_num(), b.grad.nan_to_num())


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck_double_backward_and_forward_mode(device):
    x = random_tensor((4, 6, 3), torch.float64, device, seed=9).requires_grad_()
    for op in (redux.amax, redux.amin):
        for dim, keepdim in ((1, False), ((0, 2), True), ((), False)):
            fn = lambda t: op(t, dim, keepdim)  # noqa: E731
            assert torch.autograd.gradcheck(fn, (x,), check_forward_ad=True)
            assert torch.autograd.gradgradcheck(fn, (x,))


def test_an_inplace_change_before_backward_is_refused():
    x = torch.randn(3, 4, requires_grad=True)
    y = x * 1
    r = redux.amax(y, 1)
    y.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        r.sum().backward()


def test_opcheck_compile_and_vmap():
    from torch.library import opcheck
    for name in ("amax", "amin"):
        op = getattr(torch.ops.redux, name).default
        for args in ((torch.randn(5, 7, requires_grad=True), [1], False),
                     (torch.randn(3, 4, 5, dtype=torch.float64, requires_grad=True), [0, 2], True),
                     (torch.randint(-9, 9, (6, 2)), [], False)):
            opcheck(op, args)
    x = random_tensor((6, 33), torch.float32, "cpu", seed=4)
    for op in (redux.amax, redux.amin):
        for dynamic in (False, True):
            compiled = torch.compile(lambda t: op(t, -1) * 2, fullgraph=True, dynamic=dynamic)
            assert torch.equal(compiled(x), op(x, -1) * 2)
        batched = torch.vmap(lambda t: op(t, 0))(x)
        same(batched, op(x, 1))
        same(torch.vmap(lambda t: op(t))(x), op(x, 1))
        same(torch.vmap(lambda t: op(t), in_dims=1)(x), op(x, 0))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", list(CANONICAL_NAN), ids=str)
def test_the_largest_and_smallest_magnitude_in_one_read(device, dtype):
    """redux::_extreme_abs (vector_norm's infinity norms where no gradient
    is recorded) is amax / amin of |x|, bit for bit, in every form."""
    for i, (shape, dim) in enumerate((((5, 3000), [1]), ((3000, 16), [0]), ((2, 300_001), [1]), ((1 << 20,), []),
                                      ((7, 9, 11), [0, 2]))):
        x = random_tensor(shape, dtype, device, seed=30 + i, offset=0.0)
        for largest, torchs in ((True, torch.amax), (False, torch.amin)):
            for keepdim in (False, True):
                same(torch.ops.redux._extreme_abs(x, dim, keepdim, largest), torchs(x.abs(), dim, keepdim))
    y = random_tensor((3, 5000), dtype, device, seed=1)
    y[1, 4321] = -float("nan")
    for largest in (True, False):
        r = torch.ops.redux._extreme_abs(y, [1], False, largest)
        assert bits(r[1]) == CANONICAL_NAN[dtype] and not r[[0, 2]].isnan().any()
    with pytest.raises(NotImplementedError, match="argument 'self' has dtype"):
        torch.ops.redux._extreme_abs(torch.ones(3, dtype=torch.int64, device=device), [0], False, True)
    z = y.nan_to_num().requires_grad_()
    for p in (float("inf"), -float("inf")):  # the norm with a gradient takes the differentiable amax of |x|
        with torch.no_grad():
            fused = redux.vector_norm(z, p, 1)
        assert torch.equal(redux.vector_norm(z, p, 1), fused)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=str)
def test_every_value_orders_as_its_key(device, dtype):
    """The key order is the value order (include/redux/extremes.h): every
    16-bit value (a sample of float32's) against its neighbours in value
    order and against random partners, as rows of two, bit for bit."""
    if dtype == torch.float32:
        g = torch.Generator().manual_seed(3)
        raw = torch.randint(-(2**31), 2**31, (1 << 20,), generator=g, dtype=torch.int64).to(torch.int32)
        values = raw.view(torch.float32)
    else:
        values = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    values = values[~values.isnan()]
    ordered = values.double().sort().values.to(dtype)
    partners = ordered[torch.randperm(ordered.numel(), generator=torch.Generator().manual_seed(4))]
    for a, b in ((ordered[:-1], ordered[1:]), (ordered, partners)):
        pairs = torch.stack([a, b], 1).to(device)
        for mine, torchs in OPS:
            got, want = mine(pairs, 1), torchs(pairs, 1)
            assert torch.equal(got, want)
            zeros = (want == 0).cpu()
            got_bits = got.cpu()[~zeros].view(torch.int16 if dtype != torch.float32 else torch.int32)
            want_bits = want.cpu()[~zeros].view(torch.int16 if dtype != torch.float32 else torch.int32)
            assert torch.equal(got_bits, want_bits)  # away from zero the value fixes the bits
