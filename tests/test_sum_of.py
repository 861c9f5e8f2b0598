"""redux::_sum_of: the mapped reductions (sum of |x|, sum of x * x) on
redux::sum's own trees (the reduction as a parameter of the families).
Against fp64 on random data with an offset, at sizes around powers of two
and tile boundaries, in every family; the sum's bits where the map is the
identity on the data; forced grids, thread counts, batch invariance; edge
values, errors and torch integration."""
import math

import pytest
import torch

import redux  # noqa: F401  (loads the ops)
from conftest import DEVICES, on_one_thread, random_tensor

# (input dtype, the wide dtype it accumulates into): REDUX_MAPPED_PAIRS
PAIRS = [(torch.float32, torch.float64), (torch.float64, torch.float64), (torch.float16, torch.float32),
         (torch.bfloat16, torch.float32)]
OFS = ["abs", "square"]
# full (short, chunked, the wide tree), rows (lane groups, chunked long rows),
# columns (the column kernel, the float32 strips tree: 64-column multiples)
CASES = [((1,), None), ((1000,), None), ((4097,), [0]), (((1 << 20) + 3,), None), (((1 << 23) + 5,), None),
         ((37, 1025), [1]), ((5, 70001), [-1]), ((3, 5, 257), [-1, 1]), ((300, 33, 5), [1]), ((7, 1025), [0]),
         ((4100, 128), [0]), ((2, 513, 64), [1])]


def mapped64(x, of):
    """|x| or x * x of x's values, in fp64 on the CPU."""
    x = x.cpu().double()
    return x.abs() if of == "abs" else x * x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,wide", PAIRS)
@pytest.mark.parametrize("shape,dim", CASES)
def test_sum_of_is_the_fp64_sum_of_the_mapped_values(device, dtype, wide, shape, dim):
    x = random_tensor(shape, dtype, device, seed=sum(shape) % 1000, offset=-0.7)
    for of in OFS:
        for keepdim in (False, True):
            got = torch.ops.redux._sum_of(x, dim, keepdim, of=of, dtype=wide)
            want = mapped64(x, of).sum(dim, keepdim=keepdim)
            assert got.dtype == wide and got.shape == want.shape, (of, got.shape, want.shape)
            # fp64 accumulation, one rounding to the result dtype
            tol = torch.finfo(wide).eps if wide == torch.float32 else 1e-12
            assert ((got.cpu().double() - want).abs() <= tol * want).all(), of


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,wide", PAIRS)
@pytest.mark.parametrize("shape,dim", CASES)
def test_sum_of_abs_has_the_sums_bits(device, dtype, wide, shape, dim):
    """|x| is exact in x's dtype, so the sum of |x| on the sum's trees is
    redux.sum of x.abs() bit for bit: the same lanes, order and finish."""
    x = random_tensor(shape, dtype, device, seed=3, offset=-0.5)
    got = torch.ops.redux._sum_of(x, dim, of="abs", dtype=wide)
    assert torch.equal(got, torch.ops.redux.sum(x.abs(), dim, dtype=wide))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,wide", PAIRS)
def test_bits_do_not_depend_on_the_grid_or_threads(device, dtype, wide):
    grids = (1, 3, 7, 64) if device == "cuda" else (1, 2, 5)
    for shape, dim in CASES:
        x = random_tensor(shape, dtype, device, seed=5, offset=1.5)
        for of in OFS:
            first = torch.ops.redux._sum_of(x, dim, of=of, dtype=wide)
            for grid in grids:
                assert torch.equal(torch.ops.redux._sum_of(x, dim, of=of, dtype=wide, grid=grid), first), (shape, grid)
            assert torch.equal(on_one_thread(lambda: torch.ops.redux._sum_of(x, dim, of=of, dtype=wide)), first)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n", [1, 31, 1024, 2049, 65537, 200003])
def test_a_row_has_its_bits_in_any_batch(device, n):
    x = random_tensor((9, n), torch.float32, device, seed=n % 97, offset=0.25)
    for of in OFS:
        whole = torch.ops.redux._sum_of(x, [1], of=of, dtype=torch.float64)
        for i in (0, 4, 8):
            assert torch.equal(torch.ops.redux._sum_of(x[i:i + 1], [1], of=of, dtype=torch.float64), whole[i:i + 1])
        padded = torch.cat([x, random_tensor((20, n), torch.float32, device, seed=1)])
        assert torch.equal(torch.ops.redux._sum_of(padded, [1], of=of, dtype=torch.float64)[:9], whole)


@pytest.mark.parametrize("device", DEVICES)
def test_edge_values(device):
    inf, nan = math.inf, math.nan
    rows = torch.tensor([[3.0, -4.0, 0.0], [0.0, -0.0, 0.0], [inf, 1.0, 2.0], [-inf, 1.0, 2.0], [nan, 1.0, 2.0],
                         [inf, -inf, 1.0]], device=device)
    for dtype, wide in PAIRS:
        x = rows.to(dtype)
        for of in OFS:
            got = torch.ops.redux._sum_of(x, [1], of=of, dtype=wide)
            torch.testing.assert_close(got.cpu().double(), mapped64(x, of).sum(1), equal_nan=True, rtol=0, atol=0)
        assert torch.equal(torch.ops.redux._sum_of(torch.empty(0, 3, device=device, dtype=dtype), [0], of="abs",
                                                   dtype=wide), torch.zeros(3, device=device, dtype=wide))
        scalar = torch.tensor(-2.5, device=device, dtype=dtype)
        assert torch.ops.redux._sum_of(scalar, of="square", dtype=wide).item() == 6.25


@pytest.mark.parametrize("device", DEVICES)
def test_a_strided_input_gives_its_dense_copys_bits(device):
    x = random_tensor((64, 300), torch.float32, device, seed=8)
    for view in (x[:, ::3], x[:1].expand(50, 300)):  # not dense: planned as their copies
        for of in OFS:
            got = torch.ops.redux._sum_of(view, [0], of=of, dtype=torch.float64)
            assert torch.equal(got, torch.ops.redux._sum_of(view.contiguous(), [0], of=of, dtype=torch.float64))


def test_errors_name_the_argument():
    x = torch.ones(3, 4)
    with pytest.raises(RuntimeError, match="argument 'of' is 'cube'"):
        torch.ops.redux._sum_of(x, of="cube", dtype=torch.float64)
    with pytest.raises(RuntimeError, match="argument 'dtype' is Float"):
        torch.ops.redux._sum_of(x, of="abs")  # a float32 sum of squares would round: fp64 only
    with pytest.raises(RuntimeError, match="argument 'self' has dtype Long"):
        torch.ops.redux._sum_of(x.long(), of="abs", dtype=torch.float64)
    with pytest.raises(RuntimeError, match="argument 'self' has dtype ComplexFloat"):
        torch.ops.redux._sum_of(x.to(torch.complex64), of="abs", dtype=torch.float64)
    with pytest.raises(IndexError, match="out of range"):
        torch.ops.redux._sum_of(x, [2], of="abs", dtype=torch.float64)
    with pytest.raises(RuntimeError, match="argument 'grid'"):
        torch.ops.redux._sum_of(x, of="abs", dtype=torch.float64, grid=-1)
    # float16 into float32 is a mapped pair; into float16 it is not
    assert torch.ops.redux._sum_of(x.half(), of="abs", dtype=torch.float32).dtype == torch.float32
    with pytest.raises(RuntimeError, match="argument 'dtype' is Half"):
        torch.ops.redux._sum_of(x.half(), of="square")


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_and_vmap(device):
    x = random_tensor((6, 40), torch.float32, device, seed=2)
    for of in OFS:
        torch.library.opcheck(torch.ops.redux._sum_of.default, (x, [1], False), {"of": of, "dtype": torch.float64})
        batched = torch.vmap(lambda t: torch.ops.redux._sum_of(t, of=of, dtype=torch.float64))(x)
        assert torch.equal(batched, torch.ops.redux._sum_of(x, [1], of=of, dtype=torch.float64))


@pytest.mark.compile
@pytest.mark.parametrize("device", DEVICES)
def test_compiled_calls_have_the_eager_bits(device):
    x = random_tensor((33, 1000), torch.float32, device, seed=4)

    def f(t):
        return torch.ops.redux._sum_of(t, [1], of="square", dtype=torch.float64).sqrt().float()
    assert torch.equal(torch.compile(f, fullgraph=True, dynamic=True)(x), f(x))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape,dim", [((5, 70001), [1]), ((4100, 128), [0]), ((7, 1025), [0]), (((1 << 20) + 3,), None)])
def test_norms_read_once_through_sum_of(device, shape, dim):
    """ord 1 and 2 where no gradient is recorded: the fp64 sum of the
    mapped values, rounded once (the 2-norm after its root)."""
    x = random_tensor(shape, torch.float32, device, seed=12, offset=-0.5)
    assert torch.equal(torch.ops.redux.vector_norm(x, 1, dim),
                       torch.ops.redux._sum_of(x, dim, of="abs", dtype=torch.float64).float())
    assert torch.equal(torch.ops.redux.vector_norm(x, 2, dim),
                       torch.ops.redux._sum_of(x, dim, of="square", dtype=torch.float64).sqrt().float())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype,wide", PAIRS)
def test_sum_of_each_has_each_tensors_sum_of_bits(device, dtype, wide):
    """_sum_of_each (the switch's _foreach_norm of long tensors): slot i is
    _sum_of(xs[i]) whole, bit for bit, whatever else is in the list: sizes
    around tile boundaries, a strided view, an empty tensor (+0)."""
    shapes = [(1,), (4097,), (70001,), (37, 1025), ((1 << 20) + 3,), (0,), (3, 0)]
    xs = [random_tensor(s, dtype, device, seed=20 + i, offset=-0.4) for i, s in enumerate(shapes)]
    xs.append(random_tensor((300, 64), dtype, device, seed=9)[:, ::3])
    for of in OFS:
        got = torch.ops.redux._sum_of_each(xs, of=of, dtype=wide)
        assert got.shape == (len(xs),) and got.dtype == wide and got.device.type == device
        for i, x in enumerate(xs):
            assert torch.equal(got[i], torch.ops.redux._sum_of(x, of=of, dtype=wide)), (of, i)
        assert torch.equal(torch.ops.redux._sum_of_each(xs[::-1], of=of, dtype=wide), got.flip(0))
    assert got[5].item() == 0 and math.copysign(1, got[5].item()) == 1  # no elements: +0
    for i, x in enumerate(xs[:4]):  # against fp64, once
        want = mapped64(x, "square").sum().item()
        assert abs(got[i].item() - want) <= (torch.finfo(wide).eps if wide == torch.float32 else 1e-12) * want


@pytest.mark.parametrize("device", DEVICES)
def test_sum_of_each_errors_name_the_argument_and_opcheck(device):
    x = random_tensor((6, 40), torch.float32, device, seed=2)
    with pytest.raises(RuntimeError, match=r"redux._sum_of_each: argument 'xs\[1\]' has dtype Long"):
        torch.ops.redux._sum_of_each([x, x.long()], of="square", dtype=torch.float64)
    with pytest.raises(RuntimeError, match="redux._sum_of_each: argument 'of' is 'cube'"):
        torch.ops.redux._sum_of_each([x], of="cube", dtype=torch.float64)
    with pytest.raises(RuntimeError, match="redux._sum_of_each: argument 'dtype' is Float"):
        torch.ops.redux._sum_of_each([x], of="square", dtype=torch.float32)  # fp64 only for float32
    if device == "cuda":
        with pytest.raises(RuntimeError, match=r"argument 'xs\[1\]' is on cpu where xs\[0\] is on cuda"):
            torch.ops.redux._sum_of_each([x, x.cpu()], of="square", dtype=torch.float64)
    for of in OFS:
        torch.library.opcheck(torch.ops.redux._sum_of_each.default, ([x, x[:3]],), {"of": of, "dtype": torch.float64})
