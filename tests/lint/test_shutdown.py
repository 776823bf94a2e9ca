"""The console script ends a lint at once (``gpustack.shutdown``): nothing it wrote is lost,
its exit status is the lint's, and every other caller keeps the usual ``SystemExit``."""

from __future__ import annotations

import cProfile
import errno
import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gpustack import shutdown
from gpustack.lint.input import cache as cache_module


class _Ended(Exception):
    def __init__(self, code: int) -> None:
        self.code = code


@pytest.fixture
def ended(monkeypatch: pytest.MonkeyPatch) -> None:
    """``os._exit`` raises ``_Ended`` instead of ending the test run; no teardown skipped yet."""
    monkeypatch.setattr(shutdown, "_skip", False)

    def end(code: int) -> None:
        raise _Ended(code)

    monkeypatch.setattr(shutdown.os, "_exit", end)


@pytest.fixture
def unobserved(ended: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``ended``, and no profiler or coverage tracer seen (the tests may run under one)."""
    monkeypatch.setattr(shutdown, "_observed", lambda: False)


def _exiting(code: object, skip: bool):
    def main() -> None:
        if skip:
            shutdown.skip_teardown()
        raise SystemExit(code)

    return main


@pytest.mark.usefixtures("unobserved")
@pytest.mark.parametrize("code", [0, 1, 2])
def test_a_command_that_skips_the_teardown_ends_the_process_with_its_status(code: int) -> None:
    with pytest.raises(_Ended) as exc:
        shutdown.run(_exiting(code, skip=True))
    assert exc.value.code == code


@pytest.mark.usefixtures("ended")
def test_other_commands_exit_as_usual() -> None:
    with pytest.raises(SystemExit) as exc:
        shutdown.run(_exiting(2, skip=False))
    assert exc.value.code == 2
    shutdown.run(lambda: None)  # returns: the interpreter exits normally


@pytest.mark.usefixtures("ended")
def test_a_profiled_run_exits_as_usual_for_the_profiler_to_write() -> None:
    profiler = cProfile.Profile()
    with pytest.raises(SystemExit) as exc:
        profiler.runcall(shutdown.run, _exiting(1, skip=True))
    assert exc.value.code == 1


@pytest.mark.usefixtures("unobserved")
def test_a_message_for_status_is_printed_and_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(_Ended) as exc:
        shutdown.run(_exiting("error: gone", skip=True))
    assert exc.value.code == 1 and capsys.readouterr().err == "error: gone\n"
    with pytest.raises(_Ended) as exc:
        shutdown.run(_exiting(None, skip=True))
    assert exc.value.code == 0


@pytest.mark.usefixtures("unobserved")
def test_a_reader_that_left_gives_status_1(monkeypatch: pytest.MonkeyPatch) -> None:
    class Closed(io.StringIO):
        def flush(self) -> None:
            raise BrokenPipeError

    monkeypatch.setattr(sys, "stdout", Closed())
    with pytest.raises(_Ended) as exc:
        shutdown.run(_exiting(0, skip=True))
    assert exc.value.code == 1


@pytest.mark.usefixtures("unobserved")
def test_output_that_cannot_be_written_is_said_and_exits_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Full(io.StringIO):
        def flush(self) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(sys, "stdout", Full())
    with pytest.raises(_Ended) as exc:
        shutdown.run(_exiting(1, skip=True))
    assert exc.value.code == 2
    assert capsys.readouterr().err == "error: cannot write the report: No space left on device\n"


def test_the_console_script_loses_nothing(generated: Path, tmp_path: Path) -> None:
    """A whole report through a pipe, larger than its buffer, and a filled cache: as the
    in-process run gives them."""
    folder = tmp_path / "cache"
    command = [sys.executable, "-m", "gpustack", "lint", "--format", "json", "--cache-dir", str(folder)]
    first = subprocess.run([*command, str(generated)], capture_output=True, text=True, check=False)
    report = json.loads(first.stdout)
    assert first.returncode == 1 and first.stderr == "" and len(first.stdout) > 1 << 16
    assert len(report["findings"]) > 100
    with sqlite3.connect(folder / cache_module.DATABASE) as database:
        keys = [key for (key,) in database.execute("SELECT key FROM entries")]
    assert sum(key.startswith("output:") for key in keys) == 1
    assert sum(key.startswith("documents:") for key in keys) == 50
    again = subprocess.run([*command, str(generated)], capture_output=True, text=True, check=False)
    assert (again.returncode, again.stdout) == (1, first.stdout)
