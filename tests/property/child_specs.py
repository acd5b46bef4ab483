"""Generated child specs of the bundled Flare spec: plausible next revisions.

A child is a list of *edits* (plain tuples, so a failing example reads as data and can be
pinned with ``@example``); ``child_spec`` turns them into the YAML a spec author would write
from docs/editing-specs.md. Each edit is one kind of change a revision makes: a dropped
document, dropped rules, dropped shape members, constants changed within their shapes,
added required members (with an ``example``), inserted and removed matrix rows, renamed
counters (everywhere, or in one constant only) and a renamed derived field.

Some edits make a child that must not lint clean (a counter renamed in ``counters`` only, a
member dropped that a rule reads); the property (test_child_specs.py) does not decide which:
whatever lint says, a clean child must work end to end and a refused one must be told where,
in its own file.
"""

from __future__ import annotations

import copy

import yaml
from hypothesis import strategies as st

PARENT = "flare/bce032c0"
REVISION = "c0ffee15" + "0" * 32

# rules that no other rule `requires` and the metric does not read: dropping one is a choice
# a revision may make (the others' drops are lint errors the property also tolerates)
DROPPABLE_RULES = (
    "request.stream", "response.after-done", "observation.http-status",
    "observation.native.non-negative", "observation.reuse.cached-tokens",
    "measurements.labels.capacity-label", "memory-report.capacity-label",
    "snapshot.counters.continuity", "snapshot.sample.integral", "corpus.request.max-tokens",
)
# members of the parent's shapes: some a rule reads (dropping them must be refused, in the
# child), some no rule reads
DROPPABLE_MEMBERS = (
    ("memory_report", "bytes"), ("native", "prefill_chunk_size"), ("packet", "synthetic"),
    ("corpus_request", "request_sha256"), ("observation", "request_sha256"),
    ("usage", "total_tokens"), ("measurements_group", "summary"),
)
REQUEST_BODY_RULES = ("request.sha256.corpus", "request.sha256.observation",
                      "request.max-tokens", "request.stream")
MANIFEST_RULES = {"packet.files.missing-entry": ("manifest_lists_all", "files lists every referenced asset."),
                  "packet.files.extra-entry": ("manifest_lists_only", "files lists nothing but the referenced assets."),
                  "packet.files.digest": ("manifest_digests", "Every files digest equals the SHA-256 of the file's bytes.")}
MANIFEST = ["package", "corpus", "memory_report", "measurements", "snapshot", "observation",
            "response"]
REMOVABLE_KINDS = ("warmup", "decode-c2", "decode-c4")


def edits() -> st.SearchStrategy:
    """A list of edits, each a tuple (kind, *arguments)."""
    one = st.one_of(
        st.tuples(st.just("drop_request_body"), st.booleans()),
        st.tuples(st.just("drop_rules"), st.lists(st.sampled_from(DROPPABLE_RULES),
                                                  min_size=1, max_size=3, unique=True)
                  .map(tuple)),
        st.tuples(st.just("drop_member"), st.sampled_from(DROPPABLE_MEMBERS)),
        st.tuples(st.just("measured_requests"), st.integers(1, 5)),
        st.tuples(st.just("prefix_tokens"), st.sampled_from((1024, 2048, 8192)), st.booleans()),
        st.tuples(st.just("rel_tol"), st.sampled_from((1e-12, 1e-9, 1e-6))),
        st.tuples(st.just("add_member"), st.sampled_from(("memory_report", "usage")),
                  st.booleans()),
        st.tuples(st.just("insert_kind"), st.integers(1, 3), st.integers(1, 2)),
        st.tuples(st.just("remove_kind"), st.sampled_from(REMOVABLE_KINDS)),
        st.tuples(st.just("rename_counter"), st.sampled_from(("counters", "idle_metrics", "both"))),
        st.tuples(st.just("rename_derived_field"), st.just("analysis.prefill_tokens_per_second_v2")),
    )
    return st.lists(one, min_size=1, max_size=4, unique_by=lambda edit: edit[0]).map(tuple)


def child_spec(parent_constants: dict, chosen: tuple) -> str:
    """The child spec's YAML for the edits ``chosen``."""
    constants = copy.deepcopy(parent_constants)
    child: dict = {"flarespec": 1, "id": "flare/generated", "extends": PARENT,
                   "title": "A generated next revision", "limits": "A generated child spec.",
                   "constants": {"source": dict(constants["source"], revision=REVISION)},
                   "applies_to": {"given": "packet:$.source.revision", "equals": REVISION}}
    for edit in chosen:
        _APPLY[edit[0]](child, constants, *edit[1:])
    return yaml.safe_dump(child, sort_keys=False)


def _override(child: dict, constants: dict, name: str) -> None:
    child["constants"][name] = constants[name]


def _drop_request_body(child, constants, drop_members: bool) -> None:
    child["drop_documents"] = ["request_body"]
    child.setdefault("drop_rules", []).extend(
        rule for rule in REQUEST_BODY_RULES if rule not in child.get("drop_rules", []))
    rules = child.setdefault("rules", [])
    for rule_id, (kind, description) in MANIFEST_RULES.items():
        rules.append({"id": rule_id, "replaces": True, "clause": "2",
                      "description": description, "given": "packet:$.files",
                      "assert": {kind: list(MANIFEST)}})
    if drop_members:
        shapes = child.setdefault("shapes", {})
        for shape in ("corpus_request", "observation"):
            shapes.setdefault(shape, {}).setdefault("drop_members", []).append("request_sha256")


def _drop_rules(child, constants, rule_ids) -> None:
    dropped = child.setdefault("drop_rules", [])
    dropped.extend(rule for rule in rule_ids if rule not in dropped)


def _drop_member(child, constants, shape_member) -> None:
    shape, member = shape_member
    members = child.setdefault("shapes", {}).setdefault(shape, {}).setdefault("drop_members", [])
    if member not in members:
        members.append(member)


def _measured_requests(child, constants, count: int) -> None:
    for row in constants["group_matrix"]:
        if row["kind"] == constants["measured_kind"]:
            row["requests"] = count
    _override(child, constants, "group_matrix")


def _prefix_tokens(child, constants, tokens: int, restate_rows: bool) -> None:
    old = constants["prefix"]["tokens"]
    constants["prefix"]["tokens"] = tokens
    _override(child, constants, "prefix")
    if restate_rows:  # the rows written out, as a spec without derived constants must
        for row in constants["group_matrix"]:
            if row["kind"] in (constants["prefix"]["seed_kind"], constants["prefix"]["hit_kind"]):
                row["prompt_token_count"] += tokens - old
                if row["reused_tokens"]:
                    row["reused_tokens"] = tokens
        _override(child, constants, "group_matrix")


def _rel_tol(child, constants, tolerance: float) -> None:
    constants["derived_field"]["rel_tol"] = tolerance
    _override(child, constants, "derived_field")


def _add_member(child, constants, shape: str, with_example: bool) -> None:
    member = {"type": "integer", "min": 0}
    if with_example:
        member["example"] = 16
    child.setdefault("shapes", {}).setdefault(shape, {}).setdefault(
        "members", {})["added_by_revision"] = member


def _insert_kind(child, constants, position: int, requests: int) -> None:
    matrix = constants["group_matrix"]
    template = next(row for row in matrix if row["kind"] == constants["measured_kind"])
    matrix.insert(position, dict(template, kind="ttft-1024", requests=requests,
                                 prompt_token_count=1024, measured=False))
    _override(child, constants, "group_matrix")


def _remove_kind(child, constants, kind: str) -> None:
    constants["group_matrix"] = [row for row in constants["group_matrix"] if row["kind"] != kind]
    _override(child, constants, "group_matrix")


def _rename_counter(child, constants, where: str) -> None:
    """The reused-tokens counter renamed in ``counters`` (which idle_metrics reads), in a
    restated ``idle_metrics`` only (the two then disagree), or in both."""
    old, new = constants["counters"]["reused_tokens"], "flare_prefix_tokens_reused_total"
    if where in ("counters", "both"):
        constants["counters"]["reused_tokens"] = new
        _override(child, constants, "counters")
    if where in ("idle_metrics", "both"):
        for metric in constants["idle_metrics"]:
            if metric["name"] == old:
                metric["name"] = new
        _override(child, constants, "idle_metrics")


def _rename_derived_field(child, constants, key: str) -> None:
    constants["derived_field"]["key"] = key
    _override(child, constants, "derived_field")


_APPLY = {"drop_request_body": _drop_request_body, "drop_rules": _drop_rules,
          "drop_member": _drop_member, "measured_requests": _measured_requests,
          "prefix_tokens": _prefix_tokens, "rel_tol": _rel_tol, "add_member": _add_member,
          "insert_kind": _insert_kind, "remove_kind": _remove_kind,
          "rename_counter": _rename_counter, "rename_derived_field": _rename_derived_field}
