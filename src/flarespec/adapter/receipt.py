"""Receipts: the machine contract of a run, written atomically.

Schema ``flarespec-receipt-v1`` is documented in docs/receipt.md. A receipt holds a metric
value only when its status is "pass"; a rejection carries every violation and no metric,
no samples, no per-packet values.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
from pathlib import Path

import flarespec
from flarespec.engine.hooks import module_digest

RECEIPT_SCHEMA = "flarespec-receipt-v1"


def nest(dotted_key: str, value) -> dict:
    """``a.b.c`` -> {"a": {"b": {"c": value}}}."""
    result = value
    for part in reversed(dotted_key.split(".")):
        result = {part: result}
    return result


def validator_identity(results) -> dict:
    specs = {}
    hooks = {}
    for result in results:
        spec = result.spec
        if spec is None:
            continue
        specs[spec.id] = {
            "id": spec.id,
            "resolved_sha256": spec.resolved.digest(),
            "files": [{"path": str(f.path), "id": f.id, "sha256": f.digest}
                      for f in spec.resolved.chain],
        }
        for module in sorted(spec.hook_modules):
            hooks[module] = {"module": module, "sha256": module_digest(module)}
    return {"name": "flarespec", "version": flarespec.__version__,
            "python": platform.python_version(),
            "specs": list(specs.values()), "hooks": list(hooks.values())}


def packet_record(result, *, with_values: bool) -> dict:
    entry = Path(result.entry)
    record = {
        "role": result.role,
        "entry": str(entry.resolve()) if entry.exists() else str(entry),
        "valid": result.ok,
        "spec": result.spec.id if result.spec else None,
    }
    report = result.report
    entry_digest = report.files.get(entry.name)
    record["entry_sha256"] = entry_digest
    record["files"] = {path: digest for path, digest in sorted(report.files.items())
                       if path != entry.name}
    record["identities"] = report.identities
    if with_values and report.metric is not None:
        record["metric"] = {key: report.metric[key]
                            for key in ("key", "unit", "value", "contract", "samples",
                                        "details")}
    return record


def _violations(results, pair_violations) -> tuple[list, list]:
    violations, warnings = [], []
    for result in results:
        for violation in result.violations:
            violations.append({"packet": result.role, **violation.as_dict()})
        for warning in result.report.warnings:
            warnings.append({"packet": result.role, **warning.as_dict()})
    violations.extend({"packet": "pair", **v.as_dict()} for v in pair_violations)
    return violations, warnings


def _limits(results) -> str:
    for result in results:
        if result.spec is not None and result.spec.resolved.data.get("limits"):
            return " ".join(result.spec.resolved.data["limits"].split())
    return ("An offline contract check of captured evidence; not a measurement of service "
            "quality or performance.")


def _unique(first, second) -> list:
    return [first] if second is first else [first, second]


def _header(command: str, passed: bool) -> dict:
    return {"receipt_schema": RECEIPT_SCHEMA, "command": command,
            "status": "pass" if passed else "rejected"}


def _trailer(results, pair_violations) -> dict:
    violations, warnings = _violations(results, pair_violations)
    return {"violations": violations, "warnings": warnings,
            "validator": validator_identity(results), "limits": _limits(results)}


def _metric_value(result) -> dict:
    return nest(result.report.metric["key"], result.report.metric["value"])


def measure_receipt(own, peer, pair_violations, passed: bool) -> dict:
    receipt = _header("measure", passed)
    if passed:
        receipt.update(_metric_value(own))
    receipt["packet"] = packet_record(own, with_values=passed)
    receipt["peer"] = packet_record(peer, with_values=False)
    receipt["peer"]["same_as_packet"] = peer is own
    receipt.update(_trailer(_unique(own, peer), pair_violations))
    return receipt


def pair_receipt(baseline, candidate, pair_violations, passed: bool) -> dict:
    receipt = _header("validate-pair", passed)
    receipt["pair"] = {}
    for role, result in (("baseline", baseline), ("candidate", candidate)):
        receipt["pair"][role] = packet_record(result, with_values=passed)
        if passed:
            receipt["pair"][role].update(_metric_value(result))
    receipt.update(_trailer(_unique(baseline, candidate), pair_violations))
    return receipt


def write_atomically(target: Path, receipt: dict) -> None:
    """Write to a temporary file beside the target, fsync, then rename over it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(receipt, indent=2, sort_keys=False, allow_nan=False) + "\n"
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                                         dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
