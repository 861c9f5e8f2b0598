#!POPCORN leaderboard vectorsum_v2
# WRONG ON PURPOSE: caches the result per input size across calls.
import torch

_cache = {}


def custom_kernel(data):
    x, _ = data
    key = x.numel()
    if key not in _cache:
        _cache[key] = x.to(torch.float64).sum().to(torch.float32)
    return _cache[key]
