"""The CLI's last line of defence: an unexpected exception is a message, not a traceback."""

from __future__ import annotations

import errno
import os

import pytest

from gpustack import cli


def test_unexpected_exception_is_a_message_and_exit_2(monkeypatch, capsys):
    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("gpustack.spec.schema.spec_schema_text", explode)
    monkeypatch.delenv("GPUSTACK_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["schema"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom" in err
    assert "Traceback" not in err


def test_debug_env_shows_the_traceback(monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr("gpustack.spec.schema.spec_schema_text", explode)
    monkeypatch.setenv("GPUSTACK_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        cli.main(["schema"])


def test_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["no-such-command"])
    assert exit_info.value.code == 2


@pytest.mark.parametrize(("number", "said"), [(errno.ENOSPC, "cannot write: No space left on device"), (errno.EACCES, "internal error: PermissionError")])
def test_a_full_disk_is_said_as_such(monkeypatch, capsys, number, said):
    """Writing the output to a full disk is the disk's fault, said so and exit 2; other OS
    errors that reach the top are still reported as internal errors."""

    def explode(*args, **kwargs):
        raise OSError(number, os.strerror(number))

    monkeypatch.setattr("gpustack.spec.schema.spec_schema_text", explode)
    monkeypatch.delenv("GPUSTACK_DEBUG", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["schema"])
    assert exit_info.value.code == 2
    assert said in capsys.readouterr().err
