"""What one layer check says: ok, problem (with what to do and the upstream documentation of the step) or n/a."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Status(StrEnum):
    OK = "ok"
    PROBLEM = "problem"
    NA = "n/a"


@dataclass(frozen=True)
class LayerResult:
    layer: str
    status: Status
    detail: str
    fix: str | None = None
    docs: str | None = None  # upstream documentation of the fix

    def __post_init__(self) -> None:
        if self.status is Status.PROBLEM and not (self.fix and self.docs):
            raise ValueError(f"{self.layer}: a problem needs a fix and the documentation of that fix")


def ok(layer: str, detail: str) -> LayerResult:
    return LayerResult(layer, Status.OK, detail)


def not_applicable(layer: str, detail: str) -> LayerResult:
    return LayerResult(layer, Status.NA, detail)


def problem(layer: str, detail: str, *, fix: str, docs: str) -> LayerResult:
    return LayerResult(layer, Status.PROBLEM, detail, fix, docs)
