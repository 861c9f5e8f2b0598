"""What does a small CPU call cost on the host, warm and right after a
streamed input? (A measuring program, not a test.)

torch.ops.redux.sum (its packet serves plain calls through
redux._C.packet_sum), the same call through torch's own packet route
(OpOverloadPacket.__call__), the redux.sum wrapper (its eager entry,
redux._C.sum, for plain tensors), torch.sum and torch.ops.aten.sum
(torch's own op through the torch.ops route) on a small input
(32 x 32, over dim 1), one thread, median of CALLS calls: alone (the host
path warm in the caches), and each call right after a direct ctypes call
of the C kernel
redux_cpu_sum_rows over ROWS x N floats (the kernel streams its input
through the caches the host path lives in). Then the op, redux.sum and
the direct C call on the big input itself: what each adds to the kernel
there.

    python bench/cpu_host.py [--rows 1024] [--n 1024] [--calls 3000]
"""
import argparse
import ctypes
import statistics
import time

import torch

import redux


def median_us(fn, before, calls):
    times = []
    for _ in range(calls):
        before()
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=3000)
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows_c = ctypes.CDLL(redux._C.__file__).redux_cpu_sum_rows
    rows_c.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                       ctypes.c_int, ctypes.c_int]
    f32 = 0  # REDUX_F32 (include/redux/redux.h)
    big = torch.randn(args.rows, args.n) + 3.0
    big_out = torch.empty(args.rows)
    small = torch.randn(32, 32) + 3.0

    def stream():
        rows_c(big.data_ptr(), big_out.data_ptr(), 0, args.rows, args.n, f32, f32)

    def nothing():
        pass

    print(f"one thread, medians of {args.calls} calls, us; the streamed input: {args.rows} x {args.n} fp32 "
          f"({args.rows * args.n * 4 / 2**20:.1f} MiB)")
    route = torch._ops.OpOverloadPacket.__call__  # torch's route for a packet's call
    for name, fn in (("torch.ops.redux.sum", lambda: torch.ops.redux.sum(small, [1])),
                     ("  torch's route", lambda: route(torch.ops.redux.sum, small, [1])),
                     ("redux.sum", lambda: redux.sum(small, 1)),
                     ("torch.sum", lambda: torch.sum(small, [1])),
                     # torch's own op through the torch.ops route: that route's cost for any op
                     ("torch.ops.aten.sum", lambda: torch.ops.aten.sum.dim_IntList(small, [1]))):
        warm, cold = median_us(fn, nothing, args.calls), median_us(fn, stream, args.calls)
        print(f"  {name:20s} 32 x 32: alone {warm:6.2f}   right after the streamed sum {cold:6.2f}")
    direct = median_us(stream, nothing, args.calls)
    op = median_us(lambda: torch.ops.redux.sum(big, [1]), nothing, args.calls)
    routed = median_us(lambda: route(torch.ops.redux.sum, big, [1]), nothing, args.calls)
    wrapper = median_us(lambda: redux.sum(big, 1), nothing, args.calls)
    print(f"  the streamed input itself: the C kernel through ctypes {direct:7.2f}, torch.ops.redux.sum {op:7.2f} "
          f"(+{op - direct:.2f}), through torch's route {routed:7.2f} (+{routed - direct:.2f}), "
          f"redux.sum {wrapper:7.2f} (+{wrapper - direct:.2f})")


if __name__ == "__main__":
    main()
