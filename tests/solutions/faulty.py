#!POPCORN leaderboard vectorsum_v2
# FAULTY ON PURPOSE, for the evaluator's fault-injection tests: FAULT picks
# what goes wrong (exit, systemexit, segfault, hang, raise), FAULT_WHEN when
# (load: at import; call: in custom_kernel, the default).
import ctypes
import os
import time


def _fault():
    what = os.environ["FAULT"]
    if what == "exit":
        os._exit(3)
    if what == "systemexit":
        raise SystemExit(0)
    if what == "segfault":
        ctypes.string_at(0)
    if what == "hang":
        time.sleep(10**6)
    if what == "raise":
        raise ValueError("broken on purpose")
    raise KeyError(what)


if os.environ.get("FAULT_WHEN", "call") == "load":
    _fault()


def custom_kernel(data):
    _fault()
