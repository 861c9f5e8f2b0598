"""A real model under the switch (bench/gpt.py, a small GPT whose norms and
losses are means and sums): per-sample losses bit-identical across batch
sizes, training steps bit-identical across runs, and plain torch's numbers
within fp32 tolerance; a Llama-style step (bench/llama_step.py) compiled
with the eager step's bits. The tiny version runs here on the CPU; on a GPU
the same tests run on CUDA too."""
import argparse

import pytest
import torch

import redux
from bench.gpt import TinyGPT, make_batch, train_steps
from conftest import DEVICES

CONFIG = dict(vocab=64, dim=32, heads=2, layers=2, seq=16)


def model_on(device):
    torch.manual_seed(0)
    return TinyGPT(**CONFIG).to(device)


@pytest.mark.parametrize("device", DEVICES)
def test_per_sample_losses_do_not_depend_on_the_batch(device):
    idx, targets = make_batch(8, CONFIG["seq"], CONFIG["vocab"], 5, device)
    model = model_on(device)
    with torch.no_grad(), redux.enabled():
        full = model.per_sample_loss(idx, targets)
        for b in (1, 3, 8):
            assert torch.equal(model.per_sample_loss(idx[:b], targets[:b]), full[:b]), f"batch size {b}"
        assert torch.equal(model.per_sample_loss(idx[5:6], targets[5:6])[0], full[5])


@pytest.mark.parametrize("device", DEVICES)
def test_three_training_steps_bit_identical_across_runs(device):
    idx, targets = make_batch(4, CONFIG["seq"], CONFIG["vocab"], 6, device)
    runs = []
    for _ in range(3):
        model = model_on(device)
        with redux.enabled():
            losses = train_steps(model, idx, targets, 3)
        runs.append(losses + [p.detach().clone() for p in model.parameters()])
    for other in runs[1:]:
        assert all(torch.equal(a, b) for a, b in zip(runs[0], other))


@pytest.mark.parametrize("device", DEVICES)
def test_switch_matches_plain_torch_within_fp32_tolerance(device):
    idx, targets = make_batch(4, CONFIG["seq"], CONFIG["vocab"], 7, device)
    plain = train_steps(model_on(device), idx, targets, 3)
    with redux.enabled():
        routed = train_steps(model_on(device), idx, targets, 3)
    for a, b in zip(plain, routed):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6), (a, b)


@pytest.mark.parametrize("device", DEVICES)
def test_a_compiled_llama_step_has_the_eager_switch_bits(device):
    """RMSNorm, rotary attention with softmax, SwiGLU, cross_entropy and
    clip_grad_norm_ compiled (AdamW eager, as bench/llama_step.py runs it):
    the losses and weights of three steps have the eager switch's bits, and
    every aten reduction of the compiled graphs is redux's."""
    from bench import llama_step
    args = argparse.Namespace(vocab=64, dim=32, heads=2, layers=2, seq=16, batch=4)

    def run(compiled):
        model, opt = llama_step.make(args, device)
        idx, targets = llama_step.batch_of(args, device)
        with redux.enabled():
            step = llama_step.stepper(model, opt, compiled)
            losses = [step(idx, targets) for _ in range(3)]
        return losses + [p.detach().clone() for p in model.parameters()]
    eager, compiled = run(False), run(True)
    assert len(eager) == 3 + 17 and all(torch.equal(a, b) for a, b in zip(eager, compiled))
    found = llama_step.compiled_reductions(args, device)
    # the one aten reduction left is the one eager leaves to torch's kernel too, run as that kernel
    assert found.get("redux::sum", 0) > 0, found
    assert {op for op in found if not op.startswith("redux::")} <= {"embedding_dense_backward"}, found
