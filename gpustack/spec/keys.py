"""The keys a spec allows at a place in the document, for "did you mean" on an unknown key."""

from __future__ import annotations

import types
import typing
from collections.abc import Iterator, Sequence

from pydantic import BaseModel

from gpustack.spec.models import GpuStack


def allowed_keys(parent: Sequence[str | int]) -> list[str]:
    """The field names of the mapping at ``parent`` (a pydantic error location without its last
    step), as a spec writes them; empty when the place holds no model."""
    models: list[type[BaseModel]] = [GpuStack]
    for step in parent:
        if isinstance(step, int):
            continue  # a list item: the models are the list's
        inner = [model for model in _models(step, models)]
        tagged = [model for model in models if _tag(model) == step]
        # A step that no model has as a field is a discriminated union's tag (keep the member it
        # names) or a dict key (keep the dict's values).
        models = inner or tagged or models
    names = {field.alias or name: None for model in models for name, field in model.model_fields.items()}
    return list(names)


def _models(step: str, models: list[type[BaseModel]]) -> Iterator[type[BaseModel]]:
    for model in models:
        for name, field in model.model_fields.items():
            if step in (name, field.alias):
                yield from _inner_models(field.annotation)


def _inner_models(annotation: object) -> Iterator[type[BaseModel]]:
    """The models an annotation holds: itself, or those of its Optional, Union, list or dict."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
        return
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is dict:
        args = args[1:]
    elif origin is typing.Annotated:
        args = args[:1]
    elif origin not in (list, tuple, typing.Union, types.UnionType):
        return
    for arg in args:
        yield from _inner_models(arg)


def _tag(model: type[BaseModel]) -> str | None:
    """The value of a one-value Literal field (a discriminated union's tag), if the model has one."""
    for field in model.model_fields.values():
        if typing.get_origin(field.annotation) is typing.Literal and len(typing.get_args(field.annotation)) == 1:
            return str(typing.get_args(field.annotation)[0])
    return None
