"""The generator of gpustack's chart key data: ``python -m gpustack.lint.charts.generate_keys``.

It writes ``data/chart-keys/<chart>.json`` (one file per chart, every version in it: the key
states, the kind of value each key wants where its default tells, and the defaults of declared-only keys) from
packaged charts or chart folders, or from a ``values.yaml`` alone; ``dump`` is the file format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpustack.lint.charts.chartfiles import (
    ChartFiles,
    dead_defaults,
    encode,
    encode_defaults,
    encode_kinds,
    load_yaml,
    read_files,
    states,
    value_kinds,
    values_only,
)
from gpustack.lint.charts.chartkeys import version_key


def generate(packages: list[Path]) -> dict[str, dict[str, Any]]:
    """chart name -> its data file's content, from packaged charts (any versions, any order)."""
    by_chart: dict[str, list[tuple[str, ChartFiles]]] = {}
    for package in packages:
        chart = read_files(package)
        by_chart.setdefault(str(chart.meta["name"]), []).append((str(chart.meta["version"]), chart))
    generated = {}
    for name, found in sorted(by_chart.items()):
        found.sort(key=lambda item: version_key(item[0]))
        columns = [states(chart) for _, chart in found]
        generated[name] = {
            "chart": name,
            "versions": [version for version, _ in found],
            "keys": encode(columns),
            "kinds": encode_kinds([value_kinds(chart, column) for (_, chart), column in zip(found, columns)]),
            "defaults": encode_defaults([dead_defaults(chart, column) for (_, chart), column in zip(found, columns)]),
        }
    return generated


def generate_values_only(values: Path, name: str, version: str) -> dict[str, Any]:
    """The data of a chart gpustack has only the ``values.yaml`` of."""
    return {"chart": name, "versions": [version], "keys": encode([values_only(load_yaml(values.read_text("utf-8")))]), "kinds": [],
            "defaults": []}


def dump(data: Mapping[str, Any]) -> str:
    """Compact JSON, one top-level key per line (small, and diffs stay readable)."""
    keys = ",\n".join(f"{json.dumps(k)}:{json.dumps(v, separators=(',', ':'))}" for k, v in data["keys"].items())
    kinds = json.dumps(data["kinds"], separators=(",", ":"))
    defaults = json.dumps(data["defaults"], separators=(",", ":"))
    return (
        f'{{"chart":{json.dumps(data["chart"])},"versions":{json.dumps(data["versions"])},"keys":{{\n{keys}}},\n'
        f'"kinds":{kinds},\n"defaults":{defaults}}}\n'
    )


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m gpustack.lint.charts.generate_keys",
        description="Write gpustack's chart key data (one JSON file per chart, every version in it) from packaged"
        " charts (.tgz) or chart folders; or from a values.yaml alone (--values-only NAME VERSION).",
    )
    parser.add_argument("charts", nargs="+", type=Path, help="packaged charts (.tgz) or chart folders; or one values.yaml")
    parser.add_argument("--out", type=Path, required=True, help="the folder to write <chart>.json into")
    parser.add_argument("--values-only", nargs=2, metavar=("NAME", "VERSION"), help="read CHARTS[0] as a values.yaml")
    args = parser.parse_args(argv)
    if args.values_only:
        generated = {args.values_only[0]: generate_values_only(args.charts[0], *args.values_only)}
    else:
        generated = generate(args.charts)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in generated.items():
        (args.out / f"{name}.json").write_text(dump(data), "utf-8")
        print(f"{args.out / (name + '.json')}: {len(data['versions'])} versions")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
