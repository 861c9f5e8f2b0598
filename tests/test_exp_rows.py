"""redux::_exp_rows, the one-kernel softmax / log_softmax / logsumexp along
the last dim that the composites take where no gradient is recorded:
against the fp64 answer on random data with an offset at lengths around
powers of two and the kernels' boundaries, torch's edge values, batch,
thread-count and alignment invariance, when it is taken, and its errors."""
import contextlib

import pytest
import torch

import redux
from conftest import DEVICES, ROW_CACHE_CASES, cuda, on_one_thread, ops_called, random_tensor

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# around powers of two, the CUDA warp-per-row limit (4096 bytes: 1024 float32,
# 2048 16-bit elements), the longest rows a CUDA block holds in registers
# (8192 float32, 16384 16-bit) and the longest row the kernel takes (65536)
LENGTHS = [1, 2, 3, 31, 32, 33, 255, 1023, 1024, 1025, 2047, 2048, 2049, 8191, 8192, 8196, 16384, 16392, 65536]
OPS = {0: "softmax", 1: "log_softmax", 2: "logsumexp"}
# ops that would copy a long row's pieces, or combine them in torch
COPIES = {"aten::clone", "aten::copy_", "aten::cat", "aten::contiguous", "aten::mul", "aten::exp"}


def reference(x, op):
    """torch's answer in fp64 on the CPU."""
    x64 = x.double().cpu()
    return torch.logsumexp(x64, [-1]) if op == 2 else getattr(torch, OPS[op])(x64, -1)



def long_edge_rows(device, seed):
    """Six float32 rows longer than a row kernel takes: +inf in row 0, NaN in
    row 1, row 2 all -inf, row 3 -inf over its first pieces and far below 0
    after (the pieces' maxima); rows 4 and 5 random, row 4 for the caller."""
    max_n = redux._C.row_kernel_max_n()
    x = random_tensor((6, 2 * max_n + 5), torch.float32, device, seed=seed)
    x[0, 7] = float("inf")
    x[1, -1] = float("nan")
    x[2] = float("-inf")
    x[3, :max_n + 100] = float("-inf")
    x[3, max_n + 100:] -= 800
    return x


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", LENGTHS)
def test_within_one_rounding_of_the_fp64_answer(device, dtype, n):
    rows = 3 if n < 4096 else 2
    x = random_tensor((rows, n), dtype, device, seed=n)
    info = torch.finfo(dtype)
    for op in OPS:
        got = torch.ops.redux._exp_rows(x, op)
        want = reference(x, op)
        assert got.dtype == dtype and got.shape == want.shape
        err = (got.double().cpu() - want).abs()
        # one rounding of the result (fp64 inside): relative, or a subnormal's spacing
        assert (err <= info.eps * want.abs() + info.tiny * info.eps).all(), (OPS[op], err.max().item())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 33, 1025, 8191, 65536])
def test_parts_are_a_rows_maximum_and_its_sum_of_exponentials(device, dtype, n):
    """op 3, the pieces of long rows: each row's maximum, exactly, and the
    fp64 sum of exp(x - max) (max where finite, else 0) to fp64 accuracy."""
    x = random_tensor((3, n), dtype, device, seed=n + 1)
    x[1, n // 2] = float("-inf")
    x[2] = float("-inf")
    parts = torch.ops.redux._exp_rows(x, 3)
    assert parts.dtype == torch.float64 and parts.shape == (3, 2)
    x64 = x.double().cpu()
    top = x64.amax(-1)
    assert torch.equal(parts[:, 0].cpu(), top)
    shift = torch.where(top.isfinite(), top, 0)
    want = (x64 - shift.unsqueeze(-1)).exp().sum(-1)
    torch.testing.assert_close(parts[:, 1].cpu(), want, rtol=1e-13, atol=0)


@cuda
@pytest.mark.cuda
def test_the_cpu_and_the_gpu_exp_give_the_same_bits():
    """The CPU's exp is the GPU's (the same fused multiply-adds in the same
    order): rows [0, -u] with u in [0, 0.7), whose fp64 sums 1 + exp(-u)
    keep all but exp's last bit or two, give the same parts on both, and so
    do rows of a wider range (exp's table and scale)."""
    g = torch.Generator().manual_seed(21)
    u = torch.cat([torch.rand(200000, generator=g) * 0.7, torch.rand(50000, generator=g) * 700])
    x = torch.stack([torch.zeros_like(u), -u], dim=1)
    cpu = torch.ops.redux._exp_rows(x, 3)
    gpu = torch.ops.redux._exp_rows(x.cuda(), 3).cpu()
    differ = (cpu != gpu).any(-1).nonzero().flatten()
    assert differ.numel() == 0, f"{differ.numel()} rows differ, first at u = {u[differ[0]].item()!r}"


@pytest.mark.parametrize("device", DEVICES)
def test_long_rows_logsumexp_combines_its_pieces_with_the_contracts(device):
    """logsumexp of rows longer than a row kernel takes: each piece's
    maximum and sum of exponentials by the row kernel (op 3) in fp64, then
    combined; one rounding of the fp64 answer, torch's edge values, the same
    bits for a row alone or in a batch, on one thread and compiled."""
    max_n = redux._C.row_kernel_max_n()
    for dtype in DTYPES:
        # the last: a row of the longest pieces
        for shape, dim in (((max_n + 1,), [0]), ((3, 128256), [1]), ((2, 3, max_n), [1, 2]), (((1 << 22) + 5,), [0])):
            x = random_tensor(shape, dtype, device, seed=sum(shape))
            for keepdim in (False, True):
                got = torch.ops.redux.logsumexp(x, dim, keepdim)
                want = torch.logsumexp(x.double().cpu(), dim, keepdim)
                assert got.dtype == dtype and got.shape == want.shape
                err = (got.double().cpu() - want).abs()
                assert (err <= torch.finfo(dtype).eps * want.abs()).all(), (shape, dtype)
    x = long_edge_rows(device, seed=12)
    x[4, 3], x[4, -2] = float("inf"), 100.0
    got = torch.ops.redux.logsumexp(x, [1])
    want = torch.logsumexp(x.double().cpu(), [1]).float()
    torch.testing.assert_close(got.cpu(), want, equal_nan=True, rtol=1.2e-7, atol=0)
    names = ops_called(lambda: torch.ops.redux.logsumexp(x, [1]))
    assert "redux::_exp_rows" in names and not names & COPIES, names
    x = random_tensor((5, 3 * max_n + 1000), torch.float32, device, seed=13)
    whole = torch.ops.redux.logsumexp(x, [1])
    for i in (0, 3):
        assert torch.equal(torch.ops.redux.logsumexp(x[i:i + 1], [1]), whole[i:i + 1])
    assert torch.equal(on_one_thread(lambda: torch.ops.redux.logsumexp(x, [1])), whole)
    compiled = torch.compile(lambda t: torch.ops.redux.logsumexp(t, [1]), fullgraph=True)(x)
    assert torch.equal(compiled, whole)


@pytest.mark.parametrize("device", DEVICES)
def test_apply_of_a_rows_own_parts_gives_the_one_kernel_bits(device):
    """_exp_rows_apply (op 0, 1) from _exp_rows's parts (op 3) of the same
    rows: the one-kernel softmax and log_softmax, bit for bit, and so for
    rows cut into pieces; a row whose maximum is not finite all NaN; its
    errors."""
    max_n = redux._C.row_kernel_max_n()
    for dtype in DTYPES:
        for n in (1, 33, 1024, 1025, 2048, 8191, 8192, max_n + 1, 128256):
            x = random_tensor((2, 3, n), dtype, device, seed=n + 2)
            x[1, 0, n // 2] = float("inf")
            x[1, 1, 0] = float("nan")
            x[1, 2] = float("-inf")
            parts = torch.ops.redux._exp_rows(x, 3)
            bits = torch.int32 if dtype == torch.float32 else torch.int16
            for op in (0, 1):
                got, want = torch.ops.redux._exp_rows_apply(x, parts, op), torch.ops.redux._exp_rows(x, op)
                nan = want.isnan()  # NaN's bits may differ: their places may not
                assert nan.view(-1, n)[3:].all() and not nan.view(-1, n)[:3].any() and torch.equal(got.isnan(), nan)
                assert torch.equal(got.view(bits)[~nan], want.view(bits)[~nan]), (n, dtype, op)
        for n in (1024, 128256):  # rows at an address off 16 bytes, read without vectors: an aligned copy's bits
            x = random_tensor((3 * n + 1,), dtype, device, seed=n + 3)[1:].view(3, n)
            parts = torch.ops.redux._exp_rows(x, 3)
            for op in (0, 1):
                got, want = torch.ops.redux._exp_rows_apply(x, parts, op), torch.ops.redux._exp_rows(x.clone(), op)
                assert torch.equal(got.view(bits), want.view(bits)), (n, dtype, op)
    x = random_tensor((3, 4), torch.float32, device, seed=14)
    parts = torch.ops.redux._exp_rows(x, 3)
    torch.library.opcheck(torch.ops.redux._exp_rows_apply.default, (x, parts, 0))
    torch.library.opcheck(torch.ops.redux._exp_rows_apply.default, (x.half(), parts, 1))
    apply = torch.ops.redux._exp_rows_apply
    with pytest.raises(RuntimeError, match="redux._exp_rows_apply: argument 'op' must be 0 .* or 1 .*got 2"):
        apply(x, parts, 2)
    with pytest.raises(RuntimeError, match="redux._exp_rows_apply: argument 'parts' has dtype"):
        apply(x, parts.float(), 0)
    with pytest.raises(RuntimeError, match=r"redux._exp_rows_apply: argument 'parts' has shape \[3, 3\]"):
        apply(x, torch.zeros(3, 3, dtype=torch.float64, device=device), 0)
    with pytest.raises(RuntimeError, match="redux._exp_rows_apply: argument 'x' has dtype"):
        apply(x.double(), parts, 0)
    with pytest.raises(RuntimeError, match="redux._exp_rows_apply: argument 'x' is 0-dim"):
        apply(x[0, 0], parts[0, 0], 0)
    if device == "cuda":
        with pytest.raises(RuntimeError, match="redux._exp_rows_apply: argument 'parts' is on cpu"):
            apply(x, parts.cpu(), 0)


@pytest.mark.parametrize("device", DEVICES)
def test_long_rows_softmax_applies_the_combined_parts_with_the_contracts(device):
    """softmax and log_softmax of rows longer than a row kernel takes: the
    pieces' parts combined, then one pass (_exp_rows_apply); one rounding of
    the fp64 answer, torch's values at infinities and NaN, the same bits for
    a row alone or in a batch, on one thread and compiled."""
    max_n = redux._C.row_kernel_max_n()
    for dtype in DTYPES:
        for shape in ((max_n + 1,), (3, 128256)):
            x = random_tensor(shape, dtype, device, seed=sum(shape) + 1)
            for op in (0, 1):
                got = torch.ops.redux.softmax(x, -1) if op == 0 else torch.ops.redux.log_softmax(x, -1)
                want = reference(x, op)
                assert got.dtype == dtype and got.shape == want.shape
                err = (got.double().cpu() - want).abs()
                info = torch.finfo(dtype)
                assert (err <= info.eps * want.abs() + info.tiny * info.eps).all(), (shape, dtype, op)
    x = long_edge_rows(device, seed=15)
    x[4, 3] = float("-inf")
    for op in (0, 1):
        call = (lambda t: torch.ops.redux.softmax(t, 1)) if op == 0 else (lambda t: torch.ops.redux.log_softmax(t, 1))
        want = (torch.softmax if op == 0 else torch.log_softmax)(x.double().cpu(), 1).float()
        torch.testing.assert_close(call(x).cpu(), want, equal_nan=True, rtol=1.2e-7, atol=1e-37)
        names = ops_called(lambda: call(x))
        assert "redux::_exp_rows" in names and not names & COPIES, names  # the pieces are read in place
        whole = call(x).view(torch.int32)  # bits: rows 0 to 2 are NaN
        for i in (0, 3):
            assert torch.equal(call(x[i:i + 1]).view(torch.int32), whole[i:i + 1])
        assert torch.equal(on_one_thread(lambda: call(x)).view(torch.int32), whole)
        assert torch.equal(torch.compile(call, fullgraph=True)(x).view(torch.int32), whole)


@pytest.mark.parametrize("device", DEVICES)
def test_edge_values_give_torchs_answers(device):
    inf, nan = float("inf"), float("nan")
    rows = torch.tensor([[1.0, 2.0, 3.0, 4.0], [-inf, -inf, -inf, -inf], [inf, 1.0, 2.0, 3.0], [nan, 1.0, 2.0, 3.0],
                         [-inf, 0.0, 1.0, 2.0], [inf, inf, 0.0, 1.0], [-800.0, 0.0, 700.0, 709.0],
                         [1e30, -1e30, 0.0, 1.0]], device=device)
    for dtype in DTYPES:
        x = rows.to(dtype)
        for op, name in OPS.items():
            want = torch.logsumexp(x.float(), [-1]) if op == 2 else getattr(torch, name)(x.float(), -1)
            torch.testing.assert_close(torch.ops.redux._exp_rows(x, op), want.to(dtype), equal_nan=True,
                                       msg=f"{name} {dtype}")


@pytest.mark.parametrize("device", DEVICES)
def test_bits_depend_on_the_row_alone(device):
    """A row's bits alone and in any batch, at any alignment, on one thread
    or many: a row is one block's or one thread's, with a fixed tree."""
    for n, dtype in ROW_CACHE_CASES:
        x = random_tensor((9, n), dtype, device, seed=7)
        for op in (*OPS, 3):
            whole = torch.ops.redux._exp_rows(x, op)
            for i in (0, 4, 8):
                assert torch.equal(torch.ops.redux._exp_rows(x[i:i + 1], op), whole[i:i + 1])
            assert torch.equal(torch.ops.redux._exp_rows(x[2:7], op), whole[2:7])
            # a row starting one element past a 16-byte boundary reads element by element
            shifted = torch.empty(9 * n + 1, dtype=dtype, device=device)[1:].view(9, n).copy_(x)
            assert torch.equal(torch.ops.redux._exp_rows(shifted, op), whole)
            if device == "cpu":
                assert torch.equal(on_one_thread(lambda: torch.ops.redux._exp_rows(x, op)), whole)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("n, dtype", [(1024, torch.float32), (512, torch.bfloat16), (4096, torch.float32)])
def test_rows_a_grid_loops_over_keep_their_bits(device, n, dtype):
    """More rows than the grid holds at once: each group takes several rows
    in turn (a float32 softmax loads its next row while it finishes one),
    and every row still has the bits it has alone."""
    x = random_tensor((9, n), dtype, device, seed=11)
    many = x.repeat(700 if n <= 1024 else 120, 1)
    for op in (*OPS, 3):
        alone = torch.ops.redux._exp_rows(x, op)
        got = torch.ops.redux._exp_rows(many, op)
        assert torch.equal(got, alone.repeat(many.shape[0] // 9, *([1] * (alone.dim() - 1)))), OPS.get(op, op)


@pytest.mark.parametrize("device", DEVICES)
def test_the_composites_take_it_where_no_gradient_is_recorded(device):
    x = random_tensor((4, 6, 300), torch.float32, device, seed=8)
    for name, call, op in (("softmax", lambda t: torch.ops.redux.softmax(t, -1), 0),
                           ("log_softmax", lambda t: torch.ops.redux.log_softmax(t, 2), 1),
                           ("logsumexp", lambda t: torch.ops.redux.logsumexp(t, [-1], True), 2)):
        fused = torch.ops.redux._exp_rows(x, op)
        assert torch.equal(call(x), fused.unsqueeze(-1) if op == 2 else fused), name
        assert "redux::_exp_rows" in ops_called(lambda: call(x)), name
        g = x.clone().requires_grad_()
        names = ops_called(lambda: call(g))
        assert "redux::_exp_rows" not in names and "redux::sum" in names, name  # differentiable: the composite
        with torch.no_grad():
            assert "redux::_exp_rows" in ops_called(lambda: call(g)), name
        # the composite and the kernel agree to within a rounding
        torch.testing.assert_close(call(g).detach(), call(x), rtol=2e-7, atol=2e-7)
    # not the last dim: the column op; float64: the composite
    assert "redux::_exp_rows" not in ops_called(lambda: torch.ops.redux.softmax(x, 1))
    names = ops_called(lambda: torch.ops.redux.softmax(x.double(), -1))
    assert "redux::_exp_rows" not in names and "redux::sum" in names
    # longer rows: the kernel on pieces, where no gradient is recorded
    long = random_tensor((2, 65537), torch.float32, device, 9)
    for call in (lambda t: torch.ops.redux.logsumexp(t, [1]), lambda t: torch.ops.redux.softmax(t, 1)):
        assert "redux::_exp_rows" in ops_called(lambda: call(long))
        assert "redux::_exp_rows" not in ops_called(lambda: call(long.clone().requires_grad_()))


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_and_vmapped_calls_give_the_eager_bits(device):
    x = random_tensor((6, 129), torch.float32, device, seed=10)
    step = lambda t: torch.ops.redux.softmax(t * 0.5, -1) + torch.ops.redux.logsumexp(t, [-1], True)  # noqa: E731
    assert torch.equal(torch.compile(step, fullgraph=True)(x), step(x))
    assert torch.equal(torch.vmap(lambda r: torch.ops.redux.log_softmax(r, 0))(x), torch.ops.redux.log_softmax(x, 1))
    torch.library.opcheck(torch.ops.redux._exp_rows.default, (x, 0))
    torch.library.opcheck(torch.ops.redux._exp_rows.default, (x.half(), 2))
    torch.library.opcheck(torch.ops.redux._exp_rows.default, (x.bfloat16(), 3))


@pytest.mark.parametrize("device", DEVICES)
def test_bad_arguments_are_named(device):
    x = random_tensor((3, 4), torch.float32, device, seed=11)
    with pytest.raises(RuntimeError, match=r"redux._exp_rows: argument 'op' must be 0 .* or 3 \(parts\), got 4"):
        torch.ops.redux._exp_rows(x, 4)
    with pytest.raises(RuntimeError, match="redux._exp_rows: argument 'x' is 0-dim"):
        torch.ops.redux._exp_rows(x[0, 0], 0)
    with pytest.raises(RuntimeError, match="redux._exp_rows: argument 'x' has dtype"):
        torch.ops.redux._exp_rows(x.double(), 0)
    with pytest.raises(RuntimeError, match="redux._exp_rows: argument 'x' has an empty last dim"):
        torch.ops.redux._exp_rows(x[:, :0], 1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 33, 1025, 2049, 8191])
def test_the_backward_is_within_one_rounding_of_the_fp64_answer(device, dtype, n):
    x = random_tensor((3, n), dtype, device, seed=n + 1)
    g = random_tensor((3, n), dtype, device, seed=n + 2, offset=0.5)
    info = torch.finfo(dtype)
    for op, name in ((0, "softmax"), (1, "log_softmax")):
        y = torch.ops.redux._exp_rows(x, op)
        got = torch.ops.redux._exp_rows_backward(g, y, op)
        g64, y64 = g.double().cpu(), y.double().cpu()
        want = y64 * (g64 - (g64 * y64).sum(-1, keepdim=True)) if op == 0 else \
            g64 - y64.exp() * g64.sum(-1, keepdim=True)
        assert got.dtype == dtype and got.shape == y.shape
        err = (got.double().cpu() - want).abs()
        assert (err <= info.eps * want.abs() + info.tiny * info.eps).all(), (name, err.max().item())
        # a row alone has the bits it has in the batch
        assert torch.equal(torch.ops.redux._exp_rows_backward(g[1:2], y[1:2], op), got[1:2])


@pytest.mark.parametrize("device", DEVICES)
def test_the_switch_runs_the_backward_in_one_kernel(device):
    x = random_tensor((4, 3, 96), torch.float32, device, seed=12)
    for fn in (lambda t: torch.softmax(t, -1), lambda t: torch.log_softmax(t, 2)):
        grads = []
        for on in (False, True):
            t = x.clone().requires_grad_()
            with redux.enabled() if on else contextlib.nullcontext():
                fn(t).square().sum().backward()
            grads.append(t.grad)
        torch.testing.assert_close(grads[1], grads[0], rtol=1e-4, atol=1e-5)  # torch's float32 against fp64 inside
        with redux.enabled():
            c = x.clone().requires_grad_()
            names = ops_called(lambda: fn(c).square().sum().backward())
        assert {"redux::_exp_rows", "redux::_exp_rows_backward"} <= names, names


@pytest.mark.parametrize("device", DEVICES)
def test_the_backward_names_bad_arguments(device):
    y = random_tensor((3, 4), torch.float32, device, seed=13)
    with pytest.raises(RuntimeError, match="redux._exp_rows_backward: argument 'op' must be 0"):
        torch.ops.redux._exp_rows_backward(y, y, 2)
    with pytest.raises(RuntimeError, match="redux._exp_rows_backward: argument 'grad' has shape"):
        torch.ops.redux._exp_rows_backward(y[:2], y, 0)
    with pytest.raises(RuntimeError, match="redux._exp_rows_backward: argument 'grad' has dtype"):
        torch.ops.redux._exp_rows_backward(y.half(), y, 0)
    with pytest.raises(RuntimeError, match="redux._exp_rows_backward: argument 'out' has dtype"):
        torch.ops.redux._exp_rows_backward(y.double(), y.double(), 1)
