"""How ``gpustack doctor`` prints its results: one line per layer, or one JSON object."""

from __future__ import annotations

import json
from dataclasses import asdict

from gpustack.node.layers import healthy
from gpustack.node.result import LayerResult, Status
from gpustack.node.root import NodeRoot
from gpustack.terminal import DIM, GREEN, RED, Painter, painter


_COLOURS = {Status.OK: GREEN, Status.PROBLEM: RED, Status.NA: DIM}


def text(results: tuple[LayerResult, ...], paint: Painter = painter(False)) -> str:
    width = max(len(r.layer) for r in results)
    lines = [_line(r, width, paint) for r in results]
    problems = [r.layer for r in results if r.status is Status.PROBLEM]
    verdict = f"{len(problems)} problem(s): {', '.join(problems)}" if problems else "every applicable layer is ok"
    lines.append(paint(RED if problems else GREEN, verdict))
    return "\n".join(lines) + "\n"


def _line(result: LayerResult, width: int, paint: Painter) -> str:
    line = f"{paint(_COLOURS[result.status], f'{result.status.value:<8}')} {result.layer:<{width}}  {result.detail}"
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
