"""GS020: vLLM streaming from an S3-compatible store without ``AWS_EC2_METADATA_DISABLED``.

``--load-format runai_streamer`` reads ``s3://`` models through the AWS SDK. With a custom
``AWS_ENDPOINT_URL`` (MinIO) the SDK still walks its credential chain, tries the EC2 instance
metadata service first and ignores the MinIO keys; ``AWS_EC2_METADATA_DISABLED=true`` stops it
(https://docs.vllm.ai/en/latest/models/extensions/runai_model_streamer.html).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.context import LintContext
from gpustack.lint.facts.consumers import env_vars
from gpustack.lint.facts.podspec import command_parts, subject
from gpustack.lint.model import AppendItem, Container, Edit, Hit, PodSpec, SetValue
from gpustack.lint.registry import Rule

ENDPOINT = "AWS_ENDPOINT_URL"
METADATA_DISABLED = "AWS_EC2_METADATA_DISABLED"
FIX = f"Add `- {{name: {METADATA_DISABLED}, value: \"true\"}}` to the container's env."


def streams_from_s3(container: Container) -> bool:
    texts = [text for _, text in command_parts(container)]
    texts += [var.value for var in env_vars(container) if var.value]
    joined = " ".join(texts)
    return "s3://" in joined and "runai_streamer" in joined


def _is_true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def check(pod: PodSpec, ctx: LintContext) -> Iterator[Hit]:
    if pod.system_component:
        return
    for container in pod.containers():
        env = {var.name: var for var in env_vars(container)}
        endpoint = env.get(ENDPOINT)
        if endpoint is None or not streams_from_s3(container):
            continue
        disabled = env.get(METADATA_DISABLED)
        if disabled is not None and (disabled.from_source or _is_true(disabled.value)):
            continue
        shown = endpoint.value or "from valueFrom"
        path = disabled.value_path if disabled is not None else endpoint.path
        edit: Edit = (
            SetValue(disabled.value_path, "true")
            if disabled is not None
            else AppendItem((*container.path, "env"), {"name": METADATA_DISABLED, "value": "true"})
        )
        yield Hit(
            pod.resource,
            path,
            f"{subject(pod, container)} streams an s3:// model with runai_streamer from "
            f"{ENDPOINT} ({shown}) without {METADATA_DISABLED}=true: the AWS SDK asks the EC2 "
            "metadata service for credentials and ignores the store's keys",
            fix=FIX,
            edits=(edit,),
        )


RULE = Rule("GS020", "pod", check)
