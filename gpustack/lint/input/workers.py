"""Work on many files spread over forked worker processes, the main process taking a share.

Reading YAML, finding pod specs and running the file-local rules are most of a cold run,
and each file's part depends on that file alone (with what the main process computed before
forking: the set's DRA claims and set facts, inherited by the fork). ``spread`` hands each
worker a run of consecutive files, takes its results back pickled, and does a worker's part
itself when the worker could not be started or died, so the results are the same either way.

How many processes: ``GPUSTACK_JOBS`` when set (1: none), else one per CPU that other work
leaves idle (within a container's CPU limit), for inputs large enough to pay for a fork
(``PARALLEL_FILES``, ``PARALLEL_BYTES``).
Fork is Linux only here (macOS forks badly): elsewhere everything runs in the main process.
"""

from __future__ import annotations

import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

PARALLEL_FILES = 200
PARALLEL_BYTES = 2_000_000
JOBS_VARIABLE = "GPUSTACK_JOBS"
# The main process's share of the items beside a worker's: a file costs both about the same
# (a worker also encodes what it sends, 2.1 against 2.05 ms a file), and the main process then
# decodes what workers sent (0.18 ms a file): measured on 2,000 and 10,000 documents, 0.95
# ends both at about the same time.
MAIN_SHARE = 0.95


def jobs_for(files: int, size: int, jobs: int | None = None) -> int:
    """The processes to spread ``files`` (``size`` bytes in all) over: ``jobs`` when given."""
    if jobs is None:
        setting = os.environ.get(JOBS_VARIABLE, "").strip()
        if setting.isdigit() and int(setting) > 0:
            jobs = int(setting)
        elif files < PARALLEL_FILES and size < PARALLEL_BYTES:
            return 1
        else:
            jobs = idle_cpus()
    return min(jobs, files) if sys.platform.startswith("linux") else 1


def look_early() -> None:
    """Take ``idle_cpus``'s first look now, at start-up: by the time it decides, start-up has
    put the time between its two looks behind it, and it need not wait."""
    global _early_look
    try:
        _early_look = (time.monotonic(), _running())
    except (OSError, ValueError, IndexError):
        _early_look = None


_early_look: tuple[float, int] | None = None  # (when, runnable threads), from ``look_early``
LOOK_GAP = 0.005  # seconds between two looks: a thread that runs for an instant (a shell between commands) is not other work
EARLY_LOOK_LIFE = 2.0  # seconds: an early look older than this says nothing of the load now


def idle_cpus() -> int:
    """CPUs that other work leaves free now, at least one: the CPUs this process may use (its
    affinity, capped by a container's CPU limit) less the other runnable threads
    (``/proc/loadavg``'s fourth field, the lower of two looks ``LOOK_GAP`` apart or more: the
    early one when taken; the one-minute load average where there is none). The load
    average lags a minute behind: a run right after another would see the earlier run as
    other work. On a busy machine a worker only adds the cost of sending its results
    (measured on two cores with one taken: 10,000 documents 2.7 s alone, 3.0 s with a worker)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    cpus = min(cpus, _quota() or cpus)
    try:
        others = _two_looks() - 1  # this process is one of them
    except (OSError, ValueError, IndexError):
        try:
            others = round(os.getloadavg()[0])
        except OSError:
            return 1
    return max(1, min(cpus, cpus - others))


# A container's CPU limit (cgroup v2, then v1): the CPUs it may use whatever the host has.
_QUOTA_FILES = (("/sys/fs/cgroup/cpu.max",), ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us"))


def _quota() -> int | None:
    """The CPUs a CPU limit on this process's control group allows, rounded up; None without
    one. A container on a large host sees the host's CPUs and load; its limit is what counts."""
    for files in _QUOTA_FILES:
        try:
            fields = " ".join(map(_read, files)).split()
            quota, period = int(fields[0]), int(fields[1])
        except (OSError, ValueError, IndexError):
            continue  # "max" (no limit), or no such file
        if quota > 0 and period > 0:
            return max(1, -(-quota // period))
    return None


def _two_looks() -> int:
    """The lower of the runnable threads seen ``LOOK_GAP`` apart or more (the first look the
    early one when taken, used once and only while recent: ``EARLY_LOOK_LIFE``)."""
    global _early_look
    early, _early_look = _early_look, None
    first = early if early and time.monotonic() - early[0] < EARLY_LOOK_LIFE else (time.monotonic(), _running())
    wait = LOOK_GAP - (time.monotonic() - first[0])
    if wait > 0:
        time.sleep(wait)
    return min(first[1], _running())


def _running() -> int:
    return int(_read("/proc/loadavg").split()[3].split("/")[0])


def _read(path: str) -> str:
    with open(path, encoding="ascii") as stream:
        return stream.read()


def chunks(sizes: Sequence[int], jobs: int) -> list[tuple[int, int]]:
    """Consecutive runs of items of about equal size, as (start, end) indexes; the first, the
    main process's, by ``MAIN_SHARE``."""
    total = sum(sizes) or 1
    shares = [MAIN_SHARE] + [1.0] * (jobs - 1)
    bounds = [total * sum(shares[: index + 1]) / sum(shares) for index in range(jobs)]
    starts = [0] * jobs
    done, chunk = 0, 0
    for index, size in enumerate(sizes):
        while chunk < jobs - 1 and done >= bounds[chunk]:
            chunk += 1
            starts[chunk] = index
        done += size
    ends = [*starts[1 : chunk + 1], len(sizes)]
    return [(starts[index], ends[index]) for index in range(chunk + 1) if ends[index] > starts[index]]


def spread(
    items: Sequence[Item],
    sizes: Sequence[int],
    jobs: int,
    here: Callable[[Sequence[Item]], list[Result]],
    there: Callable[[Sequence[Item]], list[Any]],
    back: Callable[[Item, Any], Result],
) -> list[Result]:
    """``here(items)``, one result per item in order, over ``jobs`` processes: the main process
    runs ``here`` on the first run of items; a worker runs ``there`` on another (picklable
    values, one per item) and the main process turns each into a result with ``back``."""
    if jobs <= 1 or len(items) < 2:
        return here(items)
    import multiprocessing

    bounds = chunks(sizes, jobs)
    context = multiprocessing.get_context("fork")
    sys.stdout.flush()  # a worker flushes on exit what the buffers held when it forked
    sys.stderr.flush()
    workers = []
    for start, end in bounds[1:]:
        receiver, sender = context.Pipe(duplex=False)
        worker = context.Process(target=_send, args=(sender, there, items[start:end]), daemon=True)
        try:
            worker.start()
        except OSError:  # no process to be had: done here
            receiver.close()
            worker = None
        sender.close()
        workers.append((start, end, receiver, worker))
    start, end = bounds[0]
    results = here(items[start:end])
    for start, end, receiver, worker in workers:
        try:
            if worker is None:
                raise EOFError
            values = pickle.loads(receiver.recv_bytes())
            done = [back(item, value) for item, value in zip(items[start:end], values, strict=True)]
        except (EOFError, OSError, pickle.UnpicklingError, ValueError):  # the worker died: done here
            done = here(items[start:end])
        finally:
            receiver.close()
            if worker:
                worker.join()
        results.extend(done)
    return results


def _send(sender: Any, there: Callable[[Sequence[Any]], list[Any]], items: Sequence[Any]) -> None:
    """In a worker process: ``there`` over the items, sent back pickled. A failure sends
    nothing: the main process does the part itself and reports what goes wrong there."""
    try:
        payload = pickle.dumps(there(items), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:
        os._exit(1)
    sender.send_bytes(payload)
    sender.close()
