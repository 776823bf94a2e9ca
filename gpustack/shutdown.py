"""Ending the process at once after a command that leaves nothing to clean up.

A lint of 10,000 documents holds millions of objects when it ends, and an interpreter that
exits normally frees them one by one: 0.1 s of a 1.8 s run (0.02 s of 0.5 s on 2,000
documents). ``gpustack lint`` has written its report, files and cache by then and closed
them, so it calls ``skip_teardown``; the console script (``run``) then flushes the standard
streams and ends the process with ``os._exit``. Other commands exit normally: render stops
the Node process and removes its scratch folder in ``atexit`` hooks. So does a process under
a profiler or a coverage tracer, which write what they gathered as the interpreter exits
(``python -m cProfile -m gpustack lint``, ``benchmarks/hotspots.py``). Whoever calls
``gpustack.cli.main`` in-process (the tests) gets the usual ``SystemExit``: only ``run``
ends the process.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

_skip = False


def skip_teardown() -> None:
    """Say that the running command has written and closed everything it opened."""
    global _skip
    _skip = True


def run(main: Callable[[], object]) -> None:
    """``main()``, then the exit: at once where the command skipped the teardown."""
    try:
        main()
    except SystemExit as exc:
        if not _skip or _observed():
            raise
        code = exc.code
    else:
        return
    if not isinstance(code, int):  # sys.exit("message") prints it and exits 1
        if code is not None:
            print(code, file=sys.stderr)
        code = 0 if code is None else 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # the reader left (`gpustack lint | head`): as main says of it
        code = 1
    except OSError as exc:  # a full disk, a closed descriptor: the report did not get out whole
        _tell(f"error: cannot write the report: {exc.strerror or exc}")
        code = 2
    os._exit(code)


def _observed() -> bool:
    """A profiler or tracer (coverage) runs, and writes its data at the interpreter's exit."""
    if sys.getprofile() is not None or sys.gettrace() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)  # coverage's tracer from Python 3.12 on
    return monitoring is not None and any(monitoring.get_tool(tool) is not None for tool in range(6))


def _tell(message: str) -> None:
    """A last word on standard error, where it can still be written."""
    try:
        print(message, file=sys.stderr, flush=True)
    except OSError:
        pass
