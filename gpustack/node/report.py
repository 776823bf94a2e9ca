"""How ``gpustack doctor`` prints its results: one line per layer, or one JSON object."""

from __future__ import annotations

import json
from dataclasses import asdict

from gpustack.node.layers import healthy
from gpustack.node.result import LayerResult, Status
from gpustack.node.root import NodeRoot


def text(results: tuple[LayerResult, ...]) -> str:
    width = max(len(r.layer) for r in results)
    lines = [_line(r, width) for r in results]
    problems = [r.layer for r in results if r.status is Status.PROBLEM]
    lines.append(f"{len(problems)} problem(s): {', '.join(problems)}" if problems else "every applicable layer is ok")
    return "\n".join(lines) + "\n"


def _line(result: LayerResult, width: int) -> str:
    line = f"{result.status.value:<8} {result.layer:<{width}}  {result.detail}"
    if result.status is Status.PROBLEM:
        line += f" → {result.fix} [{result.docs}]"
    return line


def as_json(root: NodeRoot, results: tuple[LayerResult, ...]) -> str:
    document = {
        "root": str(root.base),
        "healthy": healthy(results),
        "layers": [asdict(r) for r in results],
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
