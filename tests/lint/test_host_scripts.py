"""Host scripts and setup notes are input only where a line makes nvidia the default runtime."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpustack.lint.input.discover import read_inputs
from gpustack.lint.input.hostscripts import as_document
from gpustack.lint.facts.hostscripts import KEY


@pytest.mark.parametrize(
    "line",
    [
        "sudo nvidia-ctk runtime configure --runtime=containerd --set-as-default",
        "sed -i 's/default_runtime_name = \"runc\"/default_runtime_name = \"nvidia\"/' /etc/containerd/config.toml",
        '    "default-runtime": "nvidia",',
        "default-runtime: nvidia",
    ],
)
def test_a_line_that_makes_nvidia_the_default_is_read(line: str) -> None:
    document = as_document(f"#!/bin/sh\nset -e\n{line}\n".encode())
    assert document is not None
    assert json.loads(document)[KEY]["line"] == 3


@pytest.mark.parametrize(
    "text",
    [
        "nvidia-ctk runtime configure --runtime=containerd\n",  # registers nvidia, keeps runc the default
        "# nvidia-ctk runtime configure --runtime=containerd --set-as-default\n",  # commented out
        "echo hello\n",
        "\xff\xfe nvidia",
    ],
)
def test_other_scripts_are_no_document(text: str) -> None:
    assert as_document(text.encode("latin-1")) is None


def test_scripts_that_set_nothing_are_no_input_found_or_named(tmp_path: Path) -> None:
    (tmp_path / "setup.sh").write_text("apt-get install -y curl jq  # before the nvidia steps\n")
    (tmp_path / "gpu.sh").write_text("nvidia-ctk runtime configure --set-as-default\n")
    (tmp_path / "README.md").write_text("# Setup\n\nRun `gpu.sh`.\n")
    found = [part[0] for part in read_inputs([str(tmp_path)]) if isinstance(part, tuple)]
    assert found == [str(tmp_path / "gpu.sh")]
    assert read_inputs([str(tmp_path / "setup.sh")]) == []
