"""redux::_moment_rows and redux::_sum_squares_rows, the one-kernel
var / std / var_mean and 2-norm (the switch's rms_norm / layer_norm
statistics) along the last dim that the composites take where no gradient
is recorded: against the fp64 answer on random data with an offset at lengths around powers of two
and the CUDA kernel's boundaries, torch's edge values, batch, thread-count
and alignment invariance, when it is taken, and its errors."""
import pytest
import torch

import redux  # noqa: F401  (loads the ops)
from conftest import DEVICES, ROW_CACHE_CASES, on_one_thread, ops_called, random_tensor

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# around powers of two, the CUDA warp-per-row limit (4096 bytes: 1024 float32,
# 2048 16-bit elements), the longest rows a CUDA block holds in registers
# (8192 float32, 16384 16-bit) and the longest row the composites give it (65536)
LENGTHS = [1, 2, 3, 15, 16, 17, 255, 1023, 1024, 1025, 2047, 2048, 2049, 8191, 8192, 8196, 16384, 16392, 65536]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_within_one_rounding_of_the_fp64_answer(device, dtype, n):
    x = random_tensor((3, n), dtype, device, seed=n)
    x64 = x.double().cpu()
    info = torch.finfo(dtype)
    for correction in (0, 1, 2):
        if n - correction <= 0:
            continue
        var, mean = torch.ops.redux._moment_rows(x, float(n - correction), False)
        std, _ = torch.ops.redux._moment_rows(x, float(n - correction), True)
        want_var, want_mean = torch.var_mean(x64, -1, correction=correction)
        for got, want in ((var, want_var), (mean, want_mean), (std, want_var.sqrt())):
            assert got.dtype == dtype and got.shape == want.shape and got.device == x.device
            err = (got.double().cpu() - want).abs()
            assert (err <= info.eps * want.abs() + info.tiny * info.eps).all(), (correction, err.max().item())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_float64_results_and_sums_of_squares_match_the_fp64_answer(device, dtype, n):
    x = random_tensor((3, n), dtype, device, seed=n + 1)
    x64 = x.double().cpu()
    info = torch.finfo(dtype)
    squares = (x64 * x64).sum(-1)
    var, mean = torch.ops.redux._moment_rows(x, float(n), False, torch.float64)
    want_var, want_mean = torch.var_mean(x64, -1, correction=0)
    # fp64 results: the fp64 sums' own error only
    for got, want in ((var, want_var), (mean, want_mean)):
        assert got.dtype == torch.float64 and got.device == x.device
        torch.testing.assert_close(got.cpu(), want, rtol=1e-12, atol=1e-12 * want_mean.abs().max().item())
    for divisor, root in ((float(n), False), (1.0, True), (float(n), True)):
        want = (squares / divisor).sqrt() if root else squares / divisor
        got = torch.ops.redux._sum_squares_rows(x, divisor, root)
        assert got.dtype == dtype and got.shape == want.shape and got.device == x.device
        err = (got.double().cpu() - want).abs()
        assert (err <= info.eps * want.abs()).all(), (divisor, root, err.max().item())
        wide = torch.ops.redux._sum_squares_rows(x, divisor, root, torch.float64)
        torch.testing.assert_close(wide.cpu(), want, rtol=1e-13, atol=0)


@pytest.mark.parametrize("device", DEVICES)
def test_the_2_norm_takes_the_sum_of_squares_kernel(device):
    x = random_tensor((4, 6, 300), torch.float32, device, seed=12)
    for call in (lambda t: torch.ops.redux.vector_norm(t, 2, [-1]),
                 lambda t: torch.ops.redux.vector_norm(t, 2, [2], True),
                 lambda t: torch.ops.redux.vector_norm(t[0, 0])):
        assert "redux::_sum_squares_rows" in ops_called(lambda: call(x))
        g = x.clone().requires_grad_()
        names = ops_called(lambda: call(g))
        assert "redux::_sum_squares_rows" not in names and "redux::sum" in names  # differentiable: the composite
        got, want = call(x), call(g).detach()  # the kernel and the composite agree to within a rounding
        assert got.shape == want.shape and got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=2e-7, atol=0)
    torch.testing.assert_close(torch.ops.redux.vector_norm(x, 2, [-1], True),
                               torch.linalg.vector_norm(x.double(), 2, -1, True).float(), rtol=1.2e-7, atol=0)
    for call in (lambda: torch.ops.redux.vector_norm(x, 2, [1]), lambda: torch.ops.redux.vector_norm(x, 3, [-1]),
                 lambda: torch.ops.redux.vector_norm(x, 2, [-1], dtype=torch.float64)):
        assert "redux::_sum_squares_rows" not in ops_called(call)


@pytest.mark.parametrize("device", DEVICES)
def test_edge_values_give_torchs_answers(device):
    inf, nan = float("inf"), float("nan")
    rows = torch.tensor([[1.0, 2.0, 3.0, 4.0], [nan, 1.0, 2.0, 3.0], [inf, 1.0, 2.0, 3.0], [-inf, -inf, 0.0, 1.0],
                         [5.0, 5.0, 5.0, 5.0], [3e38, 3e38, 0.0, 0.0]], device=device)
    for dtype in DTYPES:
        x = rows.to(dtype)
        for correction in (0, 1, 4, 5):
            var, mean = torch.ops.redux.var_mean(x, [-1], correction=correction)
            want = torch.var(x.float(), -1, correction=correction)
            torch.testing.assert_close(var, want.to(dtype), equal_nan=True, msg=f"{dtype} {correction}")
            # the mean is the fp64 mean, rounded (torch.var_mean's own gives nan beside an
            # inf; torch.mean's float32 sum overflows on the last row)
            torch.testing.assert_close(mean, torch.mean(x.double(), -1).to(dtype), equal_nan=True)
        # fp64's std: torch's float32 CUDA std overflows to inf on the last row
        torch.testing.assert_close(torch.ops.redux.std(x, [-1]), torch.std(x.double(), -1).to(dtype), equal_nan=True)


@pytest.mark.parametrize("device", DEVICES)
def test_bits_depend_on_the_row_alone(device):
    """A row's bits alone and in any batch, at any alignment, on one thread
    or many: a row is one thread's, warp's or block's, with a fixed tree."""
    for n, dtype in ROW_CACHE_CASES:
        x = random_tensor((9, n), dtype, device, seed=7)
        whole = torch.ops.redux._moment_rows(x, float(n - 1), False)
        for i in (0, 4, 8):
            part = torch.ops.redux._moment_rows(x[i:i + 1], float(n - 1), False)
            assert all(torch.equal(p, w[i:i + 1]) for p, w in zip(part, whole))
        # a row starting one element past a 16-byte boundary reads element by element
        shifted = torch.empty(9 * n + 1, dtype=dtype, device=device)[1:].view(9, n).copy_(x)
        assert all(torch.equal(a, b) for a, b in zip(torch.ops.redux._moment_rows(shifted, float(n - 1), False), whole))
        if device == "cpu":
            one = on_one_thread(lambda: torch.ops.redux._moment_rows(x, float(n - 1), False))
            assert all(torch.equal(a, b) for a, b in zip(one, whole))


@pytest.mark.parametrize("device", DEVICES)
def test_the_composites_take_it_where_no_gradient_is_recorded(device):
    x = random_tensor((4, 6, 300), torch.float32, device, seed=8)
    calls = {"var": lambda t: torch.ops.redux.var(t, [-1]),
             "std": lambda t: torch.ops.redux.std(t, [2], correction=0, keepdim=True),
             "var_mean": lambda t: torch.ops.redux.var_mean(t, [-1], keepdim=True)}
    for name, call in calls.items():
        assert "redux::_moment_rows" in ops_called(lambda: call(x)), name
        g = x.clone().requires_grad_()
        names = ops_called(lambda: call(g))
        assert "redux::_moment_rows" not in names and "redux::sum" in names, name  # differentiable: the composite
        got, want = call(x), call(g)
        for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert a.shape == b.shape and a.dtype == b.dtype, name
            torch.testing.assert_close(a, b.detach(), rtol=2e-7, atol=1e-7)
    # not the trailing dims, float64: the composite
    for call in (lambda: torch.ops.redux.var(x, [1]), lambda: torch.ops.redux.var(x.double(), [-1]),
                 lambda: torch.ops.redux.var(x, [0, 2])):
        assert "redux::_moment_rows" not in ops_called(call)
    # rows longer than the kernel takes: the op cuts them into pieces and combines them itself
    for x in (random_tensor((2, 65537), torch.float32, device, 9), random_tensor((2, 300, 300), torch.float32, device, 9)):
        names = ops_called(lambda: torch.ops.redux.var(x, [1] if x.dim() == 2 else [1, 2]))
        assert "redux::_moment_rows" in names and "redux::sum" not in names


@pytest.mark.parametrize("device", DEVICES)
def test_trailing_dims_and_full_reductions_are_one_row(device):
    """A reduction over x's last k dims reads each slice as one row of their
    product (a full reduction: one row): torch's shapes, the composite's
    values to within a rounding, the bits of the flattened rows."""
    x = random_tensor((4, 6, 50), torch.float32, device, seed=13)
    calls = {"var": lambda t, d, k: torch.ops.redux.var(t, d, keepdim=k),
             "var_mean": lambda t, d, k: torch.ops.redux.var_mean(t, d, correction=0, keepdim=k),
             "norm 2": lambda t, d, k: torch.ops.redux.vector_norm(t, 2, d, k),
             "logsumexp": lambda t, d, k: torch.ops.redux.logsumexp(t, d if d is not None else [0, 1, 2], k)}
    kernels = {"redux::_moment_rows", "redux::_sum_squares_rows", "redux::_exp_rows"}
    for name, call in calls.items():
        for dims, keepdim in (([1, 2], False), ([1, 2], True), (None, False), (None, True), ([0, 1, 2], True)):
            assert kernels & ops_called(lambda: call(x, dims, keepdim)), (name, dims)
            got, want = call(x, dims, keepdim), call(x.clone().requires_grad_(), dims, keepdim)  # the composite
            for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                assert a.shape == b.shape and a.dtype == b.dtype, (name, dims, keepdim)
                torch.testing.assert_close(a, b.detach(), rtol=3e-7, atol=1e-6, msg=f"{name} {dims} {keepdim}")
        # the bits of the same values as rows of their product
        flat, over_two = call(x.reshape(4, 300), [-1], False), call(x, [1, 2], False)
        for a, b in zip(flat if isinstance(flat, tuple) else (flat,),
                        over_two if isinstance(over_two, tuple) else (over_two,)):
            assert torch.equal(a, b), name


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_vmapped_and_checked(device):
    x = random_tensor((6, 129), torch.float32, device, seed=10)
    step = lambda t: torch.ops.redux.var(t * 0.5, [-1]) + torch.ops.redux.std(t, [-1])  # noqa: E731
    assert torch.equal(torch.compile(step, fullgraph=True)(x), step(x))
    assert torch.equal(torch.vmap(lambda r: torch.ops.redux.var(r, [0]))(x), torch.ops.redux.var(x, [1]))
    torch.library.opcheck(torch.ops.redux._moment_rows.default, (x, 128.0, False))
    torch.library.opcheck(torch.ops.redux._moment_rows.default, (x.bfloat16(), 129.0, True))
    torch.library.opcheck(torch.ops.redux._moment_rows.default, (x.half(), 128.0, False, torch.float64))
    torch.library.opcheck(torch.ops.redux._sum_squares_rows.default, (x, 1.0, True))
    torch.library.opcheck(torch.ops.redux._sum_squares_rows.default, (x.bfloat16(), 129.0, False, torch.float64))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_arguments_are_named(device):
    x = random_tensor((3, 4), torch.float32, device, seed=11)
    with pytest.raises(RuntimeError, match="redux._moment_rows: argument 'x' is 0-dim"):
        torch.ops.redux._moment_rows(x[0, 0], 1.0, False)
    with pytest.raises(RuntimeError, match="redux._moment_rows: argument 'x' has dtype"):
        torch.ops.redux._moment_rows(x.double(), 1.0, False)
    with pytest.raises(RuntimeError, match="redux._moment_rows: argument 'x' has an empty last dim"):
        torch.ops.redux._moment_rows(x[:, :0], 1.0, False)
    with pytest.raises(RuntimeError, match="redux._moment_rows: argument 'dtype' is Half"):
        torch.ops.redux._moment_rows(x, 1.0, False, torch.float16)
    with pytest.raises(RuntimeError, match="redux._sum_squares_rows: argument 'x' has dtype"):
        torch.ops.redux._sum_squares_rows(x.double(), 1.0, False)
    with pytest.raises(RuntimeError, match="redux._sum_squares_rows: argument 'dtype' is BFloat16"):
        torch.ops.redux._sum_squares_rows(x, 1.0, True, torch.bfloat16)
    with pytest.raises(RuntimeError, match="redux._sum_squares_rows: argument 'x' has an empty last dim"):
        torch.ops.redux._sum_squares_rows(x[:, :0], 1.0, False)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_16_bit_results_are_rounded_once(device, dtype):
    # 1 / divisor is 1 + half a 16-bit ulp, plus or minus much less than a
    # float32 ulp: through float32 it would land on the midpoint and round to
    # the even neighbour (1); rounded once from fp64 it is the nearer one.
    ulp = torch.finfo(dtype).eps
    x = torch.ones(2, 1, dtype=dtype, device=device)
    for off, want in ((2.0 ** -30, 1 + ulp), (-(2.0 ** -30), 1.0), (0.0, 1.0)):
        got = torch.ops.redux._sum_squares_rows(x, 1 / (1 + ulp / 2 + off), False)
        assert got.tolist() == [want, want], (off, got)


@pytest.mark.parametrize("device", DEVICES)
def test_a_long_mixed_list_keeps_each_tensors_bits(device):
    """More tensors than one launch's table holds (128 a width on CUDA),
    warp and block rows (4096 bytes apart), the three dtypes interleaved,
    and views one element in, whose loads cannot be 16-byte vectors: each
    result has the bits of its tensor taken alone as one row, on any number
    of threads."""
    lengths = [1, 3, 1024, 1025, 2048, 2049, 4096, 5000, 65536]
    xs = []
    for i in range(300):
        n, dtype = lengths[i % len(lengths)], DTYPES[(i // len(lengths)) % len(DTYPES)]
        base = random_tensor((n + 1,), dtype, device, seed=1000 + i)
        xs.append(base[1:] if i % 4 == 0 else base[:n])
    for divisor, root in ((1.0, True), (7.0, False)):
        got = torch.ops.redux._sum_squares_each(xs, divisor, root)
        for i, (x, g) in enumerate(zip(xs, got)):
            want = torch.ops.redux._sum_squares_rows(x.reshape(1, -1), divisor, root)[0]
            assert g.dtype == x.dtype and torch.equal(g, want), (i, x.numel(), x.dtype)
    # the CPU spreads the tensors over its threads: one thread gives the same bits
    alone = on_one_thread(lambda: torch.ops.redux._sum_squares_each(xs, 1.0, True))
    assert all(torch.equal(a, b) for a, b in zip(alone, torch.ops.redux._sum_squares_each(xs, 1.0, True)))


@pytest.mark.parametrize("device", DEVICES)
def test_each_tensor_as_one_row_in_one_call(device):
    """_sum_squares_each (the switch's _foreach_norm): each result has the
    bits of _sum_squares_rows of the tensor as one row, and of its 2-norm."""
    xs = [random_tensor(shape, dtype, device, seed=i) for i, (shape, dtype) in enumerate(
        [((40, 7), torch.float32), ((300,), torch.bfloat16), ((2, 3, 4), torch.float16), ((65536,), torch.float32),
         ((1,), torch.float32), ((1025, 2), torch.float16)])]
    for divisor, root in ((1.0, True), (3.0, False)):
        got = torch.ops.redux._sum_squares_each(xs, divisor, root)
        for x, g in zip(xs, got):
            want = torch.ops.redux._sum_squares_rows(x.reshape(1, -1), divisor, root)[0]
            assert g.shape == () and g.dtype == x.dtype and g.device == x.device and torch.equal(g, want)
    for x, g in zip(xs, torch.ops.redux._sum_squares_each(xs, 1.0, True)):
        assert torch.equal(torch.ops.redux.vector_norm(x), g)
    with redux.enabled():
        names = ops_called(lambda: torch._foreach_norm(xs + [xs[0].double()]))
        norms = torch._foreach_norm(xs + [xs[0].double()])
    assert "redux::_sum_squares_each" in names
    assert all(torch.equal(n, torch.ops.redux.vector_norm(x)) for n, x in zip(norms, xs + [xs[0].double()]))
    torch.library.opcheck(torch.ops.redux._sum_squares_each.default, (xs[:2], 1.0, True))
    with pytest.raises(RuntimeError, match=r"redux._sum_squares_each: argument 'xs\[1\]' has dtype"):
        torch.ops.redux._sum_squares_each([xs[0], xs[0].double()], 1.0, True)
    with pytest.raises(RuntimeError, match=r"redux._sum_squares_each: argument 'xs\[0\]' has no elements"):
        torch.ops.redux._sum_squares_each([xs[0][:0]], 1.0, True)
