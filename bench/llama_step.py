"""What does the model switch reach in a Llama-style training step, and does
it keep its promises there?

    python bench/llama_step.py                          # CUDA when there is a GPU, else the CPU
    python bench/llama_step.py --device cpu --dim 64 --layers 2 --steps 20
    python bench/llama_step.py --dim 768 --heads 12 --layers 4 --seq 256 --batch 8 --vocab 8192  # GPU-sized
    python bench/llama_step.py --modes eager            # eager only: nothing compiled

The model: token embeddings, pre-norm blocks (RMSNorm, causal attention with
rotary position embeddings and an explicit softmax, SwiGLU MLP), a final
RMSNorm and an output layer; the step: F.cross_entropy, backward,
clip_grad_norm_, AdamW. Compiled means torch.compile of the forward,
backward and clip (the model's part); AdamW runs eagerly in both modes, as
torch's AdamW has other bits when compiled (its bias corrections become
float32 tensor arithmetic, Python floats in eager). It prints, with the
switch on:
  reductions   the aten reduction ops a forward+backward+clip+step runs
               (torch.profiler, eager) and the reductions in the graphs
               Inductor compiles (compiled), each aten one with why it is
               not redux's
  bits         run to run (two runs of --steps steps, losses and weights),
               eager and compiled; compiled against eager (losses and
               weights of 3 steps); per-sample losses of the first
               batch_max samples at every batch size 1..batch_max (matmuls
               run one sample at a time then: redux makes the reductions
               batch-invariant, not matmul)
  time         median step time of plain torch and of the switch, eager
               (steps alternating between the two) and compiled (two
               rounds of each: turning the switch on or off drops compiled
               code; compiled also with eager_numerics=False), their
               ratios (same run), and the host's part of each step (to the
               step's return: where it reaches the step time, the step is
               host-bound)
  losses       the loss curves of --steps steps, switch on against off
"""
import argparse
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout's redux

import redux  # noqa: E402

# aten ops that reduce, and why each is not redux's when it runs
REDUCTIONS = {
    # the switch's: redux when routed
    "sum": "", "mean": "", "logsumexp": "", "_softmax": "", "_softmax_backward_data": "", "_log_softmax": "",
    "_log_softmax_backward_data": "", "nll_loss_forward": "", "_foreach_norm": "", "linalg_vector_norm": "",
    "var": "", "std": "", "var_mean": "",
    "amax": "", "amin": "",
    "max": "aten::max (values and indices) is not routed (amax is)",
    "nll_loss_backward": "elementwise (its total weight is redux's): torch's kernel",
    "embedding_dense_backward": "sums each token's gradient rows: torch's kernel, compiled code runs it too",
    "nll_loss2d_forward": "cross_entropy over images reduces inside its own kernel",
    "norm": "aten::norm is not routed (linalg_vector_norm is)",
    "native_layer_norm": "", "native_layer_norm_backward": "", "_fused_rms_norm": "",
    "_fused_rms_norm_backward": "",
}


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps, self.weight = eps, nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary(x, positions):
    """Rotary position embedding of x (..., seq, head_dim)."""
    half = x.shape[-1] // 2
    freqs = 1.0 / (10000 ** (torch.arange(half, device=x.device, dtype=torch.float32) / half))
    angles = positions[:, None].float() * freqs[None, :]
    cos, sin = angles.cos(), angles.sin()
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)


class Block(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim, bias=False), nn.Linear(dim, dim, bias=False)
        self.gate, self.up = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x, linear):
        batch, seq, dim = x.shape
        q, k, v = linear(self.norm1(x), self.qkv).split(dim, -1)
        q, k, v = (t.view(batch, seq, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        positions = torch.arange(seq, device=x.device)
        q, k = rotary(q, positions), rotary(k, positions)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        mask = torch.ones(seq, seq, dtype=torch.bool, device=x.device).tril()
        attn = scores.masked_fill(~mask, float("-inf")).softmax(-1) @ v
        x = x + linear(attn.transpose(1, 2).reshape(batch, seq, dim), self.proj)
        h = self.norm2(x)
        return x + linear(F.silu(linear(h, self.gate)) * linear(h, self.up), self.down)


class Llama(nn.Module):
    def __init__(self, vocab, dim, heads, layers, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads, hidden) for _ in range(layers))
        self.norm, self.head = RMSNorm(dim), nn.Linear(dim, vocab, bias=False)
        self.per_sample = False  # matmuls one sample at a time: batch-invariant products

    def linear(self, x, layer):
        if self.per_sample:
            return torch.stack([layer(xi) for xi in x.unbind(0)])
        return layer(x)

    def forward(self, idx):
        x = self.embed(idx)
        for block in self.blocks:
            x = block(x, self.linear)
        return self.linear(self.norm(x), self.head)


def make(args, device):
    torch.manual_seed(0)
    model = Llama(args.vocab, args.dim, args.heads, args.layers, 4 * args.dim).to(device)
    return model, torch.optim.AdamW(model.parameters(), lr=1e-3)


def batch_of(args, device, seed=1):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, args.vocab, (args.batch, args.seq + 1), generator=g)
    return idx[:, :-1].to(device), idx[:, 1:].to(device)


def forward_backward_clip(model, idx, targets):
    logits = model(idx)
    loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten())
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    return loss.detach()


def stepper(model, opt, compiled):
    """step(idx, targets) -> loss: the model's part compiled or not, AdamW eager."""
    part = torch.compile(forward_backward_clip) if compiled else forward_backward_clip

    def step(idx, targets):
        opt.zero_grad(set_to_none=True)
        loss = part(model, idx, targets)
        opt.step()
        return loss
    return step


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def eager_reductions(args, device):
    """{aten reduction op: calls} of one eager step with the switch on, and
    the redux op calls."""
    model, opt = make(args, device)
    idx, targets = batch_of(args, device)
    activities = [torch.profiler.ProfilerActivity.CPU]
    step = stepper(model, opt, False)
    with redux.enabled():
        step(idx, targets)  # warm-up
        with torch.profiler.profile(activities=activities) as prof:
            step(idx, targets)
    counts = {e.key: e.count for e in prof.key_averages()}
    aten = {k[6:]: n for k, n in counts.items() if k.startswith("aten::") and k[6:] in REDUCTIONS}
    mine = {k: n for k, n in counts.items() if k.startswith("redux::")}
    return aten, mine


def compiled_reductions(args, device):
    """{reduction op: nodes} in the graphs Inductor compiles for a step with
    the switch on: aten reductions and redux ops (recorded by a pre-pass,
    before the switch's)."""
    import torch._inductor.config as inductor_config
    from torch._inductor.custom_graph_pass import CustomGraphPass

    found = {}

    class Record(CustomGraphPass):
        def __call__(self, graph):
            for node in graph.nodes:
                name = getattr(getattr(node.target, "_schema", None), "name", "")
                if name.startswith("aten::") and name[6:] in REDUCTIONS:
                    found[name[6:]] = found.get(name[6:], 0) + 1
                elif name.startswith("redux::"):
                    found[name] = found.get(name, 0) + 1

        def uuid(self):
            return None  # not cached: every graph passes through it

    model, opt = make(args, device)
    idx, targets = batch_of(args, device)
    inductor_config.post_grad_custom_pre_pass = Record()
    try:
        with redux.enabled():
            stepper(model, opt, True)(idx, targets)
    finally:
        inductor_config.post_grad_custom_pre_pass = None
    return found


def losses_of(args, device, steps, switch, compiled=False):
    model, opt = make(args, device)
    idx, targets = batch_of(args, device)
    with redux.enabled() if switch else _nothing():
        step = stepper(model, opt, compiled)
        losses = [step(idx, targets) for _ in range(steps)]
    return losses, [p.detach().clone() for p in model.parameters()]


def per_sample_losses(args, device):
    """True when every sample's loss has the same bits at batch sizes 1..B."""
    model, _ = make(args, device)
    model.per_sample = True
    idx, targets = batch_of(args, device)
    with torch.no_grad(), redux.enabled():
        def losses(b):
            logits = model(idx[:b])
            return F.cross_entropy(logits.transpose(1, 2), targets[:b], reduction="none").mean(-1)
        full = losses(args.batch)
        return all(torch.equal(losses(b), full[:b]) for b in range(1, args.batch + 1))


def timed_step(device, step, idx, targets):
    """(step time, host time): from a synchronized start to the GPU's end,
    and to the step's return (the host's enqueue; a step whose host time
    reaches its step time is host-bound)."""
    synchronize(device)
    start = time.perf_counter()
    step(idx, targets)
    host = time.perf_counter()
    synchronize(device)
    return time.perf_counter() - start, host - start


# how each timed step runs: plain torch, the switch, the switch with
# Inductor's own elementwise code (compiled only; eager_numerics changes
# nothing in eager)
SETTINGS = {"torch": _nothing, "switch": redux.enabled, "switch, Inductor's elementwise code":
            lambda: redux.enabled(eager_numerics=False)}


def step_times(args, device, compiled, warm=3):
    """{setting: (median step ms, median host ms)}. Eager: one step of
    each in turn, so that the host's drift falls on all; compiled: two
    rounds of each (the switch drops compiled code when it turns on or
    off)."""
    batch = batch_of(args, device)
    settings = list(SETTINGS) if compiled else ["torch", "switch"]
    steps = {name: stepper(*make(args, device), compiled) for name in settings}
    times = {name: [] for name in settings}
    if not compiled:
        for i in range(args.timed + warm):
            for name in settings:
                with SETTINGS[name]():
                    t = timed_step(device, steps[name], *batch)
                if i >= warm:
                    times[name].append(t)
    else:
        for rounds in (args.timed // 2, args.timed - args.timed // 2):
            for name in settings:
                with SETTINGS[name]():
                    for i in range(rounds + warm):  # the warm-up compiles
                        t = timed_step(device, steps[name], *batch)
                        if i >= warm:
                            times[name].append(t)
    return {name: tuple(statistics.median(t[k] for t in times[name]) * 1e3 for k in (0, 1)) for name in settings}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() and redux.has_cuda_kernels() else "cpu")
    ap.add_argument("--vocab", type=int, default=512)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16, help="batch size; per-sample bits at 1..batch")
    ap.add_argument("--steps", type=int, default=50, help="steps of the loss curves and the run-to-run check")
    ap.add_argument("--timed", type=int, default=20, help="timed steps for each median")
    ap.add_argument("--modes", nargs="+", choices=["eager", "compiled"], default=["eager", "compiled"],
                    help="the modes checked and timed (compiled ones compile the model several times)")
    args = ap.parse_args()
    device = args.device
    name = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    print(f"Llama-style step on {name}, torch {torch.__version__}: vocab {args.vocab}, dim {args.dim}, "
          f"heads {args.heads}, layers {args.layers}, seq {args.seq}, batch {args.batch}", flush=True)

    aten, mine = eager_reductions(args, device)
    print("\nreductions of one step with the switch on, eager (aten op: calls; why not redux's):")
    for op, n in sorted(aten.items()):
        why = REDUCTIONS[op] or "routed: runs redux's kernel inside"
        print(f"  aten::{op:<28} {n:4d}  {why}")
    print("  redux ops: " + ", ".join(f"{k} x{n}" for k, n in sorted(mine.items())))
    compiled_too = "compiled" in args.modes
    if compiled_too:
        found = compiled_reductions(args, device)
        print("reductions in the compiled step's graphs (op: nodes; for an aten op, why not redux's):")
        for op, n in sorted(found.items()):
            print(f"  {op if op.startswith('redux::') else 'aten::' + op:<34} {n:4d}  "
                  f"{'' if op.startswith('redux::') else REDUCTIONS[op] or 'made by an op eager leaves to its own kernel'}")

    def same(a, b):
        return "identical" if all(torch.equal(x, y) for x, y in zip(a[0] + a[1], b[0] + b[1])) else "DIFFER"
    run1 = losses_of(args, device, args.steps, True)
    same_runs = same(run1, losses_of(args, device, args.steps, True))
    compiled_bits = ""
    if compiled_too:
        compiled1 = losses_of(args, device, args.steps, True, compiled=True)
        same_compiled_runs = same(compiled1, losses_of(args, device, args.steps, True, compiled=True))
        eager_vs_compiled = same(losses_of(args, device, 3, True), losses_of(args, device, 3, True, compiled=True))
        compiled_bits = f", compiled {same_compiled_runs}; compiled against eager (3 steps) {eager_vs_compiled}"
    print(f"\nbits ({args.steps} steps, losses and weights): run to run eager {same_runs}{compiled_bits}; "
          f"per-sample losses at batch sizes 1..{args.batch} "
          f"{'identical' if per_sample_losses(args, device) else 'DIFFER'}")

    print("\nstep time, median of", args.timed, "steps (ms; ratio to plain torch's in the same mode; the host's "
          "part, to the step's return, in brackets):")
    for compiled in (False, True) if compiled_too else (False,):
        times = step_times(args, device, compiled)
        plain, plain_host = times.pop("torch")
        print(f"  {'compiled' if compiled else 'eager':<9} torch {plain:8.2f} [{plain_host:.2f}]" +
              "".join(f"  {name} {ms:8.2f} ({ms / plain:.3f}) [{host:.2f}]" for name, (ms, host) in times.items()))

    plain_curve, _ = losses_of(args, device, args.steps, False)
    gap = max(abs(a.item() - b.item()) / abs(b.item()) for a, b in zip(run1[0], plain_curve))
    print(f"\nloss curves, {args.steps} steps: first {plain_curve[0].item():.5f}, last plain "
          f"{plain_curve[-1].item():.5f}, last switch {run1[0][-1].item():.5f}; largest relative gap {gap:.2e}")


if __name__ == "__main__":
    main()
