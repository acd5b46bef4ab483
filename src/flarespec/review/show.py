"""``spec show``: a resolved spec as a reviewer reads it.

Id and title come first; each rule is marked with what the spec itself did to it relative to
its parent (``rule_status``: inherited, overridden, added, renamed), so a child's effect on
the contract is visible without opening the chain of files, and, when the spec compiles,
with where it runs (``rule_runs``, engine/schedule.py: per element of the streamed iteration,
before or after its elements), so an author sees a rule that re-reads released documents.
"""

from __future__ import annotations

import json

import yaml

from flarespec.compiler.resolve import ResolvedSpec

_FIRST = ("id", "title")


def ordered(resolved: ResolvedSpec) -> dict:
    data = resolved.plain()
    return {**{key: data[key] for key in _FIRST if key in data},
            **{key: value for key, value in data.items() if key not in _FIRST}}


def status_text(status: dict | None) -> str:
    """``added by x/y``, ``renamed from old.id by x/y``, ``inherited from x/y`` …"""
    if not status:
        return "added"
    word = status["status"]
    if word == "renamed":
        return f"renamed from {status.get('from')} by {status['spec']}"
    preposition = "from" if word == "inherited" else "by"
    return f"{word} {preposition} {status['spec']}"


def render_json(resolved: ResolvedSpec, runs: dict[str, str] | None = None) -> str:
    """``runs``: rule id -> where it runs (``schedule.placements``), when the spec compiles."""
    data = ordered(resolved)
    data["rule_status"] = {rule["id"]: resolved.rule_status.get(rule["id"], {})
                           for rule in data.get("rules", [])}
    if runs is not None:
        data["rule_runs"] = {rule["id"]: runs.get(rule["id"]) for rule in data.get("rules", [])}
    return json.dumps(data, indent=2)


def render_yaml(resolved: ResolvedSpec, runs: dict[str, str] | None = None) -> str:
    data = ordered(resolved)
    rules = data.pop("rules", [])
    parts = [_dump(data).rstrip("\n"), "rules:"]
    for rule in rules:
        rule = {"id": rule["id"], **{k: v for k, v in rule.items() if k != "id"}}
        if runs is not None and runs.get(rule["id"]):
            parts.append(f"# runs {runs[rule['id']]}")
        parts.append(f"# {status_text(resolved.rule_status.get(rule['id']))}")
        parts.append(_dump([rule]).rstrip("\n"))
    return "\n".join(parts)


def _dump(value) -> str:
    return yaml.safe_dump(value, sort_keys=False, allow_unicode=True, width=100)
