"""Human-readable summaries for stderr. The receipt, not this text, is the machine contract."""

from __future__ import annotations

from collections import defaultdict

MAX_PER_RULE = 5


def render(receipt: dict, output) -> str:
    command, status = receipt["command"], receipt["status"]
    lines = []
    if status == "pass":
        if command == "measure":
            metric = receipt["packet"]["metric"]
            lines.append(f"flarespec {command}: PASS  {metric['key']} = {metric['value']} "
                         f"{metric['unit']}")
        else:
            lines.append(f"flarespec {command}: PASS")
            for role in ("baseline", "candidate"):
                metric = receipt["pair"][role].get("metric", {})
                lines.append(f"  {role}: {metric.get('key')} = {metric.get('value')} "
                             f"{metric.get('unit', '')}")
    else:
        violations = receipt["violations"]
        by_rule = defaultdict(list)
        for violation in violations:
            by_rule[(violation["packet"], violation["rule"])].append(violation)
        lines.append(f"flarespec {command}: REJECTED  {len(violations)} violation"
                     f"{'s' * (len(violations) != 1)} of {len(by_rule)} rule"
                     f"{'s' * (len(by_rule) != 1)}; no metric exported")
        for (packet, rule), found in by_rule.items():
            lines.append(f"  [{packet}] {rule} ({len(found)})")
            for violation in found[:MAX_PER_RULE]:
                where = " ".join(str(part) for part in (violation.get("file"),
                                                         violation.get("location")) if part)
                lines.append(f"      {where + ': ' if where else ''}{violation['message']}")
            if len(found) > MAX_PER_RULE:
                lines.append(f"      … and {len(found) - MAX_PER_RULE} more (see the receipt)")
    if receipt.get("warnings"):
        lines.append(f"  warnings: {len(receipt['warnings'])} (see the receipt)")
    lines.append(f"receipt: {output}")
    return "\n".join(lines)
