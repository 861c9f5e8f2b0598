"""A small GPT-style transformer whose norms and losses are sums and means,
and the training-step benchmark of redux's switch (redux.enabled()).

    python bench/gpt.py                 # time per training step, switch off and on
    python bench/gpt.py --device cpu --layers 2 --dim 64 --steps 5

The model: token and position embeddings, pre-norm blocks (RMSNorm:
x.pow(2).mean(-1), causal attention, MLP), a final RMSNorm and a tied
output layer; the loss is per-token cross entropy (logsumexp minus the
target's logit) averaged per sample, then over the batch. With the switch on,
every one of those means and sums (and the sums inside logsumexp) runs on
redux.

Batch invariance needs every op invariant, not only the reductions: the
matrix products here run one sample at a time (the same shapes, so the same
kernels, whatever the batch size), attention per sample over its heads.
The reductions run over the whole batch at once: that is what the switch
makes batch-invariant.
"""
import argparse
import contextlib
import math
import os
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def per_sample_linear(x, weight):
    """x @ weight.T one sample at a time: every sample's product has the
    same shape, so its bits do not depend on the batch size."""
    return torch.stack([xi @ weight.t() for xi in x.unbind(0)])


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)
        self.qkv = nn.Parameter(torch.randn(3 * dim, dim) / math.sqrt(dim))
        self.proj = nn.Parameter(torch.randn(dim, dim) / math.sqrt(dim))
        self.up = nn.Parameter(torch.randn(4 * dim, dim) / math.sqrt(dim))
        self.down = nn.Parameter(torch.randn(dim, 4 * dim) / math.sqrt(4 * dim))

    def attention(self, x):
        batch, seq, dim = x.shape
        q, k, v = per_sample_linear(x, self.qkv).split(dim, dim=-1)
        mask = torch.ones(seq, seq, dtype=torch.bool, device=x.device).tril()
        outs = []
        for qi, ki, vi in zip(q.unbind(0), k.unbind(0), v.unbind(0)):  # one sample: (heads, seq, head_dim)
            qi, ki, vi = (t.view(seq, self.heads, -1).transpose(0, 1) for t in (qi, ki, vi))
            scores = (qi @ ki.transpose(1, 2)) / math.sqrt(qi.shape[-1])
            weights = scores.masked_fill(~mask, float("-inf")).softmax(-1)
            outs.append((weights @ vi).transpose(0, 1).reshape(seq, dim))
        return per_sample_linear(torch.stack(outs), self.proj)

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + per_sample_linear(torch.relu(per_sample_linear(self.norm2(x), self.up)), self.down)


class TinyGPT(nn.Module):
    def __init__(self, vocab=64, dim=32, heads=2, layers=2, seq=16):
        super().__init__()
        self.tokens = nn.Parameter(torch.randn(vocab, dim) * 0.5)
        self.positions = nn.Parameter(torch.randn(seq, dim) * 0.1)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = RMSNorm(dim)

    def forward(self, idx):
        x = self.tokens[idx] + self.positions[: idx.shape[1]]
        for block in self.blocks:
            x = block(x)
        return per_sample_linear(self.norm(x), self.tokens)  # tied output layer

    def per_sample_loss(self, idx, targets):
        """Cross entropy per token (logsumexp - target logit), mean per sample."""
        logits = self(idx)
        token_loss = logits.logsumexp(-1) - logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        return token_loss.mean(-1)


def make_batch(batch, seq, vocab, seed, device):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, vocab, (batch, seq + 1), generator=g)
    return idx[:, :-1].to(device), idx[:, 1:].to(device)


def train_steps(model, idx, targets, steps, lr=0.05):
    """`steps` SGD steps on the mean per-sample loss; returns the losses."""
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = model.per_sample_loss(idx, targets).mean()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    return losses


def build(args, device):
    torch.manual_seed(0)
    return TinyGPT(args.vocab, args.dim, args.heads, args.layers, args.seq).to(device)


def time_steps(args, device, switch_on):
    import redux
    model = build(args, device)
    idx, targets = make_batch(args.batch, args.seq, args.vocab, 1, device)
    with redux.enabled() if switch_on else contextlib.nullcontext():
        train_steps(model, idx, targets, 2)  # warm-up
        if device.type == "cuda":
            torch.cuda.synchronize()
        times = []
        for _ in range(args.steps):
            t0 = time.perf_counter()
            train_steps(model, idx, targets, 1)
            if device.type == "cuda":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2], times[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--vocab", type=int, default=8192)
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seq", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args(argv)
    device = torch.device(args.device)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(f"TinyGPT training step on {name}: vocab {args.vocab}, dim {args.dim}, heads {args.heads}, "
          f"layers {args.layers}, seq {args.seq}, batch {args.batch}; per setting the lower of two rounds' median "
          f"over {args.steps} steps (best step)")
    results = {}
    for round_ in range(2):  # off, on, off, on: a slow phase hits both
        for on in (False, True):
            results.setdefault(on, []).append(time_steps(args, device, on))
    for on in (False, True):
        med = sorted(r[0] for r in results[on])[0]
        best = min(r[1] for r in results[on])
        print(f"  switch {'on ' if on else 'off'}: {med * 1e3:8.2f} ms per step (best {best * 1e3:.2f} ms)")
    off, on = (sorted(r[0] for r in results[k])[0] for k in (False, True))
    print(f"  on / off: {on / off:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
