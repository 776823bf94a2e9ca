"""How long `gpustack validate` takes over hostile and oversized specs, and how much memory.

The inputs: alias bombs (a label value of ``levels`` nested lists, each level ``width``
aliases of the one below: 9 levels of 9 stand for 9⁹ strings in 559 bytes), and specs with
many labels (150,000 labels are 5.3 MB), each a whole ``gpustack validate`` process.

    python benchmarks/spec_reading.py           # prints a Markdown table: medians of 3 runs
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEADER = (
    "apiVersion: gpustack.io/v1alpha1\nkind: GpuStack\nmetadata: {name: bench}\n"
    "spec:\n  cluster: {distribution: k3s}\n  nodePools:\n  - name: a\n    gpu: {model: L4}\n    labels:\n"
)


def alias_bomb(levels: int, width: int = 9) -> str:
    """A spec whose one label value is ``width ** levels`` strings when its aliases are expanded."""
    items = ["&a0 lol"]
    items += [f"&a{level} [{', '.join([f'*a{level - 1}'] * width)}]" for level in range(1, levels + 1)]
    return HEADER + f"      bomb: [{', '.join(items)}]\n"


def many_labels(count: int) -> str:
    """A valid spec with ``count`` labels on its pool (36 bytes a line)."""
    return HEADER + "".join(f"      example.com/l{index:07d}: v{index:07d}\n" for index in range(count))


def measure(text: str, folder: Path) -> tuple[float, float, int, str]:
    """Wall and CPU seconds, peak memory (bytes) and the last line of output of `gpustack validate`."""
    spec = folder / "spec.yaml"
    spec.write_text(text, encoding="utf-8")
    gpustack = Path(sys.executable).with_name("gpustack")
    started = time.monotonic()
    process = subprocess.Popen([str(gpustack), "validate", str(spec)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - started
    assert process.stdout is not None
    output = process.stdout.read().decode().strip().splitlines()
    process.returncode = os.waitstatus_to_exitcode(status)
    last = output[-1].replace(str(spec), "spec.yaml") if output else ""
    return seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, last


RUNS = 3


def main() -> None:
    inputs = [(f"alias bomb 9^{levels}", alias_bomb(levels)) for levels in (5, 6, 7, 9)]
    inputs += [(f"{count:,} labels", many_labels(count)) for count in (1_000, 25_000, 150_000)]
    print(f"Load average before: {os.getloadavg()[0]:.2f}\n")
    print("| input | size | wall, CPU (medians) | peak memory | result |\n|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name, text in inputs:
            runs = [measure(text, Path(folder)) for _ in range(RUNS)]
            wall, cpu = (statistics.median(run[i] for run in runs) for i in (0, 1))
            memory, result = max(run[2] for run in runs), runs[-1][3]
            print(f"| {name} | {len(text.encode()):,} B | {wall:.2f} s, {cpu:.2f} s | {memory >> 20} MB | {result} |")


if __name__ == "__main__":
    main()
