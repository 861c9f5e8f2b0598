#!POPCORN leaderboard vectorsum_v2
# A correct submission: plain torch.sum (float32 accumulation), the baseline
# every redux number is compared with.


def custom_kernel(data):
    x, _ = data
    return x.sum()
