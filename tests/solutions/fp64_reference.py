#!POPCORN leaderboard vectorsum_v2
# A correct submission: the reference itself (torch.sum in float64).
import torch


def custom_kernel(data):
    x, _ = data
    return x.to(torch.float64).sum().to(torch.float32)
