"""A submission's code runs in a child process of its own, never in the
harness's.

The harness asks the child one request at a time (a test case, a benchmark
case, a timed sample) and waits for the answer with a deadline. A child
that raises (SystemExit included), exits, dies of a signal, hangs past the
deadline or answers with something malformed makes the request fail with
SubmissionFailed, saying which; the harness process itself never runs a
line of the submission, so it always reports and exits. Answers travel as
JSON, never pickles (unpickling a child's bytes would run its code here).
The secret seed (POPCORN_SEED) is not in the child's environment.

What this does not do: the child runs as the same user, unsandboxed. It
can read and write what that user can, use the network, signal other
processes of the user, and patch anything inside its own process, the
harness code loaded there included (docs/harness.md, the evaluator).
"""
import importlib
import json
import multiprocessing
import os
import signal

SECRET_VARS = ("POPCORN_SEED",)
# Handlers a request may name: functions f(kernel, state, *args) of these modules.
HANDLER_MODULES = ("leaderboard.evaluator", "leaderboard.score")
MAX_ANSWER_BYTES = 64 << 20


class SubmissionFailed(Exception):
    """A request to a submission's child did not get an answer; str() says why."""


def describe_exception(e):
    text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return text if not isinstance(e, SystemExit) else f"SystemExit({e.code!r})"


def describe_exit(code):
    if code is None:
        return "is still running"
    if code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _send(conn, kind, value):
    conn.send_bytes(json.dumps([kind, value]).encode())


def _load(source):
    if source == "cpp":
        import torch

        import redux  # noqa: F401

        return lambda data: torch.ops.redux._competition_custom_kernel(data[0], data[1])
    from leaderboard.ops import load_submission

    return load_submission(source)[1]


def _child_main(conn, source):
    for var in SECRET_VARS:
        os.environ.pop(var, None)
    try:
        kernel = _load(source)
    except BaseException as e:  # noqa: BLE001  (the child reports whatever the submission does)
        _send(conn, "raised", f"loading the submission raised {describe_exception(e)}")
        return
    _send(conn, "ready", None)
    state = {}
    while True:
        try:
            handler, args = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return
        if handler is None:
            return
        module, _, name = handler.rpartition(".")
        try:
            if module not in HANDLER_MODULES:
                raise ValueError(f"no handler {handler!r}")
            value = getattr(importlib.import_module(module), name)(kernel, state, *args)
            answer = ["ok", value]
        except BaseException as e:  # noqa: BLE001
            answer = ["raised", describe_exception(e)]
        try:
            conn.send_bytes(json.dumps(answer).encode())
        except (TypeError, ValueError) as e:  # an answer JSON cannot carry
            _send(conn, "raised", f"malformed answer: {e}")


class Child:
    """One submission (a .py file, or "cpp" for redux's custom_kernel) in a
    spawned process; `call` asks it, `close` ends it. With deadline_s=None
    the child is started and `wait_ready` waits for its load later (the
    caller's own imports overlap it)."""

    def __init__(self, source, deadline_s):
        ctx = multiprocessing.get_context("spawn")
        self._conn, theirs = ctx.Pipe()
        saved = {v: os.environ.pop(v) for v in SECRET_VARS if v in os.environ}
        try:
            self._proc = ctx.Process(target=_child_main, args=(theirs, source), daemon=True)
            self._proc.start()
        finally:
            os.environ.update(saved)
        theirs.close()
        if deadline_s is not None:
            self.wait_ready(deadline_s)

    def wait_ready(self, deadline_s):
        self._answer("loading the submission", deadline_s)

    def call(self, handler, *args, deadline_s):
        """The handler's answer, or SubmissionFailed."""
        try:
            self._conn.send_bytes(json.dumps([handler, list(args)]).encode())
        except OSError:
            raise SubmissionFailed(self._death(handler)) from None
        return self._answer(handler.rpartition(".")[2].removeprefix("child_") + " request", deadline_s)

    def _answer(self, what, deadline_s):
        if not self._conn.poll(max(deadline_s, 0.0)):
            self.kill()
            raise SubmissionFailed(f"no answer within {deadline_s:g} s ({what}): the submission hangs or is too slow")
        try:
            kind, value = json.loads(self._conn.recv_bytes(MAX_ANSWER_BYTES))
        except (EOFError, OSError):
            raise SubmissionFailed(self._death(what)) from None
        except (ValueError, TypeError) as e:
            self.kill()
            raise SubmissionFailed(f"{what}: a malformed answer ({e})") from None
        if kind == "raised":
            raise SubmissionFailed(str(value) if what != "loading the submission" else f"{what}: {value}")
        return value

    def _death(self, what):
        self._proc.join(5)
        if self._proc.exitcode is None:
            self.kill()
        return f"the submission's process {describe_exit(self._proc.exitcode)} ({what})"

    def alive(self):
        return self._proc.is_alive()

    def kill(self):
        if self._proc.is_alive():
            self._proc.kill()
        self._proc.join(5)

    def close(self):
        try:
            self._conn.send_bytes(json.dumps([None, []]).encode())
        except OSError:
            pass
        self._proc.join(5)
        self.kill()
        self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

