"""DRA selectors checked before rendering, as ``gpustack lint`` (GS030) checks the rendered
DeviceClasses and ResourceClaimTemplates: each CEL expression must compile, and read only
attributes and capacities its driver publishes. The code and data are the linter's
(``gpustack.lint.facts.dracel``): one source for what a driver publishes.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpustack.lint.facts.dracel import compile_error, unknown_names
from gpustack.spec.models import GpuStack
from gpustack.spec.pool_checks import Finding


def check_dra_selectors(stack: GpuStack) -> Iterator[Finding]:
    dra = stack.spec.dra
    if not dra.enabled:
        return
    for i, device_class in enumerate(dra.deviceClasses):
        if device_class.migProfile is not None and dra.driver != "nvidia":
            yield ("spec", "dra", "deviceClasses", i, "migProfile"), (
                f"the {dra.driver} DRA driver publishes no MIG devices: drop migProfile, or use driver: nvidia"
            )
    places = [(("spec", "dra", "deviceClasses", i), c.selectors) for i, c in enumerate(dra.deviceClasses)]
    places += [(("spec", "dra", "claimTemplates", i), t.selectors) for i, t in enumerate(dra.claimTemplates)]
    for path, selectors in places:
        for index, expression in enumerate(selectors):
            yield from _problems((*path, "selectors", index), expression)


def _problems(path: tuple[str | int, ...], expression: str) -> Iterator[Finding]:
    error = compile_error(expression)
    if error is not None:
        yield path, f"the CEL selector does not compile: {error}"
        return
    for unknown in unknown_names(expression):
        closest = unknown.closest
        hint = f"did you mean {closest}?" if closest else f"it publishes {', '.join(unknown.published)}"
        yield path, (
            f"`{unknown.lookup}`: the {unknown.domain} driver publishes no {unknown.kind} {unknown.name} ({hint}); "
            "the selector would fail on its devices and claims that use it would never be allocated"
        )
