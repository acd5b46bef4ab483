"""Human-readable summaries for stderr. The receipt, not this text, is the machine contract.

The default summary groups violations by packet and rule and shows a few of each, one
line per violation with its expected and actual values (cut to 80 characters); the
verbose one shows every violation the receipt lists with its place (``file:line`` when the
line is known, else the file and its location), expected and actual values, so that a
person can find the broken byte without opening the receipt.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

MAX_PER_RULE = 5  # violations shown per rule without --verbose
SHORT_VALUE = 80  # characters of an expected or actual value shown without --verbose


def where(entry: dict) -> str:
    """``file:line location`` as far as known; the location is left out when it only
    repeats the line."""
    file, line, location = entry.get("file"), entry.get("line"), entry.get("location")
    if line is not None:
        place = f"{file}:{line}" if file else f"line {line}"
    else:
        place = file
    if location == f"line {line}":
        location = None
    return " ".join(str(part) for part in (place, location) if part)


def _value(value) -> str:
    return json.dumps(value, ensure_ascii=False)


def _details(entry: dict) -> list[str]:
    """The verbose lines under one violation: expected (and where it was read), actual."""
    lines = []
    if "expected" in entry:
        source = entry.get("expected_from")
        origin = f" (from {where(source)})" if isinstance(source, dict) and where(source) else ""
        lines.append(f"          expected{origin}: {_value(entry['expected'])}")
    if "actual" in entry:
        lines.append(f"          actual: {_value(entry['actual'])}")
    if entry.get("binding"):
        lines.append(f"          in: {entry['binding']}")
    return lines


# a value the receipt already shortened (engine.report.shorten): its JSON text, cut
_SHORTENED = re.compile(r"… \((?:\d+ (?:chars|members|items)|[A-Za-z_]\w*)\)\Z")


def _text(value) -> str:
    """JSON text of a value; a value the receipt shortened is that text already."""
    return value if isinstance(value, str) and _SHORTENED.search(value) else _value(value)


def _short(value, limit: int = SHORT_VALUE) -> str:
    """A value as JSON text, cut to ``limit`` characters (its length said) when longer."""
    text = _text(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _short_pair(expected, actual, limit: int = SHORT_VALUE) -> tuple[str, str]:
    """Both values cut to ``limit`` characters; long ones that begin alike are shown from
    a little before where they first differ (``…"revision": "bce0…``), so the cut keeps
    the difference."""
    one, two = _text(expected), _text(actual)
    if max(len(one), len(two)) <= limit:
        return one, two
    same = next((i for i, (a, b) in enumerate(zip(one, two)) if a != b), min(len(one), len(two)))
    start = same - 20 if same > 40 else 0

    def cut(text: str) -> str:
        shown = ("…" if start else "") + text[start:start + limit]
        return shown + (f"… ({len(text)} characters)" if start + limit < len(text) else "")
    return cut(one), cut(two)


def _values(entry: dict) -> str:
    """`` (expected E, actual A)`` for a violation that carries them, each cut to 80
    characters, unless its message already quotes them; two mappings show only the members
    that differ (``pages_total: expected 7000, actual 8000``). The verbose form gives the
    values in full on lines of their own."""
    expected, actual = entry.get("expected"), entry.get("actual")
    if isinstance(expected, dict) and isinstance(actual, dict):
        members = [(key, expected.get(key, _ABSENT), actual.get(key, _ABSENT))
                   for key in sorted(set(expected) | set(actual), key=str)]
        shown = [(f"{key}: ", [("expected", _shown(e)), ("actual", _shown(a))])
                 for key, e, a in members if _value(e) != _value(a) or type(e) is not type(a)]
    elif "expected" in entry and "actual" in entry:
        shown = [("", list(zip(("expected", "actual"), _short_pair(expected, actual))))]
    else:
        shown = [("", [(name, _short(entry[name])) for name in ("expected", "actual")
                       if name in entry])]
    texts = [text for _, pairs in shown for _, text in pairs]
    if not texts or all(text in entry["message"] for text in texts):
        return ""
    return " (" + "; ".join(prefix + ", ".join(f"{name} {text}" for name, text in pairs)
                            for prefix, pairs in shown if pairs) + ")"


_ABSENT = object()


def _shown(value) -> str:
    return "absent" if value is _ABSENT else _short(value)


def _one(entry: dict, verbose: bool) -> list[str]:
    place = where(entry)
    if verbose:
        return [f"      {place + ': ' if place else ''}{entry['message']}"] + _details(entry)
    return [f"      {place + ': ' if place else ''}{entry['message']}{_values(entry)}"]


def _pass_lines(receipt: dict) -> list[str]:
    command = receipt["command"]
    if command == "measure":
        metric = receipt["packet"]["metric"]
        return [f"flarespec {command}: PASS  {metric['key']} = {metric['value']} "
                f"{metric['unit']}"]
    lines = [f"flarespec {command}: PASS"]
    for role in ("baseline", "candidate"):
        metric = receipt["pair"][role].get("metric", {})
        lines.append(f"  {role}: {metric.get('key')} = {metric.get('value')} "
                     f"{metric.get('unit', '')}")
    return lines


def _rejection_lines(receipt: dict, verbose: bool) -> list[str]:
    violations = receipt["violations"]
    by_rule = defaultdict(list)
    for violation in violations:
        by_rule[(violation["packet"], violation["rule"])].append(violation)
    cut = {(row["packet"], row["rule"]): row for row in receipt.get("violations_truncated", [])}
    total = len(violations) + sum(row["total"] - row["kept"] for row in cut.values())
    lines = [f"flarespec {receipt['command']}: REJECTED  {total} violation"
             f"{'s' * (total != 1)} of {len(by_rule)} rule{'s' * (len(by_rule) != 1)}; "
             f"no metric exported"]
    for key, found in by_rule.items():
        row = cut.get(key)
        lines.append(f"  [{key[0]}] {key[1]} ({row['total'] if row else len(found)})")
        shown = found if verbose else found[:MAX_PER_RULE]
        for violation in shown:
            lines.extend(_one(violation, verbose))
        if len(found) > len(shown):
            lines.append(f"      … and {len(found) - len(shown)} more (see the receipt)")
        if row:
            lines.append(f"      … {row['total'] - row['kept']} more not kept "
                         f"(rule {row['rule']}: total {row['total']})")
    return lines


def _warning_lines(receipt: dict, verbose: bool) -> list[str]:
    warnings = receipt.get("warnings") or []
    if not warnings:
        return []
    if not verbose:
        return [f"  warnings: {len(warnings)} (see the receipt)"]
    lines = [f"  warnings: {len(warnings)}"]
    for warning in warnings:
        lines.append(f"  [{warning['packet']}] {warning['rule']}")
        lines.extend(_one(warning, verbose))
    return lines


def render(receipt: dict, output, *, verbose: bool = False) -> str:
    if receipt["status"] == "pass":
        lines = _pass_lines(receipt)
    else:
        lines = _rejection_lines(receipt, verbose)
    lines.extend(_warning_lines(receipt, verbose))
    lines.append(f"receipt: {output}")
    return "\n".join(lines)
