"""The catalogue as text: the ``gpustack rules`` table, ``gpustack explain``, and the site's rule
pages (``docs/rules/GSNNN.md`` and their index ``docs/rules/index.md``, written by
``gpustack docs``; a test fails when the committed pages are stale). A rule's page is what
``gpustack explain`` prints, from the same function."""

from __future__ import annotations

from collections.abc import Mapping

from gpustack.lint.catalogue import Example, RuleInfo
from gpustack.terminal import aligned

RULES_FOLDER = "rules"  # in the site's docs folder
GENERATED = "<!-- Generated from policies/ by `gpustack docs`; do not edit. -->"


def catalogue_table(catalogue: Mapping[str, RuleInfo]) -> str:
    """Aligned columns for a terminal."""
    rows = [("ID", "NAME", "SEVERITY", "SCOPE", "AUTOFIX", "SUMMARY")]
    rows += [
        (info.id, info.name, _severity(info), info.scope, _yes(info.fixable), info.summary)
        for info in catalogue.values()
    ]
    return aligned(rows)


def page_path(info: RuleInfo) -> str:
    """The rule's page in the site's docs folder."""
    return f"{RULES_FOLDER}/{info.id}.md"


def rules_index_markdown(catalogue: Mapping[str, RuleInfo]) -> str:
    """The site's rule index: one row per rule, linking its page."""
    lines = [
        "# Rules",
        "",
        GENERATED,
        "",
        "Severity is the default: context (`--distribution`, a spec) and `.gpustack.yaml` may change it.",
        "Opt-in rules run only when selected by id (`--select`, or `rules: {GSNNN: on}` in `.gpustack.yaml`).",
        "`gpustack rules` lists them in a terminal, `gpustack explain GSNNN` prints one rule's page.",
        "",
        "| Rule | Severity | Scope | Autofix | Summary |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| [{info.id} {info.name}]({info.id}.md) | {_severity(info)} | {info.scope} | {_yes(info.fixable)} "
        f"| {_cell(info.summary)} |"
        for info in catalogue.values()
    ]
    return "\n".join(lines) + "\n"


def rule_page(info: RuleInfo) -> str:
    """The rule's page on the site: what ``gpustack explain`` prints, marked as generated below
    its heading (a page's title is its first element when that is a heading)."""
    heading, body = rule_markdown(info, level=1).split("\n\n", 1)
    return f"{heading}\n\n{GENERATED}\n\n{body}"


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
    if not example.files:
        return f"{example.description.strip()}{context}\n\n```yaml\n{example.manifest.rstrip()}\n```"
    files = "\n\n".join(f"`{path}`:\n\n```yaml\n{text.rstrip()}\n```" for path, text in example.files.items())
    return f"{example.description.strip()}{context}\n\n{files}"


def _severity(info: RuleInfo) -> str:
    """The default severity; an opt-in rule says it runs only when selected."""
    return f"{info.severity} (opt-in)" if info.opt_in else str(info.severity)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
