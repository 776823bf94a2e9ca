"""The catalogue as text: the ``gpustack rules`` table, ``gpustack explain``, and
``docs/rules.md`` (generated with ``gpustack rules --format markdown > docs/rules.md``; a test
fails when the committed page is stale)."""

from __future__ import annotations

from collections.abc import Mapping

from gpustack.lint.catalogue import Example, RuleInfo
from gpustack.terminal import aligned

DOCS_PATH = "docs/rules.md"


def catalogue_table(catalogue: Mapping[str, RuleInfo]) -> str:
    """Aligned columns for a terminal."""
    rows = [("ID", "NAME", "SEVERITY", "SCOPE", "AUTOFIX", "SUMMARY")]
    rows += [
        (info.id, info.name, _severity(info), info.scope, _yes(info.fixable), info.summary)
        for info in catalogue.values()
    ]
    return aligned(rows)


def catalogue_markdown(catalogue: Mapping[str, RuleInfo]) -> str:
    """The whole catalogue as one Markdown page: an index table, then a section per rule."""
    lines = [
        "# gpustack lint rules",
        "",
        f"<!-- Generated from policies/ by `gpustack rules --format markdown > {DOCS_PATH}`; do not edit. -->",
        "",
        "Severity is the default: context (`--distribution`, a spec) and `.gpustack.yaml` may change it.",
        "Opt-in rules run only when selected by id (`--select`, or `rules: {GSNNN: on}` in `.gpustack.yaml`).",
        "`gpustack explain GSNNN` prints one rule in a terminal.",
        "",
        "| Rule | Severity | Scope | Autofix | Summary |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| [{info.id} {info.name}](#{anchor(info)}) | {_severity(info)} | {info.scope} | {_yes(info.fixable)} "
        f"| {_cell(info.summary)} |"
        for info in catalogue.values()
    ]
    page = "\n".join(lines) + "\n"
    return page + "".join("\n" + rule_markdown(info, level=2) for info in catalogue.values())


def anchor(info: RuleInfo) -> str:
    """The rule's section anchor in docs/rules.md (GitHub's heading slug)."""
    return f"{info.id} {info.name}".lower().replace(" ", "-")


def rule_markdown(info: RuleInfo, *, level: int) -> str:
    """One rule: heading, facts, rationale, remediation, references, examples."""
    heading = "#" * level
    sub = "#" * (level + 1)
    parts = [
        f"{heading} {info.id} {info.name}",
        f"**Severity** {_severity(info)} · **Scope** {info.scope} · **Autofix** {_yes(info.fixable)} · "
        f"**Security** {_yes(info.security)}",
        info.summary,
        f"{sub} Why\n\n{info.rationale}",
        f"{sub} Fix\n\n{info.remediation}",
    ]
    if info.references:
        parts.append(f"{sub} References\n\n" + "\n".join(f"- <{url}>" for url in info.references))
    parts.append(f"{sub} Fires on\n\n" + "\n\n".join(_example(example) for example in info.fires))
    parts.append(f"{sub} Stays quiet on\n\n" + "\n\n".join(_example(example) for example in info.clean))
    return "\n\n".join(parts) + "\n"


def _example(example: Example) -> str:
    flags = [f"--distribution {example.distribution}"] if example.distribution else []
    flags += [f"--spec {example.spec}"] if example.spec else []
    context = f" (`{' '.join(flags)}`)" if flags else ""
    return f"{example.description.strip()}{context}\n\n```yaml\n{example.manifest.rstrip()}\n```"


def _severity(info: RuleInfo) -> str:
    """The default severity; an opt-in rule says it runs only when selected."""
    return f"{info.severity} (opt-in)" if info.opt_in else str(info.severity)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
