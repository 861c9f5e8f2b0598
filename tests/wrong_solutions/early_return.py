#!POPCORN leaderboard vectorsum_v2
# WRONG ON PURPOSE: returns the output before the work that fills it is done.
# On CUDA the sum runs on a side stream behind a 50 ms sleep that the caller's
# stream never waits for; on the CPU a thread fills the output 50 ms later.
import threading

import torch


def custom_kernel(data):
    x, output = data
    output.zero_()
    if x.is_cuda:
        side = torch.cuda.Stream(device=x.device)
        side.wait_stream(torch.cuda.current_stream(x.device))
        with torch.cuda.stream(side):
            torch.cuda._sleep(100_000_000)
            output.copy_(x.to(torch.float64).sum().reshape(1))
    else:
        threading.Timer(0.05, lambda: output.copy_(x.to(torch.float64).sum().reshape(1))).start()
    return output.view(())
