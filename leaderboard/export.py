"""python -m leaderboard export [--out submission.py]

Writes one self-contained competition submission: the header line, redux's
full-reduction CUDA source carried inline (include/redux/redux.h,
include/redux/reduce.cuh, csrc/cuda/common.cuh, csrc/cuda/chunks_plan.cuh and
csrc/cuda/sum_full.cu, concatenated with their local #includes removed),
compiled once at import
with torch.utils.cpp_extension.load_inline, and custom_kernel((data, output)).
It needs nothing but torch. Per call: one pybind call and one kernel launch
into the preallocated output. The partials and the counter words (a ticket
counter, or the polled finish's slots) are kept per (device, stream, size)
in the C++ binding (never shared between streams; a graph capture gets its
own), so the Python side does nothing per call but unpack the pair: its host
time stays far under the competition's L2 flush, also in ranked mode
(leaderboard/PERFORMANCE.md change 13).
"""
import argparse
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = "#!POPCORN leaderboard vectorsum_v2"
SOURCES = ("include/redux/redux.h", "include/redux/reduce.cuh", "csrc/cuda/common.cuh", "csrc/cuda/chunks_plan.cuh",
           "csrc/cuda/sum_full.cu")

BINDING = r'''
// ---- binding for the submission (not part of redux's own sources) ----
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

namespace {
// Per (device, stream, size): the partials and this stream's counter words
// (a ticket counter or the polled finish's slots), which the kernel leaves
// at zero (no zeroing per call). Keyed by the stream's process-unique id
// (cudaStreamGetId), never shared between streams: two streams' kernels
// could run at once. Kept here, in C++, so a call costs one pybind call
// and one launch (the Python version of this cache cost ~30 us of host time
// per call; in ranked mode, where Python allocates between runs, that host
// time sometimes outlasted the L2 flush and was timed). Leaked on purpose:
// tensors must not be freed after the CUDA runtime shut down. One entry per
// stream and size a process uses.
struct Scratch {
  torch::Tensor ws, counter;
};

// New scratch for x's size: the workspace and the counter words (a ticket
// counter, or the polled finish's slots), zeroed.
Scratch fresh_scratch(const torch::Tensor &x) {
  const redux_shape s{1, x.numel(), 1};
  const int64_t ws_bytes = (int64_t)redux::chunks_workspace_bytes(s, REDUX_F32, REDUX_F32);
  const int64_t words = std::max<int64_t>(1, (int64_t)redux::chunks_counters(s, REDUX_F32));
  return {torch::empty({ws_bytes}, x.options().dtype(torch::kUInt8)),
          torch::zeros({words}, x.options().dtype(torch::kInt32))};
}

Scratch scratch_for(const torch::Tensor &x, cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone ||
      cudaStreamGetId(stream, &id) != cudaSuccess) {
    (void)cudaGetLastError();
    // A graph capture (its replays may run beside this stream's own calls):
    // scratch of its own.
    return fresh_scratch(x);
  }
  static std::mutex *mu = new std::mutex;
  static auto *cache = new std::map<std::tuple<int, unsigned long long, int64_t>, Scratch>;
  const std::lock_guard<std::mutex> lock(*mu);
  const auto key = std::make_tuple((int)x.get_device(), id, x.numel());
  auto it = cache->find(key);
  if (it == cache->end()) it = cache->emplace(key, fresh_scratch(x)).first;
  return it->second;
}
}  // namespace

// The sum of x into out (one float32 element on x's device), returned as a
// 0-dim view of out. (Not view({}): braces pick view(ScalarType).)
torch::Tensor vectorsum(torch::Tensor x, torch::Tensor out) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat && x.dim() == 1,
              "custom_kernel: the input of 'data' must be a 1-D float32 CUDA tensor");
  TORCH_CHECK(out.numel() == 1 && out.scalar_type() == torch::kFloat && out.device() == x.device() &&
                  out.is_contiguous(),
              "custom_kernel: the output of 'data' must be one float32 element on the input's device");
  const c10::cuda::CUDAGuard guard(x.device());
  if (x.numel() == 0) return out.zero_().view(c10::IntArrayRef{});
  if (!x.is_contiguous()) x = x.contiguous();
  cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
  Scratch sc = scratch_for(x, stream);
  const redux_status st = redux::launch_chunks(x.data_ptr(), out.data_ptr(), sc.ws.numel() ? sc.ws.data_ptr() : nullptr,
                                               (size_t)sc.ws.numel(), static_cast<unsigned int *>(sc.counter.data_ptr()),
                                               (size_t)sc.counter.numel(), redux_shape{1, x.numel(), 1}, REDUX_F32, REDUX_F32, 0, stream);
  TORCH_CHECK(st == REDUX_OK, "custom_kernel: redux's launch failed (status ", (int)st, ")");
  return out.view(c10::IntArrayRef{});
}
'''

TEMPLATE = '''{header}
# Generated by `python -m leaderboard export` from redux ({sources}).
# redux's deterministic single-pass sum: shape-fixed chunks, 16-byte loads,
# fp64 accumulation, a finish that combines the partials in chunk order
# (polled slots up to 64 MiB, an integer ticket above; no float atomics), so
# the bits do not depend on the GPU or the grid.
import torch
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
{cuda_src}
"""

CPP_SRC = """
torch::Tensor vectorsum(torch::Tensor x, torch::Tensor out);
"""

_module = load_inline(
    name="redux_vectorsum_submission",
    cpp_sources=CPP_SRC,
    cuda_sources=CUDA_SRC,
    functions=["vectorsum"],
    extra_cuda_cflags=["-O3", "-std=c++17"],
    verbose=False,
)
_vectorsum = _module.vectorsum


def custom_kernel(data):
    x, output = data
    return _vectorsum(x, output)
'''


def build_cuda_source(root=ROOT):
    parts = []
    for rel in SOURCES:
        with open(os.path.join(root, rel)) as f:
            text = f.read()
        text = re.sub(r'^\s*#include\s+"[^"]+"\s*$', "", text, flags=re.M)  # local includes are inlined
        parts.append(f"// ---- {rel} ----\n{text}")
    return "\n".join(parts) + BINDING


def render(root=ROOT):
    src = build_cuda_source(root)
    if '"""' in src:
        raise ValueError("CUDA source contains a triple quote; cannot embed it")
    return TEMPLATE.format(header=HEADER, sources=", ".join(SOURCES), cuda_src=src)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m leaderboard export", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="submission.py", help="where to write the submission")
    args = ap.parse_args(argv)
    text = render()
    with open(args.out, "w") as f:
        f.write(text)
    print(f"wrote {args.out} ({len(text)} bytes, {HEADER!r})")
    return 0
