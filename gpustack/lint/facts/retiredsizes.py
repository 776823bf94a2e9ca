"""Cloud GPU sizes their cloud has retired (``data/retired-gpu-sizes.yaml``), and where a text
names one as a setting.

A size counts where it is a value: after ``=`` or ``:`` (a shell variable, Terraform's
``vm_size``, Bicep's ``vmSize``, gcloud's ``--accelerator type=``) or a flag
(``--node-vm-size Standard_NC6``), so that prose that mentions a retired size is not read as
creating one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from gpustack.shipped import lint_data


@dataclass(frozen=True)
class RetiredSize:
    name: str  # as the table writes it: Standard_NC6, nvidia-tesla-k80
    cloud: str
    series: str
    gpu: str
    date: str  # YYYY-MM-DD
    source: str
    instead: str


@cache
def _table() -> dict[str, RetiredSize]:
    found = {}
    for entry in lint_data("retired-gpu-sizes.yaml")["retired"]:
        for name in entry["names"]:
            found[name.lower()] = RetiredSize(
                name, entry["cloud"], entry["series"], entry["gpu"], entry["date"], entry["source"], entry["instead"]
            )
    return found


def retired(value: str) -> RetiredSize | None:
    """The retired size ``value`` names, whole (any case), or None."""
    return _table().get(value.strip().lower())


@cache
def _as_setting() -> re.Pattern[str]:
    names = "|".join(sorted((re.escape(name) for name in _table()), key=len, reverse=True))
    return re.compile(rf"""(?:[=:]|--[\w-]+\s)\s*["'`]?({names})(?![\w-])""", re.IGNORECASE)


def set_in(line: str) -> RetiredSize | None:
    """The retired size a line of a script, Terraform or Bicep file sets, or None."""
    match = _as_setting().search(line)
    return retired(match.group(1)) if match else None
