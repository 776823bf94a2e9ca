"""The spec models' common ground: the strict base model, version strings and the patterns.

Every section of the spec derives from ``Strict`` (unknown keys and conversions refused); version
fields refuse numbers (an unquoted ``1.30`` is the number 1.3 in YAML); the patterns and their
meanings serve the models and the error messages.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
K8S_MINOR = r"^1\.[0-9]{2}$"
DURATION = r"^([0-9]+(ms|s|m|h))+$"
# The Kubernetes minors a stack can target: from the oldest whose OpenAPI schema
# kubernetes-validate ships (render validates every object against it) to the newest whose
# feature-gate defaults gpustack.spec.featuregates knows (tests hold both to it).
OLDEST_MINOR, NEWEST_MINOR = 25, 37
# Kubernetes' documented scalability limit: https://kubernetes.io/docs/setup/best-practices/cluster-large/
MAX_NODES = 5000
# What each pattern means, for error messages ("should match pattern '^[a-z0-9]…'" says little).
PATTERN_MEANINGS = {
    DNS_LABEL: "must be a DNS-1123 label: lowercase letters, digits and '-', "
    "starting and ending with a letter or digit, at most 63 characters",
    K8S_MINOR: 'must be a Kubernetes minor version such as "1.36"',
    DURATION: 'must be a duration such as "60s", "5m" or "1h30m"',
}


def version_string(value: Any) -> Any:
    """Refuse numbers where a version string is expected (YAML turns 1.30 into 1.3)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        written = _as_written(value)
        raise ValueError(
            f'must be a string: quote it, "{written}" (unquoted, YAML reads the number {value})'
        )
    return value


def _as_written(number: int | float) -> str:
    """The number as the YAML file spelled it (ruamel keeps 1.30 apart from 1.3)."""
    from gpustack.yamlio import dump

    return dump({"v": number}).split(":", 1)[1].strip()


class Strict(BaseModel):
    """No unknown keys, and no conversions: ``count: true`` is not 1, ``"3"`` is not 3."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, strict=True)


class Versioned(Strict):
    """Mixin for sections with a ``version`` string."""

    @field_validator("version", mode="before", check_fields=False)
    @classmethod
    def _quote_version(cls, value: Any) -> Any:
        return version_string(value)


