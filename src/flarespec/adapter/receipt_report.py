"""A receipt as the one result model: the only reader of a receipt's members.

``measure``/``validate-pair`` render their stderr summary from it, ``check`` its report
(one section per entry, in argument order, then the entry's violations by cause and by
rule), ``flarespec report`` renders a stored receipt in any format, and ``demo`` says what
happened with it. Each violation (and warning) is a finding at its file, made openable by
joining the packet's root (the directory of the packet record's ``entry``) with the
receipt's root-relative ``file``; a violation of no single file (every ``pair`` one) is
placed at the measured packet's entry file. Violations that share a cause
(adapter/causes.py: one missing place, one missing array element) are shown in one section
headed by it, before the others by rule; a violation whose expected value came from another
file its message does not name says what each file holds. Rules are described from the
specs the receipt names when they can be opened (bundled ids), else from their first
message.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from flarespec.adapter.causes import causes
from flarespec.loaders.locations import location_of
from flarespec.output.model import ABSENT, ERROR, NOTE, PASS, WARNING, Finding, Report, \
    Rule, Section
from flarespec.compiler.metaschema import shape_errors

RECEIPT_SCHEMA = "flarespec-receipt-v1"
MAX_PER_RULE = 5  # violations shown per rule by the short human forms
ROLES = {"measure": ("packet", "peer"), "validate-pair": ("baseline", "candidate")}
CHECK = "check"  # its roles are its entries' (entry 1, entry 2, ...), in argument order


class ReceiptUnreadable(Exception):
    """A file that is not a receipt this version reads; the message says why."""


@dataclass(frozen=True)
class ReceiptView:
    """The members of a receipt the reports read, each read in one place."""
    receipt: dict

    @property
    def command(self) -> str:
        return self.receipt["command"]

    @property
    def passed(self) -> bool:
        return self.receipt["status"] == "pass"

    def packet(self, role: str) -> dict:
        if self.command == CHECK:
            return next((record for record in self.entries if record.get("role") == role), {})
        return (self.receipt.get("pair") or {}).get(role) or self.receipt.get(role) or {}

    @property
    def entries(self) -> list[dict]:
        return self.receipt.get("entries") or []

    @property
    def roles(self) -> tuple[str, ...]:
        if self.command == CHECK:
            return tuple(record.get("role") for record in self.entries)
        return ROLES[self.command]

    def root(self, role: str) -> str | None:
        entry = self.packet(role).get("entry")
        return os.path.dirname(entry) if entry else None

    @property
    def anchor(self) -> str | None:
        """The entry file of the packet the command is about (the first role's)."""
        return self.packet(self.roles[0]).get("entry")

    def metric(self, role: str) -> dict | None:
        return self.packet(role).get("metric") if self.passed else None

    @property
    def violations(self) -> list[dict]:
        return self.receipt.get("violations") or []

    @property
    def warnings(self) -> list[dict]:
        return self.receipt.get("warnings") or []

    @property
    def truncated(self) -> dict[tuple[str, str], dict]:
        return {(row["packet"], row["rule"]): row
                for row in self.receipt.get("violations_truncated") or []}

    @property
    def spec_ids(self) -> list[str]:
        return [spec["id"] for spec in (self.receipt.get("validator") or {}).get("specs") or []]


# What the reports read of a receipt, each member with its declared type (docs/receipt.md;
# other members are allowed: adding keys is compatible within v1). Checked before anything
# is rendered, so that a hand-edited or truncated receipt is refused by name, never shown
# half or as a pass it is not.
_TEXT, _OPTIONAL_TEXT = {"type": "string"}, {"type": "string", "nullable": True}
_ENTRY = {"type": "dict", "allow_unknown": True, "schema": {
    "packet": {**_TEXT, "required": True}, "rule": {**_TEXT, "required": True, "empty": False},
    "severity": {**_TEXT, "required": True, "allowed": ["error", "warning"]},
    "message": {**_TEXT, "required": True}, "file": _OPTIONAL_TEXT,
    "line": {"type": "integer", "min": 1, "nullable": True},
    "location": _OPTIONAL_TEXT, "binding": _OPTIONAL_TEXT,
    "expected_from": {"type": "dict", "nullable": True}}}
_METRIC = {"type": "dict", "allow_unknown": True, "schema": {
    "key": {**_TEXT, "required": True}, "value": {"type": "number", "required": True},
    "unit": _TEXT}}
_RECORD = {"type": "dict", "allow_unknown": True, "schema": {
    "entry": {**_TEXT, "required": True}, "spec": _OPTIONAL_TEXT, "metric": _METRIC,
    "same_as_packet": {"type": "boolean"}, "valid": {"type": "boolean"}}}
_ENTRY_RECORD = {"type": "dict", "allow_unknown": True,
                 "schema": {**_RECORD["schema"], "role": {**_TEXT, "required": True}}}
RECEIPT = {
    "receipt_schema": {**_TEXT, "required": True, "allowed": [RECEIPT_SCHEMA]},
    "command": {**_TEXT, "required": True, "allowed": [*ROLES, CHECK]},
    "status": {**_TEXT, "required": True, "allowed": ["pass", "rejected"]},
    "packet": _RECORD, "peer": _RECORD,
    "pair": {"type": "dict", "allow_unknown": True,
             "schema": {"baseline": _RECORD, "candidate": _RECORD}},
    "entries": {"type": "list", "schema": _ENTRY_RECORD},
    "violations": {"type": "list", "required": True, "schema": _ENTRY},
    "warnings": {"type": "list", "required": True, "schema": _ENTRY},
    "violations_truncated": {"type": "list", "schema": {
        "type": "dict", "allow_unknown": True, "schema": {
            "packet": {**_TEXT, "required": True}, "rule": {**_TEXT, "required": True},
            "kept": {"type": "integer", "required": True, "min": 0},
            "total": {"type": "integer", "required": True, "min": 0}}}},
    "validator": {"type": "dict", "allow_unknown": True, "schema": {"specs": {
        "type": "list", "schema": {"type": "dict", "allow_unknown": True,
                                   "schema": {"id": {**_TEXT, "required": True}}}}}},
}


def read_receipt(path: str | Path) -> ReceiptView:
    """A stored receipt, checked to be one before anything is rendered: JSON, ``receipt_schema``
    v1, every member the reports read of its declared type, and a verdict that agrees with
    itself (a pass lists no violation and carries its metric; a rejection lists at least
    one violation and carries no metric). Raises ReceiptUnreadable naming the member."""
    try:
        with open(path, "rb") as handle:
            receipt = json.loads(handle.read())
    except OSError as problem:
        raise ReceiptUnreadable(f"cannot read {path}: {problem.strerror or problem}") from None
    except (UnicodeDecodeError, ValueError) as problem:
        raise ReceiptUnreadable(f"{path} is not JSON: {problem}") from None
    if not isinstance(receipt, dict) or receipt.get("receipt_schema") != RECEIPT_SCHEMA:
        found = receipt.get("receipt_schema") if isinstance(receipt, dict) else type(receipt).__name__
        raise ReceiptUnreadable(f"{path} is not a flarespec receipt (receipt_schema "
                                f"{found!r}, expected {RECEIPT_SCHEMA!r})")
    problems = [f"{location_of(where)}: {message}"
                for where, message in shape_errors(receipt, RECEIPT, allow_unknown=True)]
    if not problems:
        problems = _verdict_problems(ReceiptView(receipt))
    if problems:
        raise ReceiptUnreadable(f"{path} is not a receipt this version reads: "
                                + "; ".join(problems))
    return ReceiptView(receipt)


def _verdict_problems(view: ReceiptView) -> list[str]:
    """What a well-typed receipt may still get wrong: a role's record missing, a pass with
    violations or without its metric, a rejection without a violation or with a metric.
    The metric is optional (a spec may declare none), except in a ``measure`` pass, which
    exports it; a ``validate-pair`` pass carries it in both records or in neither (both
    packets follow one spec). A ``check``: :func:`_check_problems`."""
    if view.command == CHECK:
        return _check_problems(view)
    where = {"measure": "$.{role}", "validate-pair": "$.pair.{role}"}[view.command]
    problems = [f"{where.format(role=role)}: required for {view.command}"
                for role in view.roles if not view.packet(role)]
    if problems:
        return problems
    if view.passed:
        if view.violations:
            problems.append("$.violations: a pass lists no violation")
        if view.command == "measure":
            problems += [f"{where.format(role=role)}.metric: a measure pass carries its "
                         f"metric" for role in view.roles[:1] if "metric" not in view.packet(role)]
        else:
            lacking = [role for role in view.roles if "metric" not in view.packet(role)]
            if len(lacking) == 1:
                problems.append(f"{where.format(role=lacking[0])}.metric: a pass carries the "
                                f"metric in both records or in neither (both packets follow "
                                f"one spec)")
    else:
        if not view.violations:
            problems.append("$.violations: a rejection lists at least one violation")
        if "metrics" in view.receipt or any("metric" in view.packet(r) for r in view.roles):
            problems.append("a rejection carries no metric")
    return problems


def _check_problems(view: ReceiptView) -> list[str]:
    """A ``check`` receipt: at least one entry, each role once; a pass lists no violation and
    only valid entries (a metric is where an entry's spec declares one); a rejection lists
    at least one violation and carries no metric."""
    roles = view.roles
    if not roles:
        return ["$.entries: required for check (one record per entry file)"]
    if len(set(roles)) != len(roles):
        return ["$.entries: each role appears once"]
    problems = []
    if view.passed:
        if view.violations:
            problems.append("$.violations: a pass lists no violation")
        problems += [f"$.entries[{index}].valid: a pass holds only valid entries"
                     for index, record in enumerate(view.entries)
                     if record.get("valid") is False]
    else:
        if not view.violations:
            problems.append("$.violations: a rejection lists at least one violation")
        if "metrics" in view.receipt or any("metric" in record or "metrics" in record
                                            for record in view.entries):
            problems.append("a rejection carries no metric")
    return problems


def metric_sentence(view: ReceiptView, role: str) -> str:
    """``KEY = VALUE UNIT`` of a passing packet, or that its spec declares no metric."""
    metric = view.metric(role)
    if metric is None:
        return f"no metric (spec {view.packet(role).get('spec')} declares none)"
    return f"{metric.get('key')} = {metric.get('value')} {metric.get('unit', '')}".rstrip()


def _finding(view: ReceiptView, entry: dict, cause: str | None = None) -> Finding:
    root = view.root(entry.get("packet"))
    shown = entry.get("file")
    file = os.path.join(root, shown) if shown and root else None
    facts = []
    source = entry.get("expected_from")
    if isinstance(source, dict):
        origin = " ".join(str(source[k]) for k in ("file", "line", "location") if source.get(k))
        if origin:
            facts.append(("expected from", origin))
    if entry.get("binding"):
        facts.append(("in", str(entry["binding"])))
    return Finding(
        rule=entry["rule"], message=_message(entry),
        level=ERROR if entry.get("severity", "error") == "error" else WARNING,
        file=file, shown_file=shown, line=entry.get("line"), location=entry.get("location"),
        expected=entry.get("expected", ABSENT), actual=entry.get("actual", ABSENT),
        facts=tuple(facts), title=f"[{entry.get('packet')}] {entry['rule']}", cause=cause,
        key=(entry.get("packet"), entry["rule"], shown, entry.get("location"),
             entry.get("binding"), entry["message"]))


def _message(entry: dict) -> str:
    """The violation's message; when its expected value was read from another file that
    the message does not name (one copy compared with another), what each file holds, so
    that both files are named in every form (the receipt keeps the message as it is):
    ``…: run/b.json has 200, run/a.json $.status (line 3) has 201``."""
    from flarespec.output.text import short

    message, source, own = entry["message"], entry.get("expected_from"), entry.get("file")
    other = source.get("file") if isinstance(source, dict) else None
    if not other or other == own or other in message:
        return message
    where = " ".join(str(part) for part in (other, source.get("location")) if part)
    where += f" (line {source['line']})" if source.get("line") else ""
    if own and "expected" in entry and "actual" in entry:
        return (f"{message}: {own} has {short(entry['actual'])}, "
                f"{where} has {short(entry['expected'])}")
    return f"{message} (the expected value is read from {where})"


def _sections(view: ReceiptView, entries: list[dict]) -> list[Section]:
    by_rule: dict[tuple, list[dict]] = defaultdict(list)
    for entry in entries:
        by_rule[(entry.get("packet"), entry["rule"])].append(entry)
    cut = view.truncated
    sections = []
    for (packet, rule), found in by_rule.items():
        row = cut.get((packet, rule))
        sections.append(Section(f"[{packet}] {rule} ({row['total'] if row else len(found)})",
                                [_finding(view, entry) for entry in found], _not_kept(row),
                                rule=rule, limit=MAX_PER_RULE, more=" (see the receipt)"))
    return sections


def _not_kept(row: dict | None) -> list[str]:
    return [f"… {row['total'] - row['kept']} more not kept (rule {row['rule']}: total "
            f"{row['total']})"] if row else []


def _grouped(view: ReceiptView, violations: list[dict], warnings: list[dict]
             ) -> tuple[list[Section], list[dict]]:
    """The sections of violations that share a cause (adapter/causes.py: one section per
    cause, headed by its summary, warnings at its place with it), then the other violations
    by rule; and the warnings no cause took. A rule whose kept violations all went under
    causes has its not-kept note in its first cause's section."""
    entries = violations + warnings
    sections, taken, grouped = [], set(), []
    for cause in causes(entries):
        members = [entries[i] for i in cause.members]
        taken.update(cause.members)
        grouped.append(members)
        sections.append(Section(f"[{members[0].get('packet')}] cause: {cause.summary}",
                                [_finding(view, entry, cause.summary) for entry in members],
                                limit=MAX_PER_RULE, more=" (see the receipt)"))
    rest = [entry for i, entry in enumerate(violations) if i not in taken]
    noted = {(entry.get("packet"), entry["rule"]) for entry in rest}  # noted by their section
    for section, members in zip(sections, grouped):
        for rule in dict.fromkeys((entry.get("packet"), entry["rule"]) for entry in members):
            if rule not in noted and (row := view.truncated.get(rule)):
                section.notes += _not_kept(row)
                noted.add(rule)
    left = [entry for i, entry in enumerate(warnings, len(violations)) if i not in taken]
    return sections + _sections(view, rest), left


def _passes(view: ReceiptView) -> Section:
    """One passing check per packet (and the pair), for the formats that list passes."""
    roles = view.roles if not view.receipt.get("peer", {}).get("same_as_packet") else view.roles[:1]
    found = [Finding("packet.valid", f"{role} valid against {view.packet(role).get('spec')}",
                     level=NOTE, kind=PASS, file=view.packet(role).get("entry"),
                     title=f"[{role}] valid") for role in roles]
    return Section(None, found)


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else many or word + 's'}"


def _entry_sections(view: ReceiptView) -> tuple[list[Section], list[dict]]:
    """A ``check``: per entry, in argument order, a section saying its verdict (its pass
    counted by the formats that list passes, its metric if any), then its violations by
    cause and rule; and the warnings no cause took."""
    sections, left = [], []
    for role in view.roles:
        record = view.packet(role)
        spec = record.get("spec")
        own = [entry for entry in view.violations if entry.get("packet") == role]
        if record.get("valid"):
            verdict = f"valid against {spec}"
        else:
            rules = {entry["rule"] for entry in own}
            verdict = (f"REJECTED ({'spec ' + spec if spec else 'no spec'}): "
                       f"{_plural(len(own), 'violation')} of {_plural(len(rules), 'rule')}")
        heading = f"{role} {_shown_path(record.get('entry'))}: {verdict}"
        passes = [Finding("entry.valid", f"{role} valid against {spec}", level=NOTE,
                          kind=PASS, file=record.get("entry"), title=f"[{role}] valid")] \
            if record.get("valid") else []
        notes = [f"{metric_sentence(view, role)}"] if view.metric(role) else []
        sections.append(Section(heading, passes, notes))
        grouped, warnings = _grouped(view, own, [entry for entry in view.warnings
                                                 if entry.get("packet") == role])
        sections += grouped
        left += warnings
    return sections, left


def _shown_path(entry: str | None) -> str:
    """An entry's path as people typed it, near enough: relative to the current directory
    when it lies below it, else absolute."""
    if not entry:
        return "?"
    relative = os.path.relpath(entry) if os.path.isabs(entry) else entry
    return entry if relative.startswith(os.pardir) else relative


def _check_title(view: ReceiptView) -> str:
    count = len(view.roles)
    if view.passed:
        return f"flarespec check: PASS  {_plural(count, 'entry', 'entries')} valid"
    rejected = sum(1 for role in view.roles if not view.packet(role).get("valid"))
    rules = {(v.get("packet"), v["rule"]) for v in view.violations}
    total = len(view.violations) + sum(row["total"] - row["kept"]
                                       for row in view.truncated.values())
    return (f"flarespec check: REJECTED  {rejected} of {_plural(count, 'entry', 'entries')}; "
            f"{_plural(total, 'violation')} of {_plural(len(rules), 'rule')}")


def _title(view: ReceiptView) -> str:
    command = view.command
    if command == CHECK:
        return _check_title(view)
    if view.passed:
        if command == "measure":
            return f"flarespec {command}: PASS  {metric_sentence(view, 'packet')}"
        return f"flarespec {command}: PASS"
    rules = {(v.get("packet"), v["rule"]) for v in view.violations}
    cut = view.truncated
    total = len(view.violations) + sum(row["total"] - row["kept"] for row in cut.values())
    return (f"flarespec {command}: REJECTED  {total} violation{'s' * (total != 1)} of "
            f"{len(rules)} rule{'s' * (len(rules) != 1)}; no metric exported")


def receipt_report(view: ReceiptView, output: str | Path | None = None, *,
                   rules: dict[str, Rule] | None = None) -> Report:
    """The receipt as a report: its violations by cause (adapter/causes.py), the others
    by packet and rule, its other warnings under ``warnings: N``, the metrics of a passing
    pair, the receipt's path as the footer."""
    if view.command == CHECK:
        sections, warnings = _entry_sections(view)
    else:
        sections = [_passes(view)] if view.passed else []
        if view.passed and view.command == "validate-pair":
            sections[0].notes = [f"{role}: {metric_sentence(view, role)}" for role in view.roles]
        grouped, warnings = _grouped(view, view.violations, view.warnings)
        sections += grouped
    if warnings:
        elsewhere = len(view.warnings) - len(warnings)
        sections.append(Section(
            f"warnings: {len(warnings)}" + (f" (and {elsewhere} under a cause above)"
                                            if elsewhere else ""),
            [_finding(view, entry) for entry in warnings], limit=MAX_PER_RULE,
            more=" (see the receipt)"))
    footer = [f"receipt: {output}"] if output is not None else []
    return Report(view.command, _title(view), view.passed, sections, footer,
                  rules=rules if rules is not None else spec_rules(view.spec_ids),
                  data={"receipt": view.receipt}, anchor=view.anchor)


def _engine_rules() -> dict[str, Rule]:
    """The rule ids no spec declares (docs/receipt.md), described once."""
    from flarespec.adapter.commands import NO_METRIC, PEER_INVALID, SAME_SPEC
    from flarespec.adapter.select import SPEC_INVALID, UNSUPPORTED
    from flarespec.engine.problems import INTERNAL_ERROR, METRIC_UNAVAILABLE

    said = {UNSUPPORTED: "No spec applies to the entry file (the message names the specs tried "
                         "and their conditions).",
            SPEC_INVALID: "The --spec file is broken or unreadable.",
            PEER_INVALID: "The peer packet is invalid, so the measured packet exports no metric.",
            SAME_SPEC: "Both packets must be validated against the same spec.",
            METRIC_UNAVAILABLE: "The metric could not be computed from the evidence.",
            NO_METRIC: "The spec declares no metric, and measure exports one for the runner.",
            INTERNAL_ERROR: "A bug, or an input no check foresaw: it rejects, it never passes."}
    return {rule: Rule(rule, text, f"{text} Engine-level rule: docs/receipt.md.")
            for rule, text in said.items()}


def spec_rules(spec_ids: list[str], specs=()) -> dict[str, Rule]:
    """Each rule of the named specs (those at hand in ``specs``, e.g. a check's from spec
    directories, and those that open: bundled ids) described by its own description and
    contract clause, its pair rules too, and the engine-level rules."""
    from flarespec.compiler.errors import SpecInvalid
    from flarespec.compiler.open import open_compiled

    described: dict[str, Rule] = _engine_rules()
    at_hand = {spec.id: spec for spec in specs}
    for spec_id in spec_ids:
        try:
            compiled = at_hand.get(spec_id) or open_compiled(spec_id)
        except (SpecInvalid, OSError, ValueError):
            continue
        declared = [(rule.id, rule.description, rule.clause) for rule in compiled.rules]
        declared += [(entry["id"], entry.get("description") or entry["id"], entry.get("clause"))
                     for entry in compiled.pair]
        for rule_id, description, clause in declared:
            where = f" (contract {clause})" if clause else ""
            described.setdefault(rule_id, Rule(
                rule_id, description.splitlines()[0][:200],
                f"{description}{where}. Rule of spec {compiled.id}; "
                f"`flarespec spec show {compiled.id}` prints it."))
    return described


def summary(receipt: dict, output: str | Path | None, *, verbose: bool = False) -> str:
    """The runner commands' stderr summary: the receipt's report in the text format, its
    its rules not described (a summary lists none; no spec is opened for it)."""
    from flarespec.output import text

    return text.render(receipt_report(ReceiptView(receipt), output, rules={}), verbose=verbose)

