"""torch.ops.redux.vector_norm: torch.linalg.vector_norm's semantics on
redux's sum, against the fp64 answer on random data with an offset; edge
values and torch's errors, determinism, batch invariance, gradients and
torch integration."""
import math

import pytest
import torch

import redux
from conftest import DEVICES, on_one_thread, random_tensor

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
ORDS = [2, 1, 0, math.inf, -math.inf, 3, 0.5, -1.5]
CASES = [((1000,), None), ((7, 1025), [1]), ((7, 1025), [0]), ((3, 5, 257), [-1, 0]), ((4, 33, 17), [1]),
         ((), None), ((4097,), [0])]


def want64(x, ord, dim, keepdim):
    """The norm of x's values, in fp64 on the CPU."""
    return torch.linalg.vector_norm(x.cpu().to(torch.complex128 if x.is_complex() else torch.float64), ord, dim,
                                    keepdim)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS + [torch.complex64])
@pytest.mark.parametrize("shape,dim", CASES)
def test_norms_are_within_an_ulp_of_the_fp64_answer(device, dtype, shape, dim):
    x = random_tensor(shape, torch.float32 if dtype.is_complex else dtype, device, seed=len(shape) + 7 * (dim or [9])[0])
    if dtype.is_complex:
        x = torch.complex(x, random_tensor(shape, torch.float32, device, seed=11, offset=-1.0))
    x = x.neg() if x.numel() % 2 else x  # negative values too
    real = torch.float32 if dtype.is_complex else dtype
    for ord in ORDS:
        for keepdim in (False, True):
            got = torch.ops.redux.vector_norm(x, ord, dim, keepdim)
            want = want64(x, ord, dim, keepdim)
            assert got.dtype == real and got.shape == want.shape, (ord, got.shape, want.shape)
            got = got.double().cpu()
            fits = want.to(real).isfinite()  # past the dtype's range the answer is inf
            assert torch.equal(got[~fits], want.to(real).double()[~fits]), ord
            err = (got - want)[fits].abs()
            # float32 and narrower: one rounding of the fp64 answer; float64: the fp64 work's own error
            ulps = 16 if real == torch.float64 else 1
            assert (err <= ulps * torch.finfo(real).eps * want[fits].abs()).all(), (ord, err.max())


@pytest.mark.parametrize("device", DEVICES)
def test_edge_values_and_dtypes_give_torchs_answers(device):
    inf, nan = math.inf, math.nan
    rows = torch.tensor([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [inf, 1.0, 2.0], [nan, 1.0, 2.0], [-inf, 0.0, 1.0]],
                        device=device)
    for ord in ORDS:
        torch.testing.assert_close(torch.ops.redux.vector_norm(rows, ord, [1]), torch.linalg.vector_norm(rows, ord, 1),
                                   equal_nan=True)
    empty = torch.empty(0, 3, device=device)
    for ord in (0, 1, 2, 0.5):
        assert torch.equal(torch.ops.redux.vector_norm(empty, ord), torch.linalg.vector_norm(empty, ord))
        assert torch.equal(torch.ops.redux.vector_norm(empty, ord, [0]), torch.linalg.vector_norm(empty, ord, 0))
    assert torch.ops.redux.vector_norm(empty, inf, [1]).shape == (0,)  # nothing empty is reduced
    half = random_tensor((5, 9), torch.float16, device, seed=3)
    got = torch.ops.redux.vector_norm(half, 2, [1], dtype=torch.float64)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, torch.linalg.vector_norm(half, 2, 1, dtype=torch.float64))
    z = torch.complex(half.float(), half.float())
    got = torch.ops.redux.vector_norm(z, 2, dtype=torch.complex128)
    assert got.dtype == torch.float64
    torch.testing.assert_close(got, torch.linalg.vector_norm(z, 2, dtype=torch.complex128))
    scalar = torch.tensor(-3.0, device=device)
    assert torch.equal(torch.ops.redux.vector_norm(scalar, 2, [0]), torch.linalg.vector_norm(scalar, 2, 0))


@pytest.mark.parametrize("device", DEVICES)
def test_what_torch_refuses_is_refused_with_torchs_error_type(device):
    x = random_tensor((3, 4), torch.float32, device, seed=1)
    calls = [
        (x.long(), 2, None, None),                       # integer input
        (x, 2, None, torch.int64),                       # integer dtype
        (x, 2, None, torch.complex64),                   # complex dtype of a real input
        (torch.complex(x, x), 2, None, torch.float32),   # real dtype of a complex input
        (x.double(), 2, None, torch.float32),            # narrowing
        (x, 1j, None, None),                             # complex ord
        (x[:0], math.inf, None, None),                   # no identity on an empty tensor
        (x[:0], -1, [0], None),
        (x[:0], -math.inf, [0], None),
        (x, 2, [2], None),                               # dim out of range
        (x, 2, [0, 0], None),                            # repeated dim
    ]
    for t, ord, dim, dtype in calls:
        with pytest.raises(Exception) as theirs:
            torch.linalg.vector_norm(t, ord, dim, dtype=dtype)
        # torch's type, or the one it derives from (newer torch raises NotImplementedError, a RuntimeError)
        with pytest.raises(Exception) as ours:
            torch.ops.redux.vector_norm(t, ord, dim, dtype=dtype)
        assert isinstance(ours.value, type(theirs.value)) or isinstance(theirs.value, type(ours.value)), \
            (theirs.value, ours.value)
        assert "argument" in str(ours.value) or "norm" in str(ours.value) or type(ours.value) is IndexError
    with pytest.raises(RuntimeError, match="redux.vector_norm: argument 'self' has dtype"):
        torch.ops.redux.vector_norm(x.long())


@pytest.mark.parametrize("device", DEVICES)
def test_rows_are_batch_invariant_and_bits_thread_independent(device):
    x = random_tensor((8, 3001), torch.float32, device, seed=2)
    for ord in (2, 1, 3):
        whole = torch.ops.redux.vector_norm(x, ord, [1])
        for i in (0, 6):
            assert torch.equal(torch.ops.redux.vector_norm(x[i:i + 1], ord, [1]), whole[i:i + 1])
    alone = on_one_thread(lambda: torch.ops.redux.vector_norm(x, 2))
    assert torch.equal(alone, torch.ops.redux.vector_norm(x, 2))


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_and_torch_integration(device):
    x = random_tensor((3, 4, 5), torch.float64, device, seed=3).requires_grad_()
    for ord in (2, 1, 3, 0.5, math.inf):
        assert torch.autograd.gradcheck(lambda t: torch.ops.redux.vector_norm(t, ord, [1, 2]), (x,))
    assert torch.autograd.gradgradcheck(lambda t: torch.ops.redux.vector_norm(t, 2, [0], True), (x,))
    zero = torch.zeros(4, dtype=torch.float64, device=device, requires_grad=True)
    torch.ops.redux.vector_norm(zero, 2).backward()
    assert torch.equal(zero.grad, torch.zeros_like(zero))  # torch's subgradient at 0, not nan
    # below ord 1 the slope of |x|^ord is infinite at 0: torch's gradient there is 0, and the others' its own
    with_zeros = random_tensor((3, 8), torch.float64, device, seed=5)
    with_zeros[0, 2], with_zeros[1, 0], with_zeros[2] = 0.0, -0.0, 0.0
    for ord in (0.5, 0.25, -1.5, -2):
        for dtype in (torch.float64, torch.float32):
            grads = []
            for norm in (torch.ops.redux.vector_norm, torch.linalg.vector_norm):
                t = with_zeros.detach().clone().to(dtype).requires_grad_()
                norm(t, ord, [1]).sum().backward()
                grads.append(t.grad)
            assert not grads[0].isnan().any(), (ord, dtype)
            torch.testing.assert_close(grads[0], grads[1], msg=f"ord {ord}, {dtype}")
    y = random_tensor((6, 40), torch.float32, device, seed=4)
    torch.library.opcheck(torch.ops.redux.vector_norm.default, (y, 2, [1], True))
    torch.library.opcheck(torch.ops.redux.vector_norm.default, (y, math.inf))
    per_row = torch.vmap(lambda t: torch.ops.redux.vector_norm(t, 2))(y)
    assert torch.equal(per_row, torch.ops.redux.vector_norm(y, 2, [1]))
    step = lambda t: torch.ops.redux.vector_norm(t * 1.5, 2, [1]) + torch.ops.redux.vector_norm(t, 1)  # noqa: E731
    assert torch.equal(torch.compile(step, fullgraph=True)(y), step(y))


@pytest.mark.parametrize("device", DEVICES)
def test_long_rows_are_read_once_with_the_contracts(device):
    """2-norms of rows longer than a row kernel takes: the fp64 sum of
    squares on redux.sum's row trees (redux::_sum_of), its root rounded
    once; batch-invariant, the same bits on one thread, in vmap and
    compiled."""
    max_n = redux._C.row_kernel_max_n()
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for shape, dim in (((max_n + 1,), None), ((3, 5 * max_n + 77), [1]), ((2, 3, max_n), [1, 2])):
            x = random_tensor(shape, dtype, device, seed=sum(shape))
            for keepdim in (False, True):
                got, want = torch.ops.redux.vector_norm(x, 2, dim, keepdim), want64(x, 2, dim, keepdim)
                assert got.dtype == dtype and got.shape == want.shape
                assert ((got.double().cpu() - want).abs() <= torch.finfo(dtype).eps * want).all(), (shape, dtype)
    x = random_tensor((5, 3 * max_n + 1000), torch.float32, device, seed=6, offset=-1.0)
    whole = torch.ops.redux.vector_norm(x, 2, [1])
    # the tree, pinned: the sum's row tree of the squares in fp64, then the root
    assert torch.equal(whole, torch.ops.redux._pow_each(torch.ops.redux._sum_of(x, [1], of="square", dtype=torch.float64),
                                                        0.5).float())
    for i in (0, 3):
        assert torch.equal(torch.ops.redux.vector_norm(x[i:i + 1], 2, [1]), whole[i:i + 1])
    assert torch.equal(on_one_thread(lambda: torch.ops.redux.vector_norm(x, 2, [1])), whole)
    assert torch.equal(torch.vmap(lambda t: torch.ops.redux.vector_norm(t, 2))(x), whole)
    assert torch.equal(torch.compile(lambda t: torch.ops.redux.vector_norm(t, 2, [1]), fullgraph=True)(x), whole)
    empty = torch.ops.redux.vector_norm(torch.ones(0, 2 * max_n, device=device), 2, [1], True)
    assert empty.shape == (0, 1)


@pytest.mark.parametrize("device", DEVICES)
def test_float64_roots_are_correctly_rounded_and_compile_to_the_same_bits(device):
    """The 2-norm's and std's roots are redux::_pow_each's (C's sqrt on the
    CPU): correctly rounded, where torch's CPU sqrt of float64 is not
    always, and opaque to torch.compile, whose own sqrt would round
    otherwise than eager's."""
    x = random_tensor((64, 33, 257), torch.float64, device, seed=13)
    sums = torch.ops.redux._sum_of(x, [2], of="square", dtype=torch.float64)
    norm = torch.ops.redux.vector_norm(x, 2, [2])
    want = torch.tensor([math.sqrt(v) for v in sums.flatten().tolist()], dtype=torch.float64).view(sums.shape)
    assert torch.equal(norm.cpu(), want)
    calls = [lambda t: torch.ops.redux.vector_norm(t, 2, [2]), lambda t: torch.ops.redux.vector_norm(t, 2, [1])]
    if device == "cpu":  # std's composite also divides, which Inductor's CUDA code was not compared for
        calls += [lambda t: torch.ops.redux.std(t, [2]), lambda t: torch.ops.redux.std(t, [0, 1])]
    for f in calls:
        assert torch.equal(torch.compile(f, fullgraph=True)(x), f(x))


def test_python_entry_is_the_op():
    x = random_tensor((5, 33), torch.float32, "cpu", seed=5)
    assert torch.equal(redux.vector_norm(x, 3, 1), torch.ops.redux.vector_norm(x, 3, [1]))
    assert torch.equal(redux.vector_norm(x), torch.ops.redux.vector_norm(x))


GENERAL_ORDS = [3, 1.5, 4, 0.5, -1.5, 7.25]


@pytest.mark.parametrize("device", DEVICES)
def test_general_p_norms_are_batch_invariant_and_thread_independent(device):
    """A p other than 0, 1, 2 and +-inf: each row's bits are the same whatever
    rows come with it (every batch size) and on one thread; the power and the
    root round an element the same at every place in the buffer."""
    x = random_tensor((64, 130), torch.float32, device, seed=13, offset=0.5)
    for ord in GENERAL_ORDS:
        for dtype in (None, torch.float64):
            whole = torch.ops.redux.vector_norm(x, ord, [1], dtype=dtype)
            for b in range(1, 65):
                assert torch.equal(torch.ops.redux.vector_norm(x[:b], ord, [1], dtype=dtype), whole[:b]), (ord, b)
            assert torch.equal(on_one_thread(lambda: torch.ops.redux.vector_norm(x, ord, [1], dtype=dtype)), whole)
            assert torch.equal(torch.vmap(lambda t: torch.ops.redux.vector_norm(t, ord, dtype=dtype))(x), whole)


EXPONENTS = [2.0, 3.0, -2.0, 0.5, -0.5, -1.0, 0.0, 1.0, 1.5, -1.5, 1 / 3, 7.25]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pow_each_rounds_every_place_alike(device, dtype):
    """redux::_pow_each of every prefix of a vector (each length 1..70, past
    any vector width and tail) gives the whole vector's bits; on the CPU a
    general exponent is the C library's fp64 pow, element by element (what
    Python's math.pow calls), rounded once to float32."""
    v = random_tensor((70,), dtype, device, seed=21, offset=1.0).abs()
    for p in EXPONENTS:
        whole = torch.ops.redux._pow_each(v, p)
        assert whole.dtype == dtype and whole.shape == v.shape
        for k in range(1, 71):
            assert torch.equal(torch.ops.redux._pow_each(v[70 - k:], p), whole[70 - k:]), (p, k)
        torch.testing.assert_close(whole, v.pow(p))
        if device == "cpu" and p not in (2.0, 3.0, -2.0, 0.5, -0.5, -1.0):
            want = torch.tensor([math.pow(e, p) for e in v.double().tolist()], dtype=torch.float64).to(dtype)
            assert torch.equal(whole, want), p


@pytest.mark.parametrize("device", DEVICES)
def test_pow_each_edges_errors_and_torch_integration(device):
    """torch.pow's values at zeros, infinities, NaN, subnormals and extremes;
    gradients (forward and double backward too), opcheck, vmap, compile;
    a dtype it does not take is refused naming the argument."""
    inf, nan = math.inf, math.nan
    edges = torch.tensor([0.0, -0.0, 1.0, 2.0, inf, nan, 5e-324, 1e300, 1e-300], dtype=torch.float64, device=device)
    for dtype in (torch.float64, torch.float32):
        e = edges.to(dtype)
        for p in EXPONENTS:
            torch.testing.assert_close(torch.ops.redux._pow_each(e, p), e.pow(p), equal_nan=True)
    x = random_tensor((3, 4, 5), torch.float64, device, seed=8, offset=2.0).abs().requires_grad_()
    for p in (3.0, 0.5, -1.5, 7.25, 0.0):
        f = lambda t: torch.ops.redux._pow_each(t, p)  # noqa: E731
        assert torch.autograd.gradcheck(f, (x,), check_forward_ad=True)
        assert torch.autograd.gradgradcheck(f, (x,))
    y = random_tensor((6, 40), torch.float32, device, seed=4).abs()
    torch.library.opcheck(torch.ops.redux._pow_each.default, (y, 1.5))
    torch.library.opcheck(torch.ops.redux._pow_each.default, (y.double().t(), -0.5))
    assert torch.equal(torch.vmap(lambda t: torch.ops.redux._pow_each(t, 1.5), in_dims=1)(y),
                       torch.ops.redux._pow_each(y.t(), 1.5))
    assert torch.equal(torch.vmap(lambda t: torch.ops.redux._pow_each(t, exponent=-0.5))(y),
                       torch.ops.redux._pow_each(y, -0.5))
    assert torch.equal(torch.compile(lambda t: torch.ops.redux._pow_each(t, 1.5), fullgraph=True)(y),
                       torch.ops.redux._pow_each(y, 1.5))
    with pytest.raises(RuntimeError, match="redux._pow_each: argument 'self' has dtype"):
        torch.ops.redux._pow_each(y.half(), 2.0)
    with pytest.raises(RuntimeError, match="redux._pow_each: argument 'self' has dtype"):
        torch.ops.redux._pow_each(y.long(), 2.0)
