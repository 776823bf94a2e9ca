"""The ``Report``: everything one lint run found, as a value. The engine builds it, the
reporters render it, autofix and the baseline read it; none of them needs the engine to
receive one, so a reporter is one module that imports this and the finding types."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpustack.lint.catalogue import RuleInfo
from gpustack.lint.model import Finding, InputError, Note, Severity
from gpustack.lint.policy import suppress


@dataclass(frozen=True)
class Report:
    """Everything a run found, ready for a reporter."""

    findings: tuple[Finding, ...]
    suppressed: tuple[suppress.Suppressed, ...]
    errors: tuple[InputError, ...]
    notes: tuple[Note, ...]
    files: int
    objects: int
    catalogue: Mapping[str, RuleInfo]
    baseline: suppress.BaselineUse | None = None  # with --baseline: what it matched, what no longer occurs

    def exit_code(self, fail_on: Severity, *, fail_if_no_objects: bool = False) -> int:
        """0 clean; 1 findings at or above ``fail_on``, or an unreadable file; 2 nothing readable."""
        if (self.files == 0 and self.errors) or (fail_if_no_objects and self.objects == 0):
            return 2
        if self.errors or any(finding.severity >= fail_on for finding in self.findings):
            return 1
        return 0
