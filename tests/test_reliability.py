"""Reliability: the C kernels under AddressSanitizer/UBSan, indexing beyond
2^31 elements, strange views and values, stress without leaks, and failure
paths (out of memory) that leave the process usable."""
import decimal
import gc
import math
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import threading

import pytest
import torch

from conftest import DEVICES, HAS_CUDA, assert_matches, cuda, random_tensor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CC = shutil.which("gcc") or shutil.which("cc")
CPU_KERNELS = [os.path.join(ROOT, "csrc", "cpu", "sum_cpu.c"), os.path.join(ROOT, "csrc", "cpu", "status.c")]


def build_with_cpu_kernels(tmp_path, name, source, *flags):
    """An executable of the C program `source` linked with the CPU kernels
    (-O1; a later -std in flags overrides c11)."""
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    subprocess.run([CC, "-std=c11", "-O1", *flags, "-I", os.path.join(ROOT, "include"), str(src), *CPU_KERNELS,
                    "-lm", "-o", str(exe)], check=True)
    return exe


@pytest.mark.skipif(CC is None, reason="needs a C compiler")
def test_cpu_kernels_clean_under_asan_and_ubsan(tmp_path):
    exe = tmp_path / "cpu_kernels_check"
    srcs = [os.path.join(ROOT, "tests", "c", "cpu_kernels_check.c"), *CPU_KERNELS]
    subprocess.run([CC, "-std=c11", "-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    "-fno-omit-frame-pointer", "-ffp-contract=off", "-I", os.path.join(ROOT, "include"), *srcs,
                    "-lm", "-o", str(exe)], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True, env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 failures" in r.stdout and "ERROR" not in r.stderr and "runtime error" not in r.stderr


@pytest.mark.skipif(CC is None, reason="needs a C compiler")
def test_cpu_float32_loops_give_the_same_bits(tmp_path):
    """The AVX2+FMA float32 loop (picked at run time) with each of its
    prefetch forms (by size, unmeasured: REDUX_CPU_PREFETCH=size;
    REDUX_CPU_FAR_PREFETCH_BYTES: from 0 bytes, every call
    prefetches 16 KB ahead; from 2^62, none does; from 64 KB, the inputs of
    64-512 KB prefetch 8 KB ahead and the smaller ones not at all; and with
    REDUX_CPU_PREFETCH=l1 from 0 bytes, every call 8 KB ahead into the L1),
    and the column sums' register forms (eight lanes where the CPU has
    AVX-512F, four with REDUX_CPU_EIGHT_LANES=0), against the baseline loop
    (-DREDUX_CPU_NO_CLONES), on sums that round at every step."""
    srcs = [os.path.join(ROOT, "tests", "c", "cpu_paths_check.c"), *CPU_KERNELS]
    outs = {}
    for defines, far, mode, lanes in (([], "0", "size", "1"), ([], str(2**62), "size", "1"),
                                      ([], str(2**16), "size", "1"), ([], "0", "l1", "1"), ([], "0", "size", "0"),
                                      (["-DREDUX_CPU_NO_CLONES"], "0", "size", "1")):
        exe = tmp_path / ("paths" + "".join(defines))
        if not exe.exists():
            subprocess.run([CC, "-std=c11", "-O2", "-ffp-contract=off", *defines, "-I", os.path.join(ROOT, "include"),
                            *srcs, "-lm", "-o", str(exe)], check=True)
        env = dict(os.environ, REDUX_CPU_FAR_PREFETCH_BYTES=far, REDUX_CPU_PREFETCH=mode, REDUX_CPU_EIGHT_LANES=lanes)
        outs[exe.name, far, mode, lanes] = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                                                          env=env).stdout.splitlines()
    ((far_head, far_from, *far), (near_head, near_from, *near), (mid_head, mid_from, *mid),
     (l1_head, l1_from, *l1), (four_head, _, *four), (base_head, _, *base)) = outs.values()
    assert (far_from, near_from, mid_from, l1_from) == (
        "far prefetch from 0 bytes", f"far prefetch from {2**62} bytes", f"far prefetch from {2**16} bytes",
        "far prefetch from 0 bytes")
    assert base_head == "loop baseline"
    if far_head != "loop avx2+fma":
        pytest.skip("this CPU has no AVX2+FMA (or the compiler no target clones): both builds run the baseline loop")
    assert near_head == far_head == mid_head == l1_head == four_head
    assert len(far) == len(near) == len(mid) == len(l1) == len(four) == len(base) > 200
    assert sum(line.startswith("cols ") for line in far) == 40
    for name, other in (("no prefetch", near), ("8 KB and no prefetch by size", mid), ("8 KB into the L1", l1),
                        ("four-lane columns", four), ("baseline", base)):
        differ = [f"{a}  vs  {b}" for a, b in zip(far, other) if a != b]
        assert not differ, f"far prefetch against {name}:\n" + "\n".join(differ[:5])


@pytest.mark.skipif(CC is None, reason="needs a C compiler")
def test_cpu_row_kernel_forms_give_the_same_bits(tmp_path):
    """The row kernels (exp_rows.c, moment_rows.c) as the extension builds
    them, with the eight-lane forms where the CPU has AVX-512F and with
    REDUX_CPU_EIGHT_LANES=0 (four lanes), against the baseline build
    (-DREDUX_CPU_NO_CLONES): the same bits for every op, dtype and length."""
    cpu = os.path.join(ROOT, "csrc", "cpu")
    srcs = [os.path.join(ROOT, "tests", "c", "row_paths_check.c"), os.path.join(cpu, "exp_rows.c"),
            os.path.join(cpu, "moment_rows.c"), os.path.join(cpu, "status.c")]
    outs = {}
    for defines, lanes in (([], None), ([], "0"), (["-DREDUX_CPU_NO_CLONES"], None)):
        exe = tmp_path / ("rows" + "".join(defines))
        if not exe.exists():
            subprocess.run([CC, "-std=c11", "-O2", "-ffp-contract=off", *defines, "-I", os.path.join(ROOT, "include"),
                            "-I", cpu, *srcs, "-lm", "-o", str(exe)], check=True)
        env = {k: v for k, v in os.environ.items() if k != "REDUX_CPU_EIGHT_LANES"}
        if lanes is not None:
            env["REDUX_CPU_EIGHT_LANES"] = lanes
        outs[exe.name, lanes] = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                                               env=env).stdout.splitlines()
    (fast_head, *fast), (four_head, *four), (base_head, *base) = outs.values()
    assert four_head == base_head == "lanes 4"
    assert fast_head in ("lanes 8", "lanes 4")
    assert len(fast) == len(four) == len(base) == 11 * 3 * 10 + 6 * 4 * 4  # lengths x dtypes x outputs; edge rows
    for name, other in (("four lanes", four), ("baseline", base)):
        differ = [f"{a}  vs  {b}" for a, b in zip(fast, other) if a != b]
        assert not differ, f"{fast_head} against {name}:\n" + "\n".join(differ[:5])


@pytest.mark.skipif(CC is None, reason="needs a C compiler")
def test_cpu_exp_is_within_two_ulp_in_every_form(tmp_path):
    """redux's CPU exp (csrc/cpu/exp.h) against long double expl on random
    arguments, and its four- and eight-lane forms against the scalar one, as
    the extension builds them and in baseline code; its edges."""
    cpu = os.path.join(ROOT, "csrc", "cpu")
    for defines in ([], ["-DREDUX_CPU_NO_CLONES"]):
        exe = tmp_path / ("exp" + "".join(defines))
        subprocess.run([CC, "-std=c11", "-O2", "-ffp-contract=off", "-w", *defines, "-I", os.path.join(ROOT, "include"),
                        "-I", cpu, os.path.join(ROOT, "tests", "c", "exp_accuracy_check.c"), "-lm", "-o", str(exe)],
                       check=True)
        run = subprocess.run([str(exe)], capture_output=True, text=True)
        assert run.returncode == 0 and run.stdout.splitlines()[-1] == "ok", run.stdout


@pytest.mark.skipif(CC is None, reason="needs a C compiler")
def test_cpu_16_bit_conversions_round_once_to_nearest_even(tmp_path):
    """csrc/cpu/convert.h (branch-free, so its loops vectorize) against a
    rint/ldexp reference: every float16 and bfloat16 code to float, and
    floats and doubles to both (each code pair's midpoint and its
    neighbours, where a plain float in between would round twice; NaN, inf,
    overflow, subnormals), at -O2 and at -O3 for this CPU."""
    cpu = os.path.join(ROOT, "csrc", "cpu")
    for flags in (["-O2"], ["-O3", "-march=native"]):
        exe = tmp_path / ("convert" + "".join(flags))
        subprocess.run([CC, "-std=c11", *flags, "-ffp-contract=off", "-I", cpu, "-I", os.path.join(ROOT, "tests", "c"),
                        os.path.join(ROOT, "tests", "c", "convert_check.c"), "-lm", "-o", str(exe)], check=True)
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
        assert run.returncode == 0 and run.stdout.splitlines()[-1] == "0 failures", run.stdout


def test_exp_table_is_correctly_rounded():
    """include/redux/exp_table.h's T[j] = 2^(j / 64), j = 0 .. 63, each the
    double nearest the exact value (decimal arithmetic to 60 digits), and
    its constants the ones the algorithm needs."""
    text = open(os.path.join(ROOT, "include", "redux", "exp_table.h")).read()
    table = re.findall(r"0x1\.[0-9a-f]{13}p\+0", text.split("#define REDUX_EXP2_TABLE", 1)[1])
    decimal.getcontext().prec = 60
    ln2 = decimal.Decimal(2).ln()
    assert [float.fromhex(v) for v in table] == [float((ln2 * j / 64).exp()) for j in range(64)]
    constant = dict(re.findall(r"#define (REDUX_EXP_\w+) (\S+)", text))
    assert float.fromhex(constant["REDUX_EXP_TO_STEPS"]) == float(64 / ln2)
    hi, lo = float.fromhex(constant["REDUX_EXP_STEP_HI"]), float.fromhex(constant["REDUX_EXP_STEP_LO"])
    assert hi + lo == float(ln2 / 64) and abs(decimal.Decimal(hi) + decimal.Decimal(lo) - ln2 / 64) < 2 ** -90
    assert int(hi.hex().split(".")[1][:13], 16) & 0xFFFFF == 0  # 20 low bits clear: K * hi is exact for |K| < 2^20
    # kd = x * 64 / ln2 + shifter keeps K in its low bits (the shifter's ulp is 1), and the lanes read the
    # table index as kd's low six bits: the shifter's bits and the bias are multiples of 64
    shifter = float.fromhex(constant["REDUX_EXP_SHIFTER"])
    assert shifter == 1.5 * 2.0**52 and struct.unpack("<Q", struct.pack("<d", shifter))[0] % 64 == 0
    assert re.search(r"#define REDUX_EXP_BIAS_STEPS \(\d+ \* 64\)", text)


PLAN_FORMS_C = r"""
#include <stdio.h>
#include "redux/redux.h"
int main(void) { /* the plan's prefetch form by input size, float32 full sums and rows */
  const long long counts[] = {249, 250, 1999, 2000, 4000};
  for (int k = 0; k < 5; ++k) {
    redux_shape full = {1, counts[k], 1}, rows = {counts[k] / 10, 10, 1};
    printf("%lld %d %d\n", counts[k], redux_cpu_sum_plan(REDUX_FULL, full, REDUX_F32).far_prefetch,
           redux_cpu_sum_plan(REDUX_ROWS, rows, REDUX_F32).far_prefetch);
  }
  return 0;
}
"""


@pytest.mark.skipif(CC is None, reason="needs a C compiler")
def test_cpu_prefetch_form_follows_the_input_size(tmp_path):
    """The float32 loop's prefetch form (redux_cpu_plan.far_prefetch) by
    size, unmeasured (REDUX_CPU_PREFETCH=size), from the threshold T (a
    quarter of the L3; here REDUX_CPU_FAR_PREFETCH_BYTES=1000): none under T
    bytes, 8 KB ahead from T, 16 KB ahead from 8T (twice the L3); with
    REDUX_CPU_PREFETCH=l1, 8 KB ahead into the L1 from T."""
    exe = build_with_cpu_kernels(tmp_path, "plan_forms", PLAN_FORMS_C)

    def forms(mode):
        return subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                              env=dict(os.environ, REDUX_CPU_FAR_PREFETCH_BYTES="1000",
                                       REDUX_CPU_PREFETCH=mode)).stdout.split("\n")[:5]

    # 4-byte elements: 249 -> 996 B (none), 250 -> 1000 B (8 KB), 1999 -> 7996 B (8 KB),
    # 2000 -> 8000 B (16 KB); rows of 10 cover counts // 10 * 10 elements.
    assert forms("size") == ["249 0 0", "250 1 1", "1999 1 1", "2000 2 2", "4000 2 2"]
    # REDUX_CPU_PREFETCH=l1: the L1 form (3) from T in both classes.
    assert forms("l1") == ["249 0 0", "250 3 3", "1999 3 3", "2000 3 3", "4000 3 3"]


FAR_FROM_C = r"""
#include <stdio.h>
#include "redux/redux.h"
int main(void) { printf("%lld\n", (long long)redux_cpu_far_prefetch_bytes()); return 0; }
"""


@pytest.mark.skipif(CC is None, reason="needs a C compiler")
def test_cpu_far_prefetch_threshold_defaults_to_a_quarter_of_the_l3(tmp_path):
    """Without REDUX_CPU_FAR_PREFETCH_BYTES the threshold T is a quarter of
    cpu0's L3 as sysfs gives it (32 MB where it cannot be read)."""
    exe = build_with_cpu_kernels(tmp_path, "far_from", FAR_FROM_C)
    env = {k: v for k, v in os.environ.items() if k != "REDUX_CPU_FAR_PREFETCH_BYTES"}
    got = int(subprocess.run([str(exe)], capture_output=True, text=True, check=True, env=env).stdout)
    l3 = 32 << 20
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index3/size") as f:
            text = f.read().strip()
        units = {"K": 1 << 10, "M": 1 << 20}
        value = int(text.rstrip("KM")) * units.get(text[-1], 1)
        if value > 0:
            l3 = value
    except (OSError, ValueError):
        pass
    assert got == l3 // 4, (got, l3)


PREFETCH_TRIALS_C = r"""
#include <pthread.h>
#include <stdio.h>
#include "redux/redux.h"
/* Class 0 (T = 1000 bytes: 1000-7999 B), class 1 (from 8000 B), class 2 (125-999 B). */
static redux_shape full(long long count) { redux_shape s = {1, count, 1}; return s; }
static void *reporter(void *arg) { /* class 1: the far form (16 KB) reported fastest, the L1 form slowest */
  (void)arg;
  for (int k = 0; k < 60; ++k) {
    redux_cpu_plan p = redux_cpu_sum_plan(REDUX_FULL, full(5000), REDUX_F32);
    redux_cpu_prefetch_report(&p, REDUX_F32, 20000, p.far_prefetch == 2 ? 500 : p.far_prefetch == 3 ? 3000 : 1000);
  }
  return NULL;
}
int main(void) {
  /* class 0 takes the forms in turn, none first; only float32 full and rows sums take part */
  for (int k = 0; k < 4; ++k) {
    redux_cpu_plan p = redux_cpu_sum_plan(REDUX_ROWS, (redux_shape){20, 20, 1}, REDUX_F32);
    printf("%d%d ", p.far_prefetch, p.prefetch_trial);
  }
  redux_cpu_plan c = redux_cpu_sum_plan(REDUX_COLS, (redux_shape){1, 100, 20}, REDUX_F32);
  redux_cpu_plan d = redux_cpu_sum_plan(REDUX_FULL, full(1000), REDUX_F64);
  printf("cols %d f64 %d\n", c.prefetch_trial, d.prefetch_trial);
  /* class 0: the L1 form reported fastest, then the far one; reports of
   * f64 outputs, of plans that are no trial, and beyond 7 a form do not count */
  int made = 0;
  while (redux_cpu_prefetch_choice(0) < 0 && made < 100) {
    redux_cpu_plan p = redux_cpu_sum_plan(REDUX_FULL, full(500), REDUX_F32);
    redux_cpu_prefetch_report(&p, REDUX_F64, 2000, p.far_prefetch ? 1 : 1000000);
    redux_cpu_prefetch_report(&d, REDUX_F32, 2000, 1);
    redux_cpu_prefetch_report(&p, REDUX_F32, 2000,
                              p.far_prefetch == 3 ? 800 + made : p.far_prefetch ? 900 + made : 1000 + made);
    ++made;
  }
  redux_cpu_plan after = redux_cpu_sum_plan(REDUX_FULL, full(900), REDUX_F32);
  printf("class0 %d after %d calls, then %d%d, class1 %d\n", redux_cpu_prefetch_choice(0), made,
         after.far_prefetch, after.prefetch_trial, redux_cpu_prefetch_choice(1));
  pthread_t t[4];
  for (int k = 0; k < 4; ++k) pthread_create(&t[k], NULL, reporter, NULL);
  for (int k = 0; k < 4; ++k) pthread_join(t[k], NULL);
  redux_cpu_plan big = redux_cpu_sum_plan(REDUX_FULL, full(5000), REDUX_F32);
  printf("class1 %d, then %d%d\n", redux_cpu_prefetch_choice(1), big.far_prefetch, big.prefetch_trial);
  /* class 2 (under T, from T / 8): trials only while measuring; none reported fastest */
  redux_cpu_plan tiny = redux_cpu_sum_plan(REDUX_FULL, full(30), REDUX_F32); /* 120 B: under T / 8 */
  printf("tiny %d%d, class2 %d", tiny.far_prefetch, tiny.prefetch_trial, redux_cpu_prefetch_choice(2));
  for (int k = 0; k < 21; ++k) {
    redux_cpu_plan p = redux_cpu_sum_plan(REDUX_ROWS, (redux_shape){10, 20, 1}, REDUX_F32); /* 800 B */
    if (k < 3) printf(" %d%d", p.far_prefetch, p.prefetch_trial);
    redux_cpu_prefetch_report(&p, REDUX_F32, 800, p.far_prefetch ? 2000 : 1000);
  }
  redux_cpu_plan small = redux_cpu_sum_plan(REDUX_FULL, full(100), REDUX_F32);
  printf(", then class2 %d, %d%d, out of range %d\n", redux_cpu_prefetch_choice(2), small.far_prefetch,
         small.prefetch_trial, redux_cpu_prefetch_choice(3));
  return 0;
}
"""


@pytest.mark.skipif(CC is None, reason="needs a C compiler")
def test_cpu_prefetch_form_is_measured_per_size_class(tmp_path):
    """REDUX_CPU_PREFETCH=measure (the default): from the threshold, float32
    full and rows plans take none, the class's far form and the L1 form in
    turn as timed trials (columns and other dtypes take no part), also
    under the threshold from an eighth of it (class 2); after 7
    reports of each form, a size class keeps the form of the lowest median
    time per byte, also when four threads report at once; reports into f64
    outputs or of plans that are no trial are ignored."""
    exe = build_with_cpu_kernels(tmp_path, "trials", PREFETCH_TRIALS_C, "-std=gnu11", "-pthread")
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                         env=dict(os.environ, REDUX_CPU_FAR_PREFETCH_BYTES="1000", REDUX_CPU_PREFETCH="measure")
                         ).stdout.splitlines()
    # 00 = none, trial class 0 + 1 = 1 -> "01"; 11 = 8 KB ahead, trial 1; 31 = 8 KB into the L1.
    assert out[0] == "01 11 31 01 cols 0 f64 0", out
    # The four plans above were trials that never reported: 21 more calls, 7 of each form.
    assert out[1] == "class0 3 after 21 calls, then 30, class1 -1", out
    assert out[2] == "class1 2, then 20", out
    # Under T, from T / 8: the forms in turn as trials of class 2 (+ 1 = 3), none kept.
    assert out[3] == "tiny 00, class2 -1 03 13 33, then class2 0, 00, out of range -1", out


def test_cpu_far_prefetch_changes_no_bits_through_the_op():
    """torch.ops.redux.sum on the CPU with every float32 call prefetching 16
    KB ahead (REDUX_CPU_FAR_PREFETCH_BYTES=0), with none doing so (the
    threshold at 2^62, or REDUX_CPU_PREFETCH=none), with the forms by size
    from 128 KB (none, 8 KB or 16 KB ahead among the cases below), with
    every call 8 KB ahead into the L1 (REDUX_CPU_PREFETCH=l1), and measured
    (the trials take the forms in turn; from 1 MiB, the smaller inputs in
    class 2): the same bits, full sums of one
    unit and of many, rows, a sharded range's partials."""
    code = ("import torch, redux\n"
            "g = torch.Generator().manual_seed(5)\n"
            "for shape, dim in (((100003,), None), ((3 * 32768 + 17,), None), ((64, 1000), [1]), ((5, 70001), [1]),\n"
            "                   ((33, 4097), [0])):\n"
            "    x = torch.randn(shape, generator=g) * 3 + 0.7\n"
            "    print(torch.ops.redux.sum(x, dim).numpy().tobytes().hex())\n"
            "x = torch.randn(5 * 32768 + 3, generator=g) + 0.25\n"
            "view, layout = torch.ops.redux._sum_sharding(x, list(x.shape), None, None)\n"
            "part = view[:, 32768:4 * 32768].contiguous()\n"
            "print(torch.ops.redux._sum_unit_partials(part, layout, 1, 4).numpy().tobytes().hex())\n")
    outs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env=dict(os.environ, REDUX_CPU_FAR_PREFETCH_BYTES=far, REDUX_CPU_PREFETCH=mode)).stdout
            for far, mode in (("0", "size"), (str(2**62), "size"), (str(2**17), "size"), ("0", "none"),
                              ("0", "l1"), ("0", "measure"), (str(2**20), "measure"))]
    assert outs[0].count("\n") == 6 and all(o == outs[0] for o in outs)


def test_cpu_op_measures_the_prefetch_form():
    """The op times its float32 trial calls and reports them: with the
    threshold at 0 bytes, 21 calls decide a size class (ctypes reads
    redux_cpu_prefetch_choice from the extension), and every call's bits
    stay those of the first."""
    code = ("import ctypes, torch, redux\n"
            "choice = ctypes.CDLL(redux._C.__file__).redux_cpu_prefetch_choice\n"
            "x = torch.randn(70001, generator=torch.Generator().manual_seed(3)) + 0.5\n"
            "first, before = torch.ops.redux.sum(x), choice(1)\n"
            "same = all(torch.equal(torch.ops.redux.sum(x), first) for _ in range(22))\n"
            "print(before, choice(1) in (0, 2, 3), same, choice(0))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=dict(os.environ, REDUX_CPU_FAR_PREFETCH_BYTES="0", REDUX_CPU_PREFETCH="measure")).stdout
    assert out.split() == ["-1", "True", "True", "-1"], out


# ---------------- beyond 2^31 elements (CUDA; the H200 has the memory) ----------------

BIG = 2**31 + 17


def _big_check(got, x, dim, out_dtype):
    """Reference in fp64 on the GPU (torch indexes 64-bit), then our tolerance."""
    ref = x.sum(dim=dim, dtype=torch.float64) if dim is not None else x.sum(dtype=torch.float64)
    mag = x.abs().sum(dim=dim, dtype=torch.float64) if dim is not None else x.abs().sum(dtype=torch.float64)
    rel = {torch.float32: 2**-23, torch.float16: 2**-10}[out_dtype]
    err = (got.double() - ref).abs()
    assert got.dtype == out_dtype
    assert bool((err <= rel * ref.abs() + 1e-5 * mag).all()), f"max err {err.max().item()}"


@cuda
@pytest.mark.cuda
@pytest.mark.slow
def test_full_beyond_2_31_fp16_and_fp32():
    g = torch.Generator(device="cuda").manual_seed(1)
    x = (torch.randn(BIG, device="cuda", generator=g, dtype=torch.float16) * 0.5)
    _big_check(torch.ops.redux.sum(x), x, None, torch.float16)
    _big_check(torch.ops.redux.sum(x, dtype=torch.float32), x, None, torch.float32)
    del x
    x = torch.randn(BIG, device="cuda", generator=g) + 3.0
    _big_check(torch.ops.redux.sum(x), x, None, torch.float32)
    del x
    torch.cuda.empty_cache()


@cuda
@pytest.mark.cuda
@pytest.mark.slow
def test_rows_and_columns_beyond_2_31():
    g = torch.Generator(device="cuda").manual_seed(2)
    # two rows each longer than 2^31 (long-row chunks, row offsets > 2^32)
    x = torch.randn(2, BIG, device="cuda", generator=g, dtype=torch.float16) * 0.25
    _big_check(torch.ops.redux.sum(x, [1]), x, 1, torch.float16)
    del x
    # 2^26 + 1 short rows: row * n beyond 2^31
    x = torch.randn(2**26 + 1, 32, device="cuda", generator=g) + 1.0
    _big_check(torch.ops.redux.sum(x, [1]), x, 1, torch.float32)
    # columns: r * inner beyond 2^31
    _big_check(torch.ops.redux.sum(x, [0]), x, 0, torch.float32)
    del x
    x = torch.randn(2**25 + 1, 64, device="cuda", generator=g, dtype=torch.float16)
    _big_check(torch.ops.redux.sum(x, [0], dtype=torch.float32), x, 0, torch.float32)
    del x
    torch.cuda.empty_cache()


# ---------------- strange views and values ----------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
def test_misaligned_offsets_every_family(device, dtype):
    for off in range(1, 8):
        for shape, dim in [((5003,), None), ((37, 515), [1]), ((515, 37), [0]), ((7, 300, 9), [1]), ((9, 3), [0]),
                           ((4, 70001), [1])]:
            n = math.prod(shape)
            buf = random_tensor((n + off,), dtype, device, seed=off * 31 + n)
            x = buf[off:].view(shape)
            assert_matches(torch.ops.redux.sum(x, dim), x, dim)


@pytest.mark.parametrize("device", DEVICES)
def test_tiny_inner_dims_and_size_one_dims(device):
    for shape, dim in [((1000, 2), [0]), ((3, 1000, 3), [1]), ((1, 1, 4097, 1), [2]), ((4097, 1, 1), [0]),
                       ((2, 1, 3, 1, 5), [0, 2, 4]), ((1,), None), ((1, 1), [0, 1])]:
        x = random_tensor(shape, torch.float32, device, seed=len(shape))
        for keepdim in (False, True):
            assert_matches(torch.ops.redux.sum(x, dim, keepdim), x, dim, keepdim)


@pytest.mark.parametrize("device", DEVICES)
def test_subnormals_sum_exactly(device):
    tiny = torch.tensor(1e-45, dtype=torch.float32)  # the smallest float32 subnormal
    x = torch.full((10007,), tiny.item(), device=device)
    got = torch.ops.redux.sum(x)
    assert got.item() == torch.tensor(10007 * tiny.double().item(), dtype=torch.float32).item()
    h = torch.full((999,), 2**-24, dtype=torch.float16, device=device)  # fp16 subnormal
    assert torch.ops.redux.sum(h).item() == 999 * 2**-24


@pytest.mark.parametrize("device", DEVICES)
def test_bf16_overflow_like_torch(device):
    x = torch.full((4,), 3e38, dtype=torch.bfloat16, device=device)
    assert torch.isposinf(torch.ops.redux.sum(x)) and torch.isposinf(torch.sum(x))
    assert torch.ops.redux.sum(x, dtype=torch.float64).item() == pytest.approx(4 * x[0].double().item())


@pytest.mark.parametrize("device", DEVICES)
def test_1e8_copies_of_point_one_within_one_ulp(device):
    n = 10**8
    x = torch.full((n,), 0.1, dtype=torch.float32, device=device)
    exact = float(torch.tensor(0.1, dtype=torch.float32).double()) * n  # exact in fp64 (2^27 > n)
    got = torch.ops.redux.sum(x).item()
    ulp32 = 2.0 ** (math.floor(math.log2(exact)) - 23)  # float32 spacing at the exact value
    assert abs(got - exact) <= ulp32, (got, exact, ulp32)
    del x


# ---------------- stress ----------------

def _pool(device, rng):
    shapes = [((rng.randrange(1, 300_000),), None), ((rng.randrange(1, 300), rng.randrange(1, 3000)), [1]),
              ((rng.randrange(1, 3000), rng.randrange(1, 300)), [0]), ((rng.randrange(1, 40), 700, 9), [1]),
              ((5, rng.randrange(1, 200_000)), [1]), ((rng.randrange(1, 64), 3, 5, 7), [0, 2])]
    pool = []
    for i, (shape, dim) in enumerate(shapes * 3):
        dtype = [torch.float32, torch.float16, torch.bfloat16, torch.float64][i % 4]
        x = random_tensor(shape, dtype, device, seed=1000 + i)
        expected = torch.ops.redux.sum(x, dim)
        assert_matches(expected, x, dim)  # the pool's answers are checked once against fp64
        pool.append((x, dim, expected))
    return pool


def _stress(device, calls, threads, streams):
    rng = random.Random(7)
    pool = _pool(device, rng)
    if device == "cuda":
        torch.cuda.synchronize()
        gc.collect()
        before = torch.cuda.memory_allocated()
    errors = []

    def worker(k):
        r = random.Random(k)
        stream = torch.cuda.Stream() if streams else None
        pending = []

        def check_pending():
            if stream is not None:
                stream.synchronize()
            for i, j, got in pending:
                if not torch.equal(got, pool[j][2]):
                    errors.append((k, i, tuple(pool[j][0].shape), pool[j][1]))
            pending.clear()

        try:
            ctx = torch.cuda.stream(stream) if stream is not None else _null()
            with ctx:
                for i in range(calls // threads):
                    j = r.randrange(len(pool))
                    pending.append((i, j, torch.ops.redux.sum(pool[j][0], pool[j][1])))
                    if len(pending) == 500:  # every result is checked, in batches
                        check_pending()
                check_pending()
        except Exception as e:
            errors.append(repr(e))

    ts = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:5]
    if device == "cuda":
        # graph capture and replay inside the loop of work
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for x, dim, _ in pool[:6]:
                torch.ops.redux.sum(x, dim)
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs = [torch.ops.redux.sum(x, dim) for x, dim, _ in pool[:6]]
        for _ in range(50):
            graph.replay()
        torch.cuda.synchronize()
        # (a generator, not a for loop: a loop variable would keep an output alive)
        assert all(torch.equal(o, expected) for o, (_, _, expected) in zip(outs, pool[:6]))
        del graph, outs
        torch.cuda.synchronize()
        gc.collect()
        after = torch.cuda.memory_allocated()
        assert after == before, f"device memory grew from {before} to {after} bytes"


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_stress_cpu_threads():
    _stress("cpu", calls=20_000, threads=4, streams=False)


@cuda
@pytest.mark.cuda
@pytest.mark.slow
def test_stress_cuda_100k_calls_streams_threads_graphs():
    _stress("cuda", calls=100_000, threads=4, streams=True)


# ---------------- failure paths ----------------

@cuda
@pytest.mark.cuda
def test_out_of_memory_surfaces_as_torch_oom_and_process_stays_usable():
    x = random_tensor((1 << 20,), torch.float32, "cuda", seed=3)
    expected = torch.ops.redux.sum(x)
    big = torch.empty(1 << 28, device="cuda")  # 1 GiB
    strided = big[::2]  # not dense: redux.sum reads it through a 32 MiB piece buffer (pieces.cpp)
    total = torch.cuda.get_device_properties(0).total_memory
    # As earlier tests in the process may leave: a cached segment partly in use, 62 MiB of it free
    spare = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    del spare
    held = torch.empty(2 << 20, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    cap = torch.cuda.memory_reserved() + (8 << 20)  # 8 MiB of headroom: less than one piece
    torch.cuda.set_per_process_memory_fraction(cap / total)
    # A pool of its own, so that the free part of such a segment cannot hold the piece buffer
    pool = torch.cuda.MemPool()
    try:
        with torch.cuda.use_mem_pool(pool), pytest.raises(torch.OutOfMemoryError):
            torch.ops.redux.sum(strided)
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        del strided, big, pool, held
        torch.cuda.empty_cache()
    assert torch.equal(torch.ops.redux.sum(x), expected)
    assert_matches(torch.ops.redux.sum(x), x)


def test_meta_tensors_give_shapes_without_data():
    x = torch.empty(4, 5, 6, device="meta")
    y = torch.ops.redux.sum(x, [1], True, dtype=torch.float64)
    assert y.device.type == "meta" and y.shape == (4, 1, 6) and y.dtype == torch.float64
