"""redux.distributed: exact sharded sums and means (bits, gradients,
torch.compile, errors on every rank) and DTensor support, on gloo in
spawned processes (1, 2, 3, 4 and 8 ranks on the CPU) and on NCCL with two
GPUs. Every run is bounded: a hung rank fails the test, never the suite."""
import os
import tempfile
import time

import pytest
import torch
import torch.multiprocessing as mp

import redux
import redux.distributed as rd

from conftest import DEVICES
from distributed_checks import run

DEADLINE_S = 240


def spawn(world, backend, checks, extra_cases=()):
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "init")
        ctx = mp.start_processes(run, args=(world, backend, init_file, tmp, checks, extra_cases), nprocs=world,
                                 join=False, start_method="spawn")
        deadline = time.monotonic() + DEADLINE_S
        try:
            while not ctx.join(timeout=5):
                if time.monotonic() > deadline:
                    for p in ctx.processes:
                        p.kill()
                    pytest.fail(f"{world} ranks did not finish within {DEADLINE_S} s (a hang)")
        except mp.ProcessExitedException as e:
            written = [r for r in range(world) if os.path.exists(os.path.join(tmp, f"rank{r}.txt"))]
            pytest.fail(f"a rank died: {e}; ranks that had written their report: {written}")
        reports = []
        for r in range(world):
            with open(os.path.join(tmp, f"rank{r}.txt")) as f:
                text = f.read()
            if text:
                reports.append(f"rank {r}:\n{text}")
        assert not reports, "\n".join(reports)


CHECKS = ["exact", "dtensor", "errors", "autograd", "rank_errors", "rms_norm", "cross_entropy"]


@pytest.mark.parametrize("world", [1, 2, 3, 4, 8])
def test_exact_sums_match_one_device_on_gloo(world):
    spawn(world, "gloo", CHECKS)


@pytest.mark.compile
def test_exact_mode_compiles_on_gloo():
    """rd.sum / rd.mean under torch.compile(fullgraph=True): eager bits."""
    spawn(2, "gloo", ["compile"])


def test_no_process_group_is_a_clear_error():
    with pytest.raises(RuntimeError, match="no process group"):
        rd.sum(torch.ones(4))


def test_unit_of_says_which_shards_move_only_partials():
    assert rd.unit_of((1 << 20,)) == 32768            # the CPU tree's chunk
    assert rd.unit_of((1000,)) is None               # one unit: gathered
    assert rd.unit_of((64, 1000), dim=[1]) is None   # short rows: one unit each
    assert rd.unit_of((9000, 300), dim=[0]) == 4096  # columns: units of rows
    assert rd.unit_of((24, 70001), dim=[1]) == 1     # kept dim 0: any cut


@pytest.mark.parametrize("device", DEVICES)
def test_unit_partials_finish_is_the_one_device_sum(device):
    """The C API split (unit partials + finish) against the one-device sum,
    with the whole range in one call and unit by unit. (9000, 128) and
    (4, 5000, 64) are columns of the CUDA strips tree, the last also with
    fp64 output. The rows cases are one unit a row on CUDA (rows up to 512
    KB are one chunk): CPU only."""
    cases = [((300007,), None, None), ((9000, 300), [0], None), ((9000, 128), [0], None),
             ((4, 5000, 64), [1], None), ((4, 5000, 64), [1], torch.float64)]
    if device == "cpu":
        cases += [((8, 70001), [1], None), ((40, 3, 3000), [0, 2], None)]
    for shape, dim, out in cases:
        x = torch.randn(shape, dtype=torch.float64).add(3).float().to(device)
        view, layout = torch.ops.redux._sum_sharding(x, list(shape), dim, out)
        want = torch.ops.redux.sum(x, dim, dtype=out)
        units, unit = layout[rd._UNITS], layout[rd._UNIT]
        assert units > 1, f"{shape} dim={dim}: one unit, nothing split"
        whole = torch.ops.redux._sum_unit_partials(view, layout, 0, units)
        assert torch.equal(torch.ops.redux._sum_from_partials(whole, layout).reshape(want.shape), want)
        if layout[rd._ROLE] == 0:  # dim 0 is part of n: each unit alone
            each = [torch.ops.redux._sum_unit_partials(view[:, u * unit:(u + 1) * unit].contiguous(), layout, u, u + 1)
                    for u in range(units)]
            got = torch.ops.redux._sum_from_partials(torch.cat(each, 1), layout).reshape(want.shape)
            assert torch.equal(got, want)


def test_partials_ops_check_their_arguments():
    x = torch.randn(300007)
    view, layout = torch.ops.redux._sum_sharding(x, [300007], None, None)
    with pytest.raises(RuntimeError, match="unit"):
        torch.ops.redux._sum_unit_partials(view, layout, 0, layout[rd._UNITS] + 1)
    with pytest.raises(RuntimeError, match="view"):
        torch.ops.redux._sum_unit_partials(view[:, :100].contiguous(), layout, 0, 1)
    with pytest.raises(RuntimeError, match="partials"):
        torch.ops.redux._sum_from_partials(torch.zeros(1, 2, 1, 24, dtype=torch.uint8), layout)
    with pytest.raises(RuntimeError, match="global_sizes"):
        torch.ops.redux._sum_sharding(x, [300007, 1], None, None)
    with pytest.raises(RuntimeError, match="only dim 0"):
        torch.ops.redux._sum_sharding(torch.randn(4, 5), [8, 6], None, None)
    # the exact op checks its layout arguments before any collective
    cpu = torch.device("cpu")
    with pytest.raises(RuntimeError, match="argument 'rank' 1 is not a rank of 1"):
        torch.ops.redux._sum_shards(x, [300007], 1, None, False, None, "0", cpu)
    with pytest.raises(RuntimeError, match="argument 'lengths' has -1 rows on rank 1"):
        torch.ops.redux._sum_shards(x, [300007, -1], 0, None, False, None, "0", cpu)
    with pytest.raises(RuntimeError, match="where 'lengths' says 5"):
        torch.ops.redux._sum_shards(x, [5, 300002], 0, None, False, None, "0", cpu)


def test_the_fast_entry_serves_plain_calls_and_routes_the_rest():
    """redux._C.sum_shards (redux.distributed's call of the op) parses a
    plain call itself, with the op's errors; a __torch_function__ mode, a
    tensor subclass or an argument of another type takes the op's torch.ops
    route, so the mode or subclass sees the call."""
    from torch.overrides import TorchFunctionMode
    x, cpu = torch.randn(300007), torch.device("cpu")
    route = rd._SHARDS_ROUTE
    with pytest.raises(RuntimeError, match="argument 'rank' 1 is not a rank of 1"):
        redux._C.sum_shards(route, x, [300007], 1, None, False, None, "0", cpu)
    with pytest.raises(RuntimeError, match="where 'lengths' says 5"):
        redux._C.sum_shards(route, x, (5, 300002), 0, [0], True, torch.float64, "0", cpu)

    seen = []

    class Seen(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            raise LookupError("routed")

    class Sub(torch.Tensor):
        pass

    calls = [lambda: redux._C.sum_shards(route, x, [300007], 0, None, False, None, "0", cpu),
             lambda: redux._C.sum_shards(route, x.as_subclass(Sub), [300007], 0, None, False, None, "0", cpu)]
    with Seen():
        for call in calls:
            with pytest.raises(LookupError, match="routed"):
                call()
    assert seen == [route, route]
    # an argument of another type: torch.ops' own parsing and error
    with pytest.raises((TypeError, RuntimeError), match="group_name|str"):
        redux._C.sum_shards(route, x, [300007], 0, None, False, None, 0, cpu)
    with pytest.raises(TypeError, match="expected"):
        redux._C.sum_shards(route, x)


def gpus_for(world):
    return pytest.mark.skipif(not (torch.cuda.is_available() and torch.cuda.device_count() >= world
                                   and redux.has_cuda_kernels()), reason=f"needs {world} CUDA GPUs")

# Competition and power-of-two sizes on the GPU tree (even shards on units).
CUDA_CASES = [
    ((52428800,), None, False, torch.float32, None),
    ((1638400,), None, False, torch.float32, None),
    ((6553600,), None, False, torch.float16, None),
    ((4194304,), None, False, torch.int32, None),            # read as int64: the shard converted first
    ((65536, 4096), [0], False, torch.float32, None),
    ((65536, 4096), [1], False, torch.float32, None),
    ((4, 2097152), [1], False, torch.float32, None),
    ((9000, 128), [0], False, torch.float32, None),         # columns of the strips tree
    ((4, 3000, 64), [1], False, torch.float32, torch.float64),
]


@pytest.mark.parametrize("world", [pytest.param(w, marks=gpus_for(w)) for w in (1, 2, 3, 4)])
def test_exact_sums_match_one_gpu_on_nccl(world):
    """Every rank count the machine has GPUs for (1 on any GPU machine, 3 on
    a four-GPU machine)."""
    spawn(world, "nccl", CHECKS + ["graph"] + (["compile"] if world == 2 else []), extra_cases=CUDA_CASES)


DTENSOR_RULE_PROBE = """
import sys, torch
{first}
from torch.distributed.tensor import DTensor
registered = torch.ops.redux.sum.default in DTensor._op_dispatcher.sharding_propagator.op_strategy_funcs
print("registered" if registered else "missing")
"""


@pytest.mark.parametrize("first", ["import redux", "import torch.distributed.tensor, redux"])
def test_dtensor_rule_is_registered_in_either_import_order(first):
    """import redux does not import DTensor (0.6 s); the rule is registered
    when DTensor is loaded, before or after redux."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", DTENSOR_RULE_PROBE.format(first=first)], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "registered", out.stderr


def test_import_redux_does_not_import_dtensor():
    import subprocess
    import sys
    code = "import sys, redux; print('torch.distributed.tensor' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "False", out.stderr
