"""redux::_centered_cols, the column sums about a center that var, std,
var_mean and logsumexp over a dim that is not the last take where no
gradient is recorded, and redux::_exp_cols, the softmax and log_softmax
along such a dim from the same sums: the tree against a Python model of
redux.h's, bit for bit; the ops against the fp64 answer on random data with
an offset at sizes around the chunks', vectors' and CPU blocks' boundaries;
the same bits on the CPU and the GPU, at any alignment and thread count;
torch's edge values; when the composites take them; compile, vmap, opcheck
and their errors."""
import pytest
import torch

from conftest import DEVICES, HAS_CUDA, cuda, on_one_thread, ops_called, random_tensor

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
SQUARES, EXPS = 0, 1
SOFTMAX, LOG_SOFTMAX = 0, 1  # redux_exp_op
SOFTMAXES = ("softmax", "log_softmax")
RUNS = 8  # REDUX_CENTERED_RUNS
# (outer, n, inner): n around the 32-row chunk and the unroll of 8, inner
# around a 16-byte vector and a warp of them
# around a 16-byte vector and a warp of them; the CPU softmaxes' blocks of
# 16 columns and 256-row pieces, and the 8192 rows up to which they keep the
# exponentials
SHAPES = [(1, 1, 1), (2, 7, 3), (1, 31, 4), (3, 33, 5), (1, 257, 64), (2, 1000, 129), (1, 4097, 1024),
          (1, 32768, 4), (4, 300, 1), (1, 8192, 17), (2, 8193, 16)]


def chunk_rows(shape, dtype):
    """redux_centered_cols_chunk (redux.h)."""
    outer, n, inner = shape
    vec = 16 // torch.empty((), dtype=dtype).element_size()
    slots = outer * -(-inner // vec)
    wanted = 1 if slots >= 65536 else -(-65536 // slots)
    rows = 32
    while rows < n and rows * wanted < n:
        rows *= 2
    return rows


def model_sums(x, center, op):
    """redux.h's tree in fp64 torch arithmetic: chunk sums in row
    order, then runs of chunk sums, then the runs, each from zero."""
    outer, n, inner = x.shape
    rows = chunk_rows(x.shape, x.dtype)
    xd = x.double().cpu()
    c = center.cpu()
    if op == EXPS:
        c = torch.where(c.isfinite(), c, torch.zeros_like(c))
    chunks = []
    for r0 in range(0, n, rows):
        acc = torch.zeros(outer, inner, dtype=torch.float64)
        for r in range(r0, min(n, r0 + rows)):
            d = xd[:, r, :] - c
            acc = acc + (d * d if op == SQUARES else torch.exp(d))
        chunks.append(acc)
    per = -(-len(chunks) // RUNS)
    total = torch.zeros(outer, inner, dtype=torch.float64)
    for g in range(RUNS):
        run = torch.zeros(outer, inner, dtype=torch.float64)
        for part in chunks[g * per:(g + 1) * per]:
            run = run + part
        total = total + run
    return total, c


def centered(x, center, op, divisor=1.0, root=False):
    return torch.ops.redux._centered_cols(x, center, op, divisor, root)


def test_the_cpu_adds_in_the_documented_order():
    """Squares: the model's sums, divided and rounded, bit for bit (the
    model's exp is torch's, so the exponentials are checked to a rounding)."""
    for shape in [(2, 7, 3), (1, 100, 5), (2, 300, 1), (1, 33, 4)]:
        x = random_tensor(shape, torch.float32, "cpu", seed=sum(shape))
        center = x.double().mean(1) + 0.25
        sums, _ = model_sums(x, center, SQUARES)
        var = sums / torch.full_like(sums, 3.0)  # a true division (a scalar's may be a reciprocal's product)
        assert torch.equal(centered(x, center, SQUARES, 3.0), var.float()), shape
        assert torch.equal(centered(x, center, SQUARES, 3.0, True), var.sqrt().float()), shape
        maxima = x.double().amax(1)
        sums, shift = model_sums(x, maxima, EXPS)
        torch.testing.assert_close(centered(x, maxima, EXPS), (sums.log() + shift).float(), rtol=2e-7, atol=0)


def reference(x, dim, name):
    x64 = x.double().cpu()
    if name == "logsumexp":
        return torch.logsumexp(x64, [dim])
    return getattr(torch, name)(x64, dim)


def within_one_rounding(got, want, dtype):
    """|got - want| within one rounding of the result (fp64 inside), or both NaN."""
    info = torch.finfo(dtype)
    err = (got.double().cpu() - want).abs()
    return bool(((err <= info.eps * want.abs() + info.tiny * info.eps) | (want.isnan() & got.cpu().isnan())).all())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_the_ops_are_within_one_rounding_of_the_fp64_answer(device, dtype, shape):
    x = random_tensor(shape, dtype, device, seed=shape[1] + shape[2])
    for name in ("var", "std", "logsumexp") + SOFTMAXES:
        got = getattr(torch.ops.redux, name)(x, [1] if name in ("var", "std", "logsumexp") else 1)
        want = reference(x, 1, name)
        assert got.dtype == dtype and got.shape == want.shape, name
        # n = 1: var is nan, as torch's
        assert within_one_rounding(got, want, dtype), (name, (got.double().cpu() - want).abs().max().item())


@cuda
@pytest.mark.cuda
@pytest.mark.parametrize("dtype", DTYPES)
def test_the_cpu_and_the_gpu_give_the_same_bits_at_any_alignment(dtype):
    for shape in [(1, 4097, 1024), (3, 33, 5), (2, 1000, 128), (1, 65, 8)]:
        x = random_tensor(shape, dtype, "cpu", seed=shape[2])
        mean = x.double().mean(1)
        maxima = x.double().amax(1)
        gpu = x.cuda()
        # one element past a 16-byte boundary: read element by element
        shifted = torch.empty(x.numel() + 1, dtype=dtype, device="cuda")[1:].view(shape).copy_(x)
        for op, center, divisor, root in ((SQUARES, mean, 7.0, False), (SQUARES, mean, 1.0, True),
                                          (EXPS, maxima, 1.0, False)):
            cpu = centered(x, center, op, divisor, root)
            for y in (gpu, shifted):
                assert torch.equal(centered(y, center.cuda(), op, divisor, root).cpu(), cpu), (shape, op)
        for op in (SOFTMAX, LOG_SOFTMAX):
            cpu = torch.ops.redux._exp_cols(x, maxima, op)
            for y in (gpu, shifted):
                assert torch.equal(torch.ops.redux._exp_cols(y, maxima.cuda(), op).cpu(), cpu), (shape, op)


def test_the_cpu_bits_do_not_depend_on_the_thread_count():
    x = random_tensor((2, 5000, 33), torch.float32, "cpu", seed=12)
    for op, center in ((SQUARES, x.double().mean(1)), (EXPS, x.double().amax(1))):
        assert torch.equal(on_one_thread(lambda: centered(x, center, op, 3.0)), centered(x, center, op, 3.0))
    maxima = x.double().amax(1)
    for op in (SOFTMAX, LOG_SOFTMAX):  # threads' column ranges split the 16-column blocks
        call = lambda: torch.ops.redux._exp_cols(x, maxima, op)  # noqa: E731
        assert torch.equal(on_one_thread(call), call()), op


def test_the_cpu_softmaxes_take_the_documented_sums():
    """y = exp(x - c) * (1 / S) and (x - c) - log(S), S by redux.h's tree:
    the model's (its exp torch's, within 1.3 ulp of redux's in fp64) rounded
    to float32 gives the same bits for these data, in kept and recomputed
    exponentials (n above 8192) and across 16-column blocks."""
    for shape in [(2, 300, 5), (1, 9000, 3), (3, 33, 17)]:
        x = random_tensor(shape, torch.float32, "cpu", seed=sum(shape))
        maxima = x.double().amax(1)
        sums, shift = model_sums(x, maxima, EXPS)
        d = x.double() - shift.unsqueeze(1)
        assert torch.equal(torch.ops.redux._exp_cols(x, maxima, SOFTMAX), (d.exp() * (1 / sums).unsqueeze(1)).float())
        assert torch.equal(torch.ops.redux._exp_cols(x, maxima, LOG_SOFTMAX), (d - sums.log().unsqueeze(1)).float())


@pytest.mark.parametrize("device", DEVICES)
def test_edge_values_give_torchs_answers(device):
    inf, nan = float("inf"), float("nan")
    cols = torch.tensor([[1.0, -inf, inf, nan, -inf, inf, -800.0, 1e30],
                         [2.0, -inf, 1.0, 1.0, 0.0, inf, 0.0, -1e30],
                         [3.0, -inf, 2.0, 2.0, 1.0, 0.0, 700.0, 0.0],
                         [4.0, -inf, 3.0, 3.0, 2.0, 1.0, 709.0, 1.0]], device=device)
    for dtype in DTYPES:
        x = cols.to(dtype)
        torch.testing.assert_close(torch.ops.redux.logsumexp(x, [0]), torch.logsumexp(x.float(), [0]).to(dtype),
                                   equal_nan=True, msg=str(dtype))
        torch.testing.assert_close(torch.ops.redux.var(x, [0]), torch.var(x.float(), [0]).to(dtype), equal_nan=True,
                                   msg=str(dtype))
        for name in SOFTMAXES:  # columns of -inf, inf or NaN: all NaN, as torch's
            torch.testing.assert_close(getattr(torch.ops.redux, name)(x, 0), getattr(torch, name)(x.float(), 0).to(dtype),
                                       equal_nan=True, msg=f"{name} {dtype}")


@pytest.mark.parametrize("device", DEVICES)
def test_the_composites_take_it_where_no_gradient_is_recorded(device):
    x = random_tensor((4, 300, 6), torch.float32, device, seed=8)
    calls = {"var": lambda t: torch.ops.redux.var(t, [1]),
             "std": lambda t: torch.ops.redux.std(t, [0, 1], correction=0, keepdim=True),
             "var_mean": lambda t: torch.ops.redux.var_mean(t, [1], keepdim=True),
             "logsumexp": lambda t: torch.ops.redux.logsumexp(t, [0], True),
             "softmax": lambda t: torch.ops.redux.softmax(t, 1),
             "log_softmax": lambda t: torch.ops.redux.log_softmax(t, -2, torch.float16)}
    for name, call in calls.items():
        op = "redux::_exp_cols" if name in SOFTMAXES else "redux::_centered_cols"
        assert op in ops_called(lambda: call(x)), name
        g = x.clone().requires_grad_()
        assert op not in ops_called(lambda: call(g)), name  # differentiable: the composite
        got, want = call(x), call(g)
        for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert a.shape == b.shape and a.dtype == b.dtype, name
            torch.testing.assert_close(a, b.detach(), rtol=2e-7, atol=1e-7)
    # dims that are not consecutive, float64, the last dim: not this op
    for call in (lambda: torch.ops.redux.var(x, [0, 2]), lambda: torch.ops.redux.var(x.double(), [1]),
                 lambda: torch.ops.redux.logsumexp(x, [2])):
        assert "redux::_centered_cols" not in ops_called(call)
    for call in (lambda: torch.ops.redux.softmax(x.double(), 1), lambda: torch.ops.redux.log_softmax(x, 2)):
        assert "redux::_exp_cols" not in ops_called(call)


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_and_vmapped_calls_give_the_eager_bits(device):
    x = random_tensor((64, 6, 33), torch.float32, device, seed=10)
    step = lambda t: (torch.ops.redux.var(t * 0.5, [0]) + torch.ops.redux.logsumexp(t, [0])  # noqa: E731
                      + torch.ops.redux.softmax(t, 0).sum(0) + torch.ops.redux.log_softmax(t, 1)[0])
    assert torch.equal(torch.compile(step, fullgraph=True)(x), step(x))
    assert torch.equal(torch.vmap(lambda s: torch.ops.redux.std(s, [0]), in_dims=1)(x),
                       torch.ops.redux.std(x, [0]))
    assert torch.equal(torch.vmap(lambda s: torch.ops.redux.softmax(s, 0), in_dims=1, out_dims=1)(x),
                       torch.ops.redux.softmax(x, 0))
    center = x.double().mean(1)
    torch.library.opcheck(torch.ops.redux._centered_cols.default, (x, center, SQUARES, 5.0, True))
    torch.library.opcheck(torch.ops.redux._centered_cols.default, (x.half(), center, EXPS))
    torch.library.opcheck(torch.ops.redux._centered_cols.default, (x.bfloat16(), center, SQUARES))
    maxima = x.double().amax(1)
    torch.library.opcheck(torch.ops.redux._exp_cols.default, (x, maxima, SOFTMAX))
    torch.library.opcheck(torch.ops.redux._exp_cols.default, (x.half(), maxima, LOG_SOFTMAX))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_arguments_are_named(device):
    x = random_tensor((2, 5, 3), torch.float32, device, seed=11)
    c = torch.zeros(2, 3, dtype=torch.float64, device=device)
    cases = [((x, c, 2), r"argument 'op' must be 0 \(squares\) or 1 \(exponentials\), got 2"),
             ((x[0], c, 0), r"argument 'x' has 2 dims; expected 3"),
             ((x.double(), c, 0), r"argument 'x' has dtype"),
             ((x[:, :0], c, 0), r"argument 'x' has no elements"),
             ((x, c.float(), 0), r"argument 'center' has dtype Float; expected float64"),
             ((x, c[:, :2], 0), r"argument 'center' has shape \[2, 2\]; expected \[2, 3\]")]
    if HAS_CUDA:
        other = "cpu" if device == "cuda" else "cuda"
        cases.append(((x, c.to(other), 0), r"argument 'center' is on"))
    for args, message in cases:
        with pytest.raises(RuntimeError, match="redux._centered_cols: " + message):
            torch.ops.redux._centered_cols(*args)
        if "'op'" not in message:  # the checks the softmaxes' op shares
            with pytest.raises(RuntimeError, match="redux._exp_cols: " + message):
                torch.ops.redux._exp_cols(*args)
    with pytest.raises(RuntimeError, match=r"redux._exp_cols: argument 'op' must be 0 \(softmax\) or 1 "
                                           r"\(log_softmax\), got 2"):
        torch.ops.redux._exp_cols(x, c, 2)
