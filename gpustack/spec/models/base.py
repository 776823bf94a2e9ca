"""The spec models' common ground: the strict base model, version strings and the patterns.

Every section of the spec derives from ``Strict`` (unknown keys and conversions refused); version
fields refuse numbers (an unquoted ``1.30`` is the number 1.3 in YAML); the patterns and their
meanings serve the models and the error messages.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
K8S_MINOR = r"^1\.[0-9]{2}$"
DURATION = r"^([0-9]+(ms|s|m|h))+$"
# An S3 bucket name (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html)
# and a key of the characters S3 calls safe, less those a shell or URL would read.
S3_URI = r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/[A-Za-z0-9._/-]+$"
IMAGE_TAG = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"
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
    S3_URI: "must be s3://bucket/path: a bucket name of lowercase letters, digits, '.' and '-', then a path "
    "of letters, digits, '.', '_', '-' and '/'",
    IMAGE_TAG: "must be an image tag: letters, digits, '_', '.' and '-', at most 128 characters",
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


class ChartVersioned(Versioned):
    """A section that deploys a chart: its ``version`` must be one gpustack has key data for
    (``gpustack.spec.chart_checks``), unless the user vouches for it."""

    enabled: bool
    version: str | None
    allowUnknownVersion: bool = Field(
        False,
        description="Render a chart version gpustack has no key data for: `gpustack lint` cannot check "
        "its values. Off: validate refuses such a version and names the known ones.",
    )




# --- Kubernetes names and values ----------------------------------------------------------
# The spec's strings that reach a kubelet flag, a shell command or a config file are checked
# here, once, by the rules of the program that reads them: Kubernetes' apimachinery
# (https://github.com/kubernetes/apimachinery/blob/master/pkg/util/validation/validation.go:
# IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain) and Ubuntu's driver packages. A
# value that passes holds no space, quote, ``$``, ``;`` or newline (``fullmatch``: ``$``
# alone would let a trailing newline through).

_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_KEY_RULE = (
    "a Kubernetes label or taint key is an optional DNS subdomain prefix (lowercase letters, digits, "
    "'-' and '.', at most 253 characters) and '/', then a name of 1 to 63 letters, digits, '-', '_' or "
    "'.' that starts and ends with a letter or digit, e.g. example.com/gpu-class"
)


def qualified_name(value: str) -> str:
    """A label or taint key, as apimachinery's ``IsQualifiedName`` accepts it."""
    parts = value.split("/")
    prefix, name = (parts[0], parts[1]) if len(parts) == 2 else ("", parts[0])
    prefix_ok = len(parts) == 1 or (len(prefix) <= 253 and _SUBDOMAIN.fullmatch(prefix) is not None)
    if len(parts) > 2 or not prefix_ok or _NAME.fullmatch(name) is None:
        raise ValueError(f"{value!r} is not a valid key: {_KEY_RULE}")
    return value


def label_value(value: str) -> str:
    """A label or taint value, as apimachinery's ``IsValidLabelValue`` accepts it."""
    if value and _NAME.fullmatch(value) is None:
        raise ValueError(
            f"{value!r} is not a valid label value: at most 63 letters, digits, '-', '_' or '.', starting "
            "and ending with a letter or digit (or empty)"
        )
    return value


def dns_subdomain(value: str) -> str:
    """A Kubernetes object name of the DNS-1123 subdomain kind (DeviceClass, Secret, PVC)."""
    if len(value) > 253 or _SUBDOMAIN.fullmatch(value) is None:
        raise ValueError(
            f"{value!r} is not a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', starting and "
            "ending with a letter or digit, at most 253 characters"
        )
    return value


LabelKey = Annotated[str, AfterValidator(qualified_name)]
LabelValue = Annotated[str, AfterValidator(label_value)]
DnsSubdomain = Annotated[str, AfterValidator(dns_subdomain)]
Labels = dict[LabelKey, LabelValue]

_DRIVER_VERSION = re.compile(r"(?P<branch>[0-9]{3})(\.[0-9]{2,3}){0,2}")


@cache
def driver_branches() -> tuple[str, ...]:
    """The branches of ``specs/driver-branches.yaml``."""
    from ruamel.yaml import YAML

    from gpustack.shipped import data_dir

    raw = YAML(typ="safe").load((data_dir("specs") / "driver-branches.yaml").read_text(encoding="utf-8"))
    return tuple(raw["branches"])


def driver_version(value: str) -> str:
    """A driver branch ("595") or release ("595.84") of a branch with an open-module package."""
    from gpustack.suggest import close_matches, did_you_mean

    known = driver_branches()
    match = _DRIVER_VERSION.fullmatch(value)
    if match is not None and match["branch"] in known:
        return value
    listed = f"known branches: {', '.join(known)} (specs/driver-branches.yaml)"
    if match is None:
        hint = did_you_mean(close_matches(value, known)) or (
            "did you mean to leave driver.version out? Then the host steps install the newest driver"
        )
        raise ValueError(f'{value!r} is not a driver branch such as "595" or release such as "595.84"; {hint}; {listed}')
    hint = did_you_mean(close_matches(match["branch"], known, cutoff=0.5))
    raise ValueError(f"unknown driver branch {match['branch']}{'; ' + hint if hint else ''}; {listed}")


DriverVersion = Annotated[str, AfterValidator(driver_version)]
