"""redux.enable() / disable() / enabled(): torch's sum and mean on redux's
kernels (redux/switch.py), their fallbacks, scope, gradients, the
batch-invariance and run-to-run guarantees, torch.compile and CUDA graphs."""
import contextlib
import threading
import warnings

import pytest
import torch

import redux
from conftest import DEVICES, cuda, ops_called, random_tensor
from redux._dtypes import MEAN_SUM_DTYPE

# the redux ops a routed reduction runs: the sums, the row kernels, the column sums about a center and the
# column softmaxes
REDUX_REDUCTIONS = {"redux::sum", "redux::mean", "redux::_sum_of", "redux::_one_pass_mean", "redux::_exp_rows",
                    "redux::_moment_rows", "redux::_sum_squares_rows", "redux::_centered_cols", "redux::_exp_cols",
                    "redux::amax", "redux::amin"}



@pytest.fixture(autouse=True)
def switch_off_after():
    yield
    redux.disable()
    assert not redux.is_enabled(), "a test left an enabled() block open"


@pytest.mark.parametrize("device", DEVICES)
def test_sum_and_mean_route_to_redux_only_while_on(device):
    x = random_tensor((6, 300), torch.float32, device, seed=1)
    calls = [lambda: torch.sum(x), lambda: x.sum(-1), lambda: torch.sum(x, 0, dtype=torch.float64),
             lambda: torch.mean(x), lambda: x.mean(-1, keepdim=True), lambda: x.pow(2).mean([0, 1])]
    for call in calls:  # a float32 mean is one kernel, redux::_one_pass_mean
        assert not ops_called(call) & REDUX_REDUCTIONS
        with redux.enabled():
            assert ops_called(call) & {"redux::sum", "redux::_one_pass_mean"}
        assert not ops_called(call) & REDUX_REDUCTIONS


@pytest.mark.parametrize("device", DEVICES)
def test_results_are_redux_bits_and_close_to_torch(device):
    x = random_tensor((5, 7, 130), torch.float32, device, seed=2)
    plain = [torch.sum(x), x.sum(-1), x.mean(1), torch.mean(x, dtype=torch.float64)]
    with redux.enabled():
        routed = [torch.sum(x), x.sum(-1), x.mean(1), torch.mean(x, dtype=torch.float64)]
    mine = [torch.ops.redux.sum(x), torch.ops.redux.sum(x, [-1]), torch.ops.redux.mean(x, [1]),
            torch.ops.redux.mean(x, dtype=torch.float64)]
    for r, m, p in zip(routed, mine, plain):
        assert torch.equal(r, m) and r.dtype == p.dtype and r.shape == p.shape
        assert torch.allclose(r, p, rtol=1e-5)


@pytest.mark.parametrize("device", DEVICES)
def test_out_forms_and_the_sum_inside_logsumexp_route_to_redux(device):
    """The out= overloads give redux's bits in the dtype torch picks for
    them (out's dtype where torch takes it), torch's errors where torch
    refuses; logsumexp, whose sum is at::sum_out, gets redux's sum."""
    x = random_tensor((9, 700), torch.float32, device, seed=3)
    aten = torch.ops.aten
    calls = [  # (call, redux's value)
        (lambda o: torch.sum(x, 1, out=o), lambda: torch.ops.redux.sum(x, [1])),
        (lambda o: torch.sum(x, [0, 1], keepdim=True, out=o), lambda: torch.ops.redux.sum(x, [0, 1], True)),
        (lambda o: torch.mean(x, -1, out=o), lambda: torch.ops.redux.mean(x, [-1])),
        (lambda o: aten.sum.out(x, out=o), lambda: torch.ops.redux.sum(x)),
        (lambda o: aten.mean.dtype_out(x, out=o), lambda: torch.ops.redux.mean(x)),
    ]
    for call, want in calls:
        plain = torch.empty(0, device=device)
        call(plain)
        with redux.enabled():
            out = torch.empty(0, device=device)
            assert ops_called(lambda: call(out)) & {"redux::sum", "redux::_one_pass_mean"}
        assert torch.equal(out, want()) and out.shape == plain.shape
        assert torch.allclose(out, plain, rtol=1e-5, atol=1e-5)
    wide = torch.empty(0, dtype=torch.float64, device=device)
    with redux.enabled():
        torch.sum(x, 1, out=wide)  # torch sums in out's dtype
        assert torch.equal(wide, torch.ops.redux.sum(x, [1], dtype=torch.float64))
        with pytest.raises(RuntimeError):  # a dtype argument that is not out's
            torch.sum(x, 1, dtype=torch.float32, out=torch.empty(0, dtype=torch.float64, device=device))
        with pytest.raises(RuntimeError):  # the mean of integers into a float out
            torch.mean(x.long(), 1, out=torch.empty(0, device=device))
        lse = x.logsumexp(-1)
    top = x.amax(-1, keepdim=True)
    assert torch.equal(lse, torch.ops.redux.sum((x - top).exp(), [-1]).log().add(top.squeeze(-1)))


@pytest.mark.parametrize("device", DEVICES)
def test_a_complex_mean_is_the_means_of_its_parts(device):
    """The switch's complex mean is the real and imaginary parts' means, so
    an infinite part stays infinite beside a finite one; torch divides by a
    complex count and gives NaN there (docs/design.md, where the results
    differ from torch's)."""
    z = torch.complex(random_tensor((3, 8), torch.float32, device, seed=9),
                      random_tensor((3, 8), torch.float32, device, seed=10))
    z[1, 2] = complex(float("inf"), 1.0)
    want = torch.complex(z.real.mean(1), z.imag.mean(1))
    with redux.enabled():
        got = z.mean(1)
    assert got[1].real.item() == float("inf") and torch.isfinite(got[1].imag)
    torch.testing.assert_close(got.real, want.real)
    torch.testing.assert_close(got.imag, want.imag)
    if device == "cpu":  # torch's own answer, as measured on the CPU
        assert torch.isnan(z.mean(1)[1].imag)


@pytest.mark.parametrize("device", DEVICES)
def test_what_redux_lacks_falls_back_and_torchs_errors_stay(device):
    z = torch.randn(4, 6, dtype=torch.complex64, device=device) + 2
    i = torch.randint(-9, 9, (4, 6), dtype=torch.int32, device=device)
    b = torch.rand(4, 6, device=device) > 0.5
    with redux.enabled():
        assert torch.allclose(z.sum(1), z.cpu().sum(1).to(device)) and z.sum(1).dtype == torch.complex64
        assert torch.allclose(z.mean(), z.cpu().mean().to(device))
        assert torch.equal(i.sum(0, dtype=torch.int32), i.cpu().sum(0, dtype=torch.int32).to(device))
        assert torch.equal(i.sum(), i.cpu().sum().to(device)) and i.sum().dtype == torch.int64
        assert torch.equal(b.sum(1), b.cpu().sum(1).to(device))
        assert torch.equal(i.to(torch.uint8).sum(dtype=torch.uint8), i.to(torch.uint8).cpu().sum(dtype=torch.uint8).to(device))
        with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
            i.mean()
        assert torch.allclose(i.mean(1, dtype=torch.float32), i.cpu().float().mean(1).to(device))


@pytest.mark.parametrize("device", DEVICES)
def test_gradients_equal_torchs(device):
    x = random_tensor((4, 9, 33), torch.float32, device, seed=4).requires_grad_()

    def grads():
        y = x.sum(-1).pow(2).mean() + (x * x).mean(1).sum()
        return torch.autograd.grad(y, x)[0]
    plain = grads()
    with redux.enabled():
        routed = grads()
    assert torch.allclose(routed, plain, rtol=1e-5, atol=1e-6)
    with redux.enabled():  # the sum's gradient is a broadcast: torch's, bit for bit
        (g,) = torch.autograd.grad(x.sum(-1), x, torch.ones(4, 9, device=device))
    assert torch.equal(g, torch.ones_like(x))


def test_nesting_threads_and_enable_compose():
    x = torch.randn(64) + 1
    routed = lambda: "redux::sum" in ops_called(lambda: x.sum())
    with redux.enabled():
        with redux.enabled():
            assert routed()
        assert routed()  # the outer block still holds it
    assert not routed()
    redux.enable()
    with redux.enabled():
        pass
    assert routed()  # enable() holds it after the block
    seen = []
    t = threading.Thread(target=lambda: seen.append(routed()))
    t.start()
    t.join()
    assert seen == [True]  # process-wide: other threads see it
    with redux.enabled():
        redux.disable()
        assert routed()  # the open block keeps it on
    assert not routed() and not redux.is_enabled()


# ---- the guarantees ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("shape", [(12, 7), (12, 300), (12, 3, 2048), (12, 2049), (12, 3, 8192), (12, 40000),
                                   (12, 3, 2**20)])
def test_batch_invariance_over_the_last_dim(device, dtype, shape):
    """f(x)[i] == f(x[i:i+1])[0] bit for bit, for sum and mean over the last
    dim, batch sizes 1..N; a padded batch gives the unpadded rows' bits.
    (12, w): one row alone keeps only a dim of size 1; (12, 3, 2**20): the
    whole batch has far more chunks than a few rows have."""
    n, width = shape[0], shape[-1]
    x = random_tensor(shape, dtype, device, seed=width)
    with redux.enabled():
        for f in (lambda t: t.sum(-1), lambda t: t.mean(-1), lambda t: t.pow(2).mean(-1, keepdim=True)):
            full = f(x)
            for b in range(1, n + 1):
                assert torch.equal(f(x[:b]), full[:b]), f"batch {b} differs"
            for i in (0, 5, n - 1):
                assert torch.equal(f(x[i:i + 1])[0], full[i])
            padded = torch.cat([x, random_tensor((20, *shape[1:]), dtype, device, seed=width + 1)])
            assert torch.equal(f(padded)[:n], full)


@pytest.mark.parametrize("device", DEVICES)
def test_model_forward_backward_bit_identical_run_to_run(device):
    from bench.gpt import TinyGPT, make_batch
    idx, targets = make_batch(4, 16, 64, 3, device)
    runs = []
    for _ in range(3):
        torch.manual_seed(0)
        model = TinyGPT(64, 32, 2, 2, 16).to(device)
        with redux.enabled():
            loss = model.per_sample_loss(idx, targets).mean()
            loss.backward()
        runs.append([loss.detach()] + [p.grad.clone() for p in model.parameters()])
    for other in runs[1:]:
        assert all(torch.equal(a, b) for a, b in zip(runs[0], other))


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("device", DEVICES)
def test_compiled_code_runs_redux_under_the_switch(device, dynamic):
    """Under the switch, torch.compile(fullgraph=True) code runs redux's sums
    and means with the eager switch's bits; code compiled while the switch
    was off is not reused while it is on, nor the other way round."""
    x = random_tensor((8, 512), torch.float32, device, seed=9)

    def reductions(t):
        return t.sum(-1), t.mean(-1), t.sum(), t.half().mean(0), torch.sum(t, 0, dtype=torch.float64)
    compiled = torch.compile(reductions, fullgraph=True, dynamic=dynamic)
    off = compiled(x)
    assert "redux::sum" not in ops_called(lambda: compiled(x))
    with redux.enabled():
        eager = reductions(x)
        assert "redux::sum" in ops_called(lambda: compiled(x))
        assert all(torch.equal(a, b) for a, b in zip(compiled(x), eager))
    assert "redux::sum" not in ops_called(lambda: compiled(x))
    assert all(torch.equal(a, b) for a, b in zip(compiled(x), off))


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_code_routes_what_eager_routes(device):
    """The sums inside ops with kernels of their own in eager (softmax,
    log_softmax, cross_entropy) stay Inductor's in compiled code, as they
    stay torch's in eager; those of ops whose eager kernels call aten::sum
    or aten::mean go to redux in both, with the same bits."""
    import torch.nn.functional as F
    x, y = random_tensor((8, 64), torch.float32, device, seed=13), random_tensor((8, 64), torch.float32, device, seed=14)
    labels = torch.arange(8, device=device)
    cases = {  # name: (function, routed by the eager switch)
        "softmax": (lambda t: t.softmax(-1), True),
        "log_softmax": (lambda t: t.log_softmax(-1), True),
        "cross_entropy": (lambda t: F.cross_entropy(t, labels), True),
        "var": (lambda t: t.var(-1), True),
        "vector_norm": (lambda t: torch.linalg.vector_norm(t, 2, -1), True),
        "amax": (lambda t: t.amax(-1), True),
        "amin": (lambda t: t.amin(0), True),
        "layer_norm": (lambda t: F.layer_norm(t, [64], y[0], y[1]), True),
        "rms_norm": (lambda t: F.rms_norm(t, [8, 64]), True),
        "logsumexp": (lambda t: t.logsumexp(-1), True),
        "mse_loss": (lambda t: F.mse_loss(t, y), True),
        "l1_loss": (lambda t: F.l1_loss(t, y), True),
    }
    with redux.enabled():
        for name, (fn, routed) in cases.items():
            compiled = torch.compile(fn, fullgraph=True)
            got = compiled(x)
            for call in (lambda: fn(x), lambda: compiled(x)):
                names = ops_called(call)
                assert bool(names & REDUX_REDUCTIONS) == routed, name
            if routed:
                assert torch.equal(got, fn(x)), name


def test_a_failed_eager_numerics_install_leaves_nothing_installed(monkeypatch):
    """A failure halfway through the fallbacks' install: enable() raises it,
    and no lowering, decomposition, setting, graph pass or kernel of the
    switch stays behind."""
    import torch._inductor.config as inductor_config
    from torch._inductor import lowering
    from torch._inductor.decomposition import decompositions
    from redux.switch import _eager_kernel_overloads
    ops = _eager_kernel_overloads()
    x = torch.ones(4, 5)

    def state():
        return ([lowering.lowerings.get(op) for op in ops], [decompositions.get(op) for op in ops],
                sorted(map(str, decompositions)), inductor_config.emulate_precision_casts,
                inductor_config.post_grad_custom_post_pass)
    before = state()
    calls = []
    real = lowering.register_lowering

    def failing(op, **kwargs):
        calls.append(op)
        if len(calls) == 5:
            raise RuntimeError("lowering refused")
        return real(op, **kwargs)
    monkeypatch.setattr(lowering, "register_lowering", failing)
    with pytest.raises(RuntimeError, match="lowering refused"):
        redux.enable()
    assert not redux.is_enabled() and state() == before
    assert "redux::sum" not in ops_called(lambda: x.sum())
    monkeypatch.undo()
    with redux.enabled():
        assert "redux::sum" in ops_called(lambda: x.sum())
    assert state() == before


# elementwise ops whose Inductor code is not bitwise torch's kernels (torch 2.11):
# name -> f(x, y), x normal with an offset, y in [0.5, 1.5)
ELEMENTWISE = {
    "cos": lambda x, y: x.cos(), "sin": lambda x, y: x.sin(), "exp": lambda x, y: x.exp(),
    "log": lambda x, y: x.abs().add(1).log(), "tanh": lambda x, y: x.tanh(), "sigmoid": lambda x, y: x.sigmoid(),
    "sqrt": lambda x, y: x.abs().sqrt(), "rsqrt": lambda x, y: x.abs().add(1).rsqrt(),
    "pow": lambda x, y: 10000 ** (x / 7) + x.pow(3), "div": lambda x, y: x / y + x / 5.657,
    "silu": lambda x, y: torch.nn.functional.silu(x) * y, "gelu": lambda x, y: torch.nn.functional.gelu(x),
    "lerp": lambda x, y: torch.lerp(x, y, 0.1) + torch.lerp(x, y, y),
    "erf": lambda x, y: x.erf(), "expm1": lambda x, y: x.expm1(),
}


@pytest.mark.parametrize("device", DEVICES)
def test_compiled_elementwise_ops_have_the_eager_bits(device):
    """Under the switch (eager_numerics, the default) compiled code runs the
    elementwise ops whose Inductor code has other bits than torch's kernels
    as those kernels: forward and input gradient, and embedding's backward
    (a sum over repeated tokens), have the eager bits."""
    x = random_tensor((4099,), torch.float32, device, seed=21)
    y = random_tensor((4099,), torch.float32, device, seed=22, offset=0.0).abs().remainder(1.0).add(0.5)
    cotangent = random_tensor((4099,), torch.float32, device, seed=23)

    def run(f, compiled):
        xi = x.clone().requires_grad_()
        out = (torch.compile(f, fullgraph=True) if compiled else f)(xi, y)
        out.backward(cotangent)
        return out.detach(), xi.grad

    differ = []
    with redux.enabled():
        for name, f in ELEMENTWISE.items():
            eager, compiled = run(f, False), run(f, True)
            differ += [name] if not all(torch.equal(a, b) for a, b in zip(eager, compiled)) else []
        tokens = torch.tensor([3, 1, 3, 3, 0, 1, 7, 3] * 50, device=device)
        table = random_tensor((8, 16), torch.float32, device, seed=24)
        grads = []
        for compiled in (False, True):
            w = table.clone().requires_grad_()
            embed = torch.compile(torch.nn.functional.embedding, fullgraph=True) if compiled else \
                torch.nn.functional.embedding
            embed(tokens, w).mul(cotangent[:16]).sum().backward()
            grads.append(w.grad)
        differ += [] if torch.equal(*grads) else ["embedding backward"]
    assert differ == []


def test_eager_numerics_is_installed_with_the_switch_and_removed_after():
    """The fallbacks, the decompositions they replace and Inductor's rounding
    settings are there while the switch is on with eager_numerics, as they
    were before once it is off; eager_numerics=False leaves them alone; a
    second setting while on is refused and changes nothing."""
    import torch._inductor.config as inductor_config
    from torch._inductor import lowering
    from torch._inductor.decomposition import decompositions
    from redux.switch import _eager_kernel_overloads

    ops = _eager_kernel_overloads()
    assert torch.ops.aten.silu_backward.default in ops and torch.ops.aten.div.Tensor in ops

    def state():
        return ([lowering.lowerings.get(op) for op in ops], [decompositions.get(op) for op in ops],
                [op in lowering.fallbacks for op in ops], inductor_config.emulate_precision_casts,
                inductor_config.eager_numerics.division_rounding)
    before = state()
    with redux.enabled():
        assert all(getattr(lowering.lowerings[op], "_is_fallback_handler", False) for op in ops)
        assert all(op not in decompositions and op in lowering.fallbacks for op in ops)
        assert inductor_config.emulate_precision_casts and inductor_config.eager_numerics.division_rounding
        with pytest.raises(RuntimeError, match="on with eager_numerics=True"):
            redux.enable(eager_numerics=False)
        with pytest.raises(RuntimeError, match="on with eager_numerics=True"):
            with redux.enabled(eager_numerics=False):
                pass
        with redux.enabled():  # the same setting nests
            assert redux.is_enabled()
        assert redux.is_enabled() and not redux.switch._persistent
    assert state() == before and not redux.is_enabled()
    with redux.enabled(eager_numerics=False):
        assert redux.is_enabled() and state() == before
    assert state() == before


@pytest.mark.parametrize("device", DEVICES)
def test_a_compiled_training_step_reduces_on_redux(device):
    """Forward and backward graphs: the loss's mean and the bias gradients'
    sums run on redux; the loss has the eager switch's bits."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(device)
    x = random_tensor((16, 64), torch.float32, device, seed=12)

    def step(t):
        loss = model(t).square().mean()
        loss.backward()
        return loss
    with redux.enabled():
        eager = step(x).detach()
        grads = [p.grad.clone() for p in model.parameters()]
        model.zero_grad()
        compiled = torch.compile(step)
        loss = compiled(x)
        model.zero_grad()
        names = ops_called(lambda: compiled(x))
    assert "redux::sum" in names and torch.equal(loss.detach(), eager)
    assert all(torch.allclose(p.grad, g, rtol=1e-6, atol=1e-7) for p, g in zip(model.parameters(), grads))


def test_another_graph_pass_in_redux_place_is_refused_and_nothing_installed():
    import torch._inductor.config as inductor_config
    x = torch.ones(4, 5)
    inductor_config.post_grad_custom_post_pass = theirs = object()
    try:
        with pytest.raises(RuntimeError, match="post_grad_custom_post_pass is already set"):
            redux.enable()
        assert not redux.is_enabled() and "redux::sum" not in ops_called(lambda: x.sum())
        assert inductor_config.post_grad_custom_post_pass is theirs
    finally:
        inductor_config.post_grad_custom_post_pass = None


@cuda
@pytest.mark.cuda
def test_cuda_graph_capture_and_replay_under_the_switch():
    x = random_tensor((64, 1000), torch.float32, "cuda", seed=10)
    static_in = x.clone()
    with redux.enabled():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):  # warm-up on a side stream, as capture wants
            static_in.sum(-1) + static_in.mean(0).sum()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            static_out = static_in.sum(-1) + static_in.mean(0).sum()
    for k in range(3):
        static_in.copy_(x + k)
        graph.replay()
        torch.cuda.synchronize()
        with redux.enabled():
            expect = (x + k).sum(-1) + (x + k).mean(0).sum()
        assert torch.equal(static_out, expect)


def test_a_matmul_override_and_the_switch_are_both_in_force():
    """A batch-invariant matmul library's way in (a Python override of
    aten::mm) and the switch take different ops: each stays in force,
    registered before or after the other, and each removal leaves the
    other working."""
    calls = []

    def row_by_row_mm(a, b):  # a stand-in for a batch-invariant matmul: one row at a time, through bmm
        calls.append(a.shape)
        return torch.cat([torch.ops.aten.bmm(a[i:i + 1][None], b[None])[0] for i in range(a.shape[0])])

    def override_mm():
        lib = torch.library.Library("aten", "IMPL")
        with warnings.catch_warnings():  # torch warns that a kernel is overridden: the point here
            warnings.simplefilter("ignore")
            lib.impl("mm", row_by_row_mm, "CPU")
        return lib

    w = random_tensor((6, 5), torch.float32, "cpu", seed=13)
    x = random_tensor((4, 6), torch.float32, "cpu", seed=14)
    step = lambda: torch.mm(x, w).square().mean()  # noqa: E731
    for matmul_first in (True, False):
        matmul = None
        try:
            if matmul_first:
                matmul = override_mm()
            with redux.enabled():
                if not matmul_first:
                    matmul = override_mm()
                calls.clear()
                names = ops_called(step)
                assert calls == [(4, 6)] and "redux::mean" in names
            calls.clear()
            assert "redux::mean" not in ops_called(step) and calls == [(4, 6)]  # the switch off, the matmul on
        finally:
            if matmul is not None:
                matmul._destroy()
    calls.clear()
    with redux.enabled():
        assert "redux::mean" in ops_called(step) and not calls


def test_a_conflicting_override_names_the_op_and_installs_nothing():
    """Another library's Python override of an op the switch takes: enable()
    and enabled() raise naming the op and where the other kernel came from,
    and leave nothing of redux installed (all or nothing)."""
    x = random_tensor((3, 5), torch.float32, "cpu", seed=12)
    plain = torch.sum(x)
    other = torch.library.Library("aten", "IMPL")
    other.impl("mean.dim", lambda t, dim, keepdim=False, *, dtype=None: torch.zeros(()), "CPU")
    try:
        for turn_on in (redux.enable, lambda: redux.enabled().__enter__()):
            with pytest.raises(RuntimeError, match=r"aten::mean.dim for CPU is already overridden .*test_switch.py"):
                turn_on()
            assert not redux.is_enabled()
            assert torch.equal(torch.sum(x), plain) and "redux::sum" not in ops_called(lambda: torch.sum(x))
    finally:
        other._destroy()
    with redux.enabled():  # once the other override is gone, the switch works
        assert redux.is_enabled() and "redux::sum" in ops_called(lambda: torch.sum(x))
    assert not redux.is_enabled()


def nll_loss_formula(x, target, weight, reduction, ignore_index):
    """The formula redux::_nll_loss_forward computes, in Python: the
    weighted picked values in the wide dtype, negated, -0 where ignored;
    their sum subtracted from 0, divided by the total weight for "mean";
    each output rounded once."""
    wide = MEAN_SUM_DTYPE[x.dtype]
    valid = target != ignore_index
    safe = target.where(valid, 0)
    picked = x.gather(-1, safe.unsqueeze(-1)).squeeze(-1).to(wide)
    w = weight[safe].to(wide).where(valid, 0.0) if weight is not None else None
    terms = (picked if w is None else picked.mul(w)).where(valid, -0.0)
    if x.dim() == 1:
        w = w if w is not None else valid.to(wide)
        return (terms.div(w.neg()) if reduction == 1 else terms.neg()).to(x.dtype), w.to(x.dtype)
    if reduction == 0:
        return terms.neg().to(x.dtype), torch.zeros((), dtype=x.dtype, device=x.device)
    total_weight = torch.ops.redux.sum(w) if w is not None else torch.ops.redux.sum(valid, dtype=wide)
    out = torch.rsub(torch.ops.redux.sum(terms), 0.0)
    return (out.div(total_weight) if reduction == 1 else out).to(x.dtype), total_weight.to(x.dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_nll_loss_is_one_op_with_the_formulas_bits(device):
    """The switch's nll_loss_forward is redux::_nll_loss_forward: the bits of
    its formula (all dtypes, weights or none, an ignored class, every target
    ignored, each reduction, a batch of one, one sample), torch's values, and an
    op that passes opcheck and is what cross_entropy runs."""
    import torch.nn.functional as F
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        for shape in ((7, 11), (1, 11), (11,)):
            x = random_tensor(shape, dtype, device, seed=len(shape)).log_softmax(-1)
            g = torch.Generator().manual_seed(3)
            size = shape[:-1]
            target = torch.randint(0, 11, size, generator=g).to(device)
            weight = random_tensor((11,), dtype, device, seed=5).abs()
            for w in (None, weight):
                for ignore_index in (-100, 3, int(target.flatten()[0])):
                    for t in (target, torch.full_like(target, ignore_index)):
                        for reduction in (0, 1, 2):
                            got = torch.ops.redux._nll_loss_forward(x, t, w, reduction, ignore_index)
                            want = nll_loss_formula(x, t, w, reduction, ignore_index)
                            for a, b in zip(got, want):
                                assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(
                                    a.view(torch.uint8) if a.dim() else a.reshape(1).view(torch.uint8),
                                    b.view(torch.uint8) if b.dim() else b.reshape(1).view(torch.uint8)), \
                                    (dtype, shape, w is None, ignore_index, reduction)
            if dtype != torch.float64 or shape != (7, 11):
                continue
            with redux.enabled():
                names = ops_called(lambda: F.cross_entropy(x, target))
                loss = F.cross_entropy(x, target)
            assert "redux::_nll_loss_forward" in names
            torch.testing.assert_close(loss, F.cross_entropy(x, target))
            torch.library.opcheck(torch.ops.redux._nll_loss_forward.default, (x, target, weight, 1, -100))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_the_other_reductions_of_a_model_run_on_redux_with_torchs_answers(device, dtype):
    """softmax, log_softmax (and their backward), var / std / var_mean,
    vector_norm, clip_grad_norm_'s _foreach_norm and cross_entropy's nll_loss
    under the switch: torch's values and gradients (within the dtype's
    tolerance), each running a redux op."""
    import torch.nn.functional as F
    x = random_tensor((6, 300), dtype, device, seed=21)
    labels = torch.tensor([0, 299, -100, 5, 17, 3], device=device)
    weight = random_tensor((300,), dtype, device, seed=22).abs()
    cases = {
        "softmax": lambda t: t.softmax(-1),
        "log_softmax": lambda t: t.log_softmax(0),
        "softmax to float32": lambda t: F.softmax(t, -1, dtype=torch.float32),
        "var": lambda t: t.var(-1, keepdim=True),
        "std": lambda t: t.std(0, correction=0),
        "var_mean": lambda t: torch.stack(torch.var_mean(t, -1)),
        "vector_norm": lambda t: torch.linalg.vector_norm(t, 3, -1),
        "inf norm": lambda t: torch.linalg.vector_norm(t, float("inf")),
        "cross_entropy": lambda t: F.cross_entropy(t, labels),
        "cross_entropy sum, weights": lambda t: F.cross_entropy(t, labels, weight, reduction="sum"),
        "nll_loss none": lambda t: F.nll_loss(t, labels, reduction="none"),
    }
    tol = {"rtol": 2e-2, "atol": 2e-2} if dtype == torch.bfloat16 else {"rtol": 1e-5, "atol": 1e-6}
    for name, fn in cases.items():
        a, b = x.clone().requires_grad_(), x.clone().requires_grad_()
        want = fn(a)
        want.float().square().sum().backward()
        with redux.enabled():
            got = fn(b)
            got.float().square().sum().backward()
            c = x.clone().requires_grad_()
            names = ops_called(lambda: fn(c).float().square().sum().backward())
        assert got.dtype == want.dtype and got.shape == want.shape, name
        torch.testing.assert_close(got, want, **tol, msg=name)
        scale = a.grad.abs().max().item()  # gradients: errors at the scale of the largest
        torch.testing.assert_close(b.grad, a.grad, rtol=tol["rtol"], atol=tol["atol"] * max(scale, 1.0), msg=name)
        assert any(n.startswith("redux::") and n not in ("redux::sum", "redux::mean") for n in names) or \
            name.startswith(("cross_entropy", "nll_loss")), (name, sorted(n for n in names if "redux" in n))
        assert "redux::sum" in names, name
    grads = [random_tensor((40, 7), dtype, device, seed=23), random_tensor((300,), dtype, device, seed=24)]
    params = [torch.zeros_like(g, requires_grad=True) for g in grads]
    for p, g in zip(params, grads):
        p.grad = g.clone()
    want = torch.nn.utils.clip_grad_norm_(params, 1.0)
    for p, g in zip(params, grads):
        p.grad = g.clone()
    with redux.enabled():
        names = ops_called(lambda: torch.nn.utils.clip_grad_norm_(params, 1.0))
        for p, g in zip(params, grads):
            p.grad = g.clone()
        got = torch.nn.utils.clip_grad_norm_(params, 1.0)
    torch.testing.assert_close(got, want, **tol)
    assert "redux::vector_norm" in names


@pytest.mark.parametrize("device", DEVICES)
def test_foreach_norm_of_long_tensors_has_vector_norms_bits(device):
    """clip_grad_norm_'s _foreach_norm of tensors longer than the row
    kernel's rows, several dtypes mixed with short ones and other orders:
    each norm has redux.vector_norm's bits, shape and dtype, and the long
    2-norms take one list call (redux::_sum_of_each), no per-tensor one."""
    shapes = [((300, 700), torch.float32), ((70001,), torch.bfloat16), ((40, 7), torch.float32),
              ((3, 200, 150), torch.float64), ((65537,), torch.float16), ((1, 90000), torch.float32)]
    xs = [random_tensor(shape, dtype, device, seed=30 + i) for i, (shape, dtype) in enumerate(shapes)]
    for ord in (2, 1, float("inf")):
        want = [torch.ops.redux.vector_norm(x, ord) for x in xs]
        with redux.enabled():
            got = torch._foreach_norm(xs, ord)
            names = ops_called(lambda: torch._foreach_norm(xs, ord))
        for g, w in zip(got, want):
            assert g.shape == w.shape == () and g.dtype == w.dtype and torch.equal(g, w), ord
        if ord == 2:
            assert "redux::_sum_of_each" in names, sorted(names)
            assert not names & {"redux::_sum_of", "redux::vector_norm"}, sorted(names)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_layer_norm_and_rms_norm_run_on_redux_with_torchs_answers(device, dtype):
    """native_layer_norm and _fused_rms_norm (F.layer_norm, F.rms_norm) and
    their backward under the switch: torch's outputs (values, dtypes and
    shapes of the saved statistics too) and gradients of the input, weight
    and bias, within the dtype's tolerance; forward and backward reduce on
    redux; the statistics of a row do not depend on the batch."""
    import torch.nn.functional as F
    x = random_tensor((4, 6, 96), dtype, device, seed=31)
    w, b = random_tensor((96,), dtype, device, seed=32), random_tensor((96,), dtype, device, seed=33)
    tol = {"rtol": 2e-2, "atol": 2e-2} if dtype == torch.bfloat16 else {"rtol": 1e-5, "atol": 1e-5}
    aten = torch.ops.aten
    forms = {
        "layer_norm": (lambda t, w, b: F.layer_norm(t, [96], w, b), True),
        "layer_norm over two dims, no affine": (lambda t, w, b: F.layer_norm(t, [6, 96]), False),
        "rms_norm": (lambda t, w, b: F.rms_norm(t, [96], w), True),
        "rms_norm over every dim, eps": (lambda t, w, b: F.rms_norm(t, [4, 6, 96], eps=1e-3), False),
    }
    row_kernels = {"redux::_moment_rows", "redux::_sum_squares_rows"}
    for name, (fn, affine) in forms.items():
        grads = []
        for on in (False, True):
            t, tw, tb = (v.clone().requires_grad_() for v in (x, w, b))
            with redux.enabled() if on else contextlib.nullcontext():
                y = fn(t, tw, tb)
                y.float().square().sum().backward()
                if on:
                    c = x.clone().requires_grad_()
                    names = ops_called(lambda: fn(c, w, b).float().square().sum().backward())
            grads.append((y.detach(), t.grad) + ((tw.grad, tb.grad) if affine else ()))
        want, got = grads
        assert got[0].dtype == want[0].dtype and got[0].shape == want[0].shape, name
        for g, v in zip(got, want):
            if v is None:  # rms_norm has no bias
                assert g is None, name
                continue
            scale = max(v.abs().max().item(), 1.0)
            torch.testing.assert_close(g, v, rtol=tol["rtol"], atol=tol["atol"] * scale, msg=name)
        assert "redux::sum" in names and ({"redux::mean", "redux::var_mean"} & names), (name, names)
        # the statistics over the trailing dims in one kernel, where it reads the dtype
        assert bool(row_kernels & names) == (dtype != torch.float64), (name, names)
    # the saved statistics, as the aten ops give them
    for call in (lambda: aten.native_layer_norm(x, [96], w, b, 1e-5),
                 lambda: aten.native_layer_norm(x, [6, 96], None, None, 1e-5),
                 lambda: aten._fused_rms_norm(x, [96], w, None)) + (
                 (lambda: aten.native_layer_norm(x, [96], w.float(), b.float(), 1e-5),)  # mixed dtypes
                 if dtype == torch.bfloat16 else ()):
        try:
            want = call()
        except RuntimeError as e:  # CUDA's kernel refuses mixed dtypes, the CPU's takes them
            with redux.enabled(), pytest.raises(RuntimeError) as ours:
                call()
            assert str(ours.value) == str(e)
            continue
        with redux.enabled():
            got = call()
        for g, v in zip(got, want):
            assert g.dtype == v.dtype and g.shape == v.shape, (g.dtype, v.dtype, g.shape, v.shape)
            torch.testing.assert_close(g, v, **tol)
    with redux.enabled():  # batch invariance: a row's statistics alone and in the batch
        whole = F.layer_norm(x, [96], w, b), F.rms_norm(x, [96], w)
        alone = F.layer_norm(x[2:3], [96], w, b), F.rms_norm(x[2:3], [96], w)
    assert all(torch.equal(a, full[2:3]) for a, full in zip(alone, whole))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_rms_norm_of_complex_inputs_keeps_torchs_answers_on_the_cpu(dtype):
    """torch's CPU rms_norm takes complex inputs (x**2, holomorphic): the
    switch answers them too, with torch's values and gradients."""
    import torch.nn.functional as F
    x = torch.complex(random_tensor((3, 40), torch.float64, "cpu", seed=41),
                      random_tensor((3, 40), torch.float64, "cpu", seed=42)).to(dtype)
    w = torch.complex(random_tensor((40,), torch.float64, "cpu", seed=43),
                      random_tensor((40,), torch.float64, "cpu", seed=44)).to(dtype)
    results = []
    for on in (False, True):
        t, tw = x.clone().requires_grad_(), w.clone().requires_grad_()
        with redux.enabled() if on else contextlib.nullcontext():
            y = F.rms_norm(t, [40], tw)
            y.abs().square().sum().backward()
        results.append((y.detach(), t.grad, tw.grad))
    for got, want in zip(results[1], results[0]):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_routed_ops_keep_torchs_errors():
    import torch.nn.functional as F
    x = torch.randn(4, 5)
    calls = [
        lambda: F.cross_entropy(x, torch.tensor([0, 1, 2, 5])),       # a class out of range
        lambda: F.nll_loss(x, torch.tensor([0.0, 1.0, 2.0, 3.0])),     # float targets
        lambda: torch.ops.aten.nll_loss_forward(x, torch.tensor([0, 1, 2]), None, 1, -100),  # batch sizes differ
        lambda: F.nll_loss(x, torch.tensor([0, 1, 2, 3]), torch.ones(4)),  # weights of the wrong size
        lambda: torch.linalg.vector_norm(torch.ones(0), float("inf")),
        lambda: torch.arange(4).var(),
        lambda: x.softmax(2),
        lambda: x.log_softmax(-3),
        lambda: torch.nn.functional.layer_norm(x, [4]),                  # normalized_shape is not x's tail
        lambda: torch.nn.functional.layer_norm(x, [5], torch.ones(4)),   # a weight of the wrong shape
        lambda: torch.nn.functional.layer_norm(x.double(), [5], torch.ones(5)),  # a float32 weight, float64 x
        lambda: torch.nn.functional.rms_norm(x, [3]),
        lambda: torch.ops.aten._fused_rms_norm(x, [5], torch.ones(3), None),
    ]
    for call in calls:
        with pytest.raises(Exception) as theirs:
            call()
        with redux.enabled():
            with pytest.raises(Exception) as ours:
                call()
        # torch's type, or the one it derives from (newer torch raises NotImplementedError, a RuntimeError)
        assert isinstance(ours.value, type(theirs.value)) or isinstance(theirs.value, type(ours.value)), \
            (theirs.value, ours.value)


@pytest.mark.parametrize("device", DEVICES)
def test_routed_ops_give_torchs_outcome_for_every_dtype(device):
    """Each routed op, every dtype torch can make here: torch's dtype, shape
    and value, or an error of torch's type (or of one it derives from or
    that derives from it: NotImplementedError is a RuntimeError)."""
    import torch.nn.functional as F
    from test_inputs import ALL_DTYPES, _cuda_unsafe, _outcome
    calls = {
        "softmax": lambda t: t.softmax(-1), "log_softmax": lambda t: t.log_softmax(0),
        "softmax backward": lambda t: torch.ops.aten._softmax_backward_data(t, t, 1, t.dtype),
        "log_softmax backward": lambda t: torch.ops.aten._log_softmax_backward_data(t, t, 1, t.dtype),
        "var": lambda t: t.var(1), "std": lambda t: t.std(), "var_mean": lambda t: torch.var_mean(t, 0)[0],
        "vector_norm": lambda t: torch.linalg.vector_norm(t, 2, 1),
        "inf norm": lambda t: torch.linalg.vector_norm(t, float("inf")),
        "foreach_norm": lambda t: torch._foreach_norm([t, t[0]])[0],
        "nll_loss": lambda t: F.nll_loss(t, torch.tensor([0, 1, 3], device=device)),
        "layer_norm": lambda t: F.layer_norm(t, [4]),
        "rms_norm": lambda t: F.rms_norm(t, [4]),
        "rms_norm stats": lambda t: torch.ops.aten._fused_rms_norm(t, [4], None, None)[1],
    }
    for dtype in ALL_DTYPES:
        if device == "cuda" and _cuda_unsafe(dtype):
            continue
        try:
            x = (torch.randn(3, 4) * 3).to(dtype).to(device)
        except Exception:  # noqa: BLE001  torch cannot make it: nothing reaches the switch
            continue
        for name, fn in calls.items():
            want = _outcome(lambda: fn(x))
            with redux.enabled():
                got = _outcome(lambda: fn(x))
            what = f"{name} {dtype}"
            if want[0] == "err":
                assert got[0] == "err", f"{what}: torch raises {want[1].__name__}, the switch answers"
                assert issubclass(got[1], want[1]) or issubclass(want[1], got[1]), (what, want[1:], got[1:])
                continue
            assert got[0] == "ok", f"{what}: torch answers, the switch raises {got[1].__name__}: {got[2]}"
            assert got[1:3] == want[1:3], (what, got[1:3], want[1:3])
            assert torch.allclose(got[3], want[3], rtol=2e-2, atol=2e-2, equal_nan=True), what


@pytest.mark.parametrize("device", DEVICES)
def test_amax_and_amin_run_on_redux_with_torchs_answers(device):
    x = random_tensor((6, 40, 3), torch.float32, device, seed=21)
    i = torch.randint(-9, 9, (5, 7), dtype=torch.int32, device=device)
    want = [x.amax(1), x.amin((0, 2), keepdim=True), torch.amax(i, 0), i.amin(), x.max(1).values]
    with redux.enabled():
        calls = [lambda: x.amax(1), lambda: x.amin((0, 2), keepdim=True), lambda: torch.amax(i, 0),
                 lambda: i.amin(), lambda: x.max(1).values]
        for call, expected in zip(calls[:4], want):
            assert {"redux::amax", "redux::amin"} & ops_called(call)
            got = call()
            assert torch.equal(got, expected) and got.dtype == expected.dtype
        assert torch.equal(calls[4](), want[4])  # max(dim) gives indices too: torch's
        with pytest.raises(NotImplementedError):  # as torch's CPU kernel refuses it
            torch.ones(3, dtype=torch.complex64, device=device).amax()
        with pytest.raises(IndexError):
            x.amax(3)


@pytest.mark.parametrize("device", DEVICES)
def test_empty_inputs_of_dtypes_torch_has_no_loop_for_are_answered_as_torch(device):
    """torch reaches no loop for an empty input, so it refuses no dtype
    there (amax of complex, softmax of integers); neither does the switch.
    Its dim checks still stand."""
    c = torch.zeros(2, 0, 3, dtype=torch.complex64, device=device)
    i = torch.zeros(0, 4, dtype=torch.int64, device=device)
    calls = [lambda: c.amax(2), lambda: torch.amin(c, (0, 2), keepdim=True), lambda: torch.softmax(i, 1),
             lambda: torch.log_softmax(i.bool(), 0), lambda: torch.softmax(c, -1)]
    want = [call() for call in calls]
    with redux.enabled():
        for call, expected in zip(calls, want):
            got = call()
            assert got.shape == expected.shape and got.dtype == expected.dtype and got.device == expected.device
        for bad in (lambda: c.amax(1), lambda: c.amax(3), lambda: torch.softmax(i, 2)):
            with pytest.raises(IndexError):
                bad()


# arguments of each op with a C++ kernel (redux._C.routed_in_cpp()): those
# its fast path takes (redux's dtypes) and those it hands to the switch's
# Python kernel; (positional, keyword) pairs
def _routed_in_cpp_arguments(device):
    x = random_tensor((5, 7, 33), torch.float32, device, seed=41, offset=0.3)
    y = torch.softmax(x, -1)
    c = x.to(torch.complex64)
    f32, f64 = {"dtype": torch.float32}, {"dtype": torch.float64}
    fast = {
        "sum": [((x,), {}), ((x.half(),), f32), ((x.to(torch.int16),), {}), ((x > 0,), {})],
        "sum.dim_IntList": [((x, [-1]), {}), ((x, [0, 2], True), f64), ((x.bfloat16(), None), {}),
                            ((x > 0, [1]), {})],
        "mean": [((x,), {}), ((x.int(),), f32)],
        "mean.dim": [((x, [-1], True), {}), ((x.half(), [0, 1]), {}), ((x, None), f64)],
        "_softmax": [((x, -1, False), {}), ((x.half(), 2, True), {})],
        "_log_softmax": [((x, -1, False), {}), ((x.bfloat16(), -1, True), {})],
        "_softmax_backward_data": [((x, y, -1, torch.float32), {}), ((x.half(), y.half(), 2, torch.float32), {})],
        "_log_softmax_backward_data": [((x, y, 2, torch.float32), {})],
        "amax": [((x, [1]), {}), ((x.half(), [0, 2], True), {}), ((x.to(torch.int16),), {})],
        "amin": [((x, [-1]), {}), ((x.double(),), {})],
        "linalg_vector_norm": [((x,), {}), ((x, 1, [1], True), {}), ((x.half(), float("inf"), [0, 2]), {}),
                               ((x, 3.5, None, False), f64)],
    }
    python = {
        "sum": [((c,), {}), ((x.to(torch.int8),), {"dtype": torch.int8})],
        "sum.dim_IntList": [((c, [1]), {}), ((x, [1]), {"dtype": torch.int32})],
        "mean": [((c,), {})],
        "mean.dim": [((c, [-1]), {})],
        "_softmax": [((x, 0, False), {})],  # also the fast path's: every dtype torch's kernel takes is redux's
        "_log_softmax": [((x.double(), 1, False), {})],
        # not along the last dim, a float64 output, dtypes that differ: the Python kernel's other forms
        "_softmax_backward_data": [((x, y, 0, torch.float32), {}), ((x.double(), y.double(), -1, torch.float64), {}),
                                   ((x.half(), y, -1, torch.float32), {})],
        "_log_softmax_backward_data": [((x, y, 1, torch.float32), {})],
        # every call is redux's op's, its errors too, but an empty input's (torch refuses no dtype there)
        "amax": [((c[:0], [1]), {})],
        "amin": [((x[:, :0], [0]), {})],
        "linalg_vector_norm": [((c,), {}), ((c, 1, [0]), {})],
    }
    return fast, python


@pytest.mark.parametrize("device", DEVICES)
def test_the_cpp_kernels_answer_as_the_python_kernels_and_fall_back_to_them(device, monkeypatch):
    """The ops with C++ kernels: a call in redux's dtypes runs no Python
    (the switch's Python kernel is not entered) and gives what that Python
    kernel gives, bit for bit; any other call is that Python kernel's, its
    value and its errors."""
    fast, python = _routed_in_cpp_arguments(device)
    assert set(fast) == set(python) == set(redux._C.routed_in_cpp())
    entered = []
    for table in (redux.switch._FUNCTIONAL, redux.switch._COMPOSITES):
        for name in set(fast) & set(table):
            monkeypatch.setitem(table, name, lambda *a, _fn=table[name], _name=name, **k:
                                entered.append(_name) or _fn(*a, **k))
    kernels = {**redux.switch._FUNCTIONAL, **redux.switch._COMPOSITES}
    python_only = {"_softmax", "_log_softmax"}  # their Python cases are fast-path dtypes too
    for name in fast:
        for cases, enters in ((fast[name], False), (python[name], name not in python_only)):
            for args, kwargs in cases:
                with redux.enabled():
                    entered.clear()
                    got = redux.switch._overload(name)(*args, **kwargs)
                    assert entered == ([name] if enters else []), (name, entered, args[1:])
                    want = kernels[name](*args, **kwargs)  # the Python kernel itself, its redux ops as there
                assert got.dtype == want.dtype and got.shape == want.shape, name
                assert torch.equal(got, want) or (got.isnan() == want.isnan()).all() and torch.equal(
                    got.nan_to_num(), want.nan_to_num()), name
    with redux.enabled():  # an error the Python kernel gives keeps its type and message
        with pytest.raises(IndexError, match="out of range"):
            random_tensor((3, 4), torch.float32, device, seed=1).to(torch.complex64).sum(5)
        with pytest.raises(RuntimeError, match="could not infer output dtype"):
            torch.mean(torch.ones(3, dtype=torch.int64, device=device))


def _second_override_verdict(name):
    """torch's verdict on another Python override of aten::name at CPU: None
    (taken, then removed again) or the error's type and whether it names
    an override from Python."""
    other = torch.library.Library("aten", "IMPL")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            other.impl(name, lambda *a, **k: None, "CPU")
        return None
    except RuntimeError as e:
        return type(e), "already a kernel registered from python" in str(e)
    finally:
        other._destroy()


def test_another_override_of_an_op_with_a_cpp_kernel_is_met_as_of_the_others():
    """While the switch is on, torch meets another Python override of an op
    it takes in C++ as one of an op it takes in Python (torch 2.11 refuses
    both); once it is off, as any op's."""
    with redux.enabled():
        python_kernel = _second_override_verdict("var.correction")
        for name in redux._C.routed_in_cpp():
            assert _second_override_verdict(name) == python_kernel, name
        assert torch.ones(2, 3).sum(0).shape == (3,)  # the switch's kernels are still in place
    if torch.__version__.startswith("2.11"):
        assert python_kernel == (RuntimeError, True)
    off = _second_override_verdict("var.correction")
    for name in redux._C.routed_in_cpp():
        assert _second_override_verdict(name) == off, name
