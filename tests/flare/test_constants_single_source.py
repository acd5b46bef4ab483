"""Constants are the single source: a child spec that changes EVERY constant of the bundled
spec still yields packets that pass (the writer follows the constants) and still rejects the
inherited negative cases (the rules follow the constants too).

A rule that spells a constant's value instead of writing ``${...}`` keeps checking the old
value under such a child: the packet written for the child then fails (a false rejection)
or, worse, a broken packet passes (a false PASS). Both fail this test.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from flarespec.adapter.commands import measure
from flarespec.fixtures.mutations import refresh_digests, set_json, set_json_sha256
from flarespec.fixtures.writers import write_packet
from flarespec.authoring.literals import literal_constant_warnings
from flarespec.compiler.load import SpecLibrary, bundled_spec_dir
from flarespec.compiler.resolve import resolve
from flarespec.compiler.tokens import lookup_constant, spelled_names
from flarespec.compiler.yamlmarks import marked_strings

PARENT = "flare/bce032c0"
NEW_REVISION = "2" * 40
KINDS = {"warmup": "warm", "ttft-512": "ttft-1024", "ttft-4096": "ttft-8192",
         "decode-c1": "dec-c2", "decode-c2": "dec-c3", "decode-c4": "dec-c5",
         "prefill-65536": "prefill-32768", "prefix-seed": "pfx-seed", "prefix-hit": "pfx-hit"}
# Per kind: requests, concurrency, prompt_token_count, max_tokens. The prefix pair keeps one
# request each (the seed names itself, the hit names the seed: a pair, not a group) and
# grows its prompts with the prefix: 8192 shared tokens + 256 of their own.
MATRIX = {"warm": (2, 2, 1024, 24), "ttft-1024": (5, 5, 1024, 24),
          "ttft-8192": (2, 2, 8192, 24), "dec-c2": (2, 2, 1024, 128),
          "dec-c3": (3, 3, 1024, 128), "dec-c5": (5, 5, 1024, 128),
          "prefill-32768": (2, 2, 32768, 24), "pfx-seed": (1, 2, 8448, 24),
          "pfx-hit": (1, 2, 8448, 24)}
PREFIX_TOKENS = 8192
PREFIX_OWN_TOKENS = 256

# Leaves that keep their value, and why (dotted paths, `*` for any list position):
UNPERTURBED = {
    # A cold request reuses nothing: 0 is the only valid reuse outside the prefix hit.
    "group_matrix.*.reused_tokens": lambda value: value == 0,
    # The Prometheus type of a sample: each required name keeps its kind (counter / gauge).
    "idle_metrics.*.type": lambda value: True,
    # null = no idle requirement; a number here would have to agree with the writer's
    # nonzero counter baselines and the conservation splits.
    "idle_metrics.*.idle": lambda value: value is None,
    # The prefix pair is one request each (see MATRIX).
    "group_matrix.*.requests": lambda value: value == 1,
    # No rule reads capacity_fields: the pair identity `prepared_capacity` names the memory
    # report fields one by one (an identity is a mapping of refs; the language cannot build
    # one from a list constant). It documents the identity.
    "capacity_fields.*": lambda value: True,
}
# Constants no rule reads, by design: the writer's (response_object: the contract shows the
# chunk `object` but says no *must*, docs/contract.md) and the catalog's (measured_kind),
# and capacity_fields (above). The test still perturbs the first two.
NOT_READ_BY_RULES = {"response_object", "measured_kind", "capacity_fields"}


def renamed_metric(name: str) -> str:
    return name.replace("flare_", "flarex_", 1)


def perturbed(constants: dict) -> dict:
    """Every constant of the bundled spec, changed to another valid value."""
    new = copy.deepcopy(constants)
    new["packet_schema"] = "inferrsi-flare-delivery-packet-v2"
    new["source"] = {
        "repository": "NVIDIA/flare-local-inference-next", "revision": NEW_REVISION,
        "readset": [{"path": "qualify/perf.py", "symbols": ["load_corpus", "stream", "analyze",
                                                            "idle", "main", "extra"]},
                    {"path": "qualify/prov.py", "symbols": ["sha", "record"]},
                    {"path": "qualify/new.py", "symbols": ["added"]}]}
    new["metric_contract"] = {"key": "metrics.client_ttft_ns", "unit": "nanoseconds",
                              "clock_domain": "client.monotonic_ns.elapsed",
                              "grouping": "sse_chunk",
                              "comparison_scope": "flare_http_delivery_ttft_1024"}
    new["synthetic_package_header"] = "FLARE-SYNTHETIC-PACKAGE v2 (no weights)\n"
    new["corpus_name"] = "flare-http-performance-v2-corpus"
    new["measurements_schema"] = "flare-http-performance-v2"
    new["memory_report_schema"] = "flare-preparation-memory-report-v2"
    new["client_clock"] = "client.monotonic_ns.elapsed"
    new["native_clock"] = "flare.native.monotonic_ns"
    new["capacity_labels"] = ["sm130", "sm131", "sm132"]
    new["response_object"] = "text_completion.chunk"
    new["last_finish_reason"] = "max_tokens"
    new["stream_terminator"] = "[END]"
    new["group_id_format"] = "rep{repetition}-{kind}"
    new["request_id_format"] = "{group}-req{index}"
    new["group_matrix"] = [_row(row) for row in constants["group_matrix"]]
    new["prefix"] = {"seed_kind": KINDS[constants["prefix"]["seed_kind"]],
                     "hit_kind": KINDS[constants["prefix"]["hit_kind"]], "tokens": PREFIX_TOKENS}
    new["prefix_own_tokens"] = PREFIX_OWN_TOKENS
    new["measured_kind"] = KINDS[constants["measured_kind"]]
    new["idle_metrics"] = [dict(m, name=renamed_metric(m["name"]),
                                idle=None if m["idle"] is None else m["idle"] + 3)
                           for m in constants["idle_metrics"]]
    new["counters"] = {role: renamed_metric(name) for role, name in constants["counters"].items()}
    new["conservation"] = [
        {"name": f"{law['name']}_pool", "parts": [renamed_metric(p) for p in law["parts"]],
         "total": law["total"].replace("_total", "_count")} for law in constants["conservation"]]
    new["snapshot_phases"] = [{"name": "start"}, {"name": "end"}]
    new["derived_field"] = {
        "key": "analysis.prefill_tokens_per_s",
        "kinds": [KINDS[kind] for kind in constants["derived_field"]["kinds"]] + [KINDS["warmup"]],
        # the writer's summary member is the divisor (rules read it from the formula)
        "formula": "1e9 * prompt_token_count / analysis.delivery_ttft_ns",
        "rel_tol": 1.0e-9}
    return new


def _row(row: dict) -> dict:
    kind = KINDS[row["kind"]]
    requests, concurrency, prompt, max_tokens = MATRIX[kind]
    hit = row["reused_tokens"] > 0
    return {"kind": kind, "requests": requests, "concurrency": concurrency,
            "prompt_token_count": prompt, "max_tokens": max_tokens,
            "measured": not row["measured"], "reused_tokens": PREFIX_TOKENS if hit else 0}


def leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, path + (index,))
    else:
        yield path, value


def exempt(path: tuple, value) -> bool:
    general = ".".join("*" if isinstance(step, int) else step for step in path)
    return any(general == pattern and keeps(value) for pattern, keeps in UNPERTURBED.items())


@pytest.fixture(scope="module")
def bundled():
    library = SpecLibrary([bundled_spec_dir()])
    return resolve(library.get(PARENT), library)


@pytest.fixture(scope="module")
def child(bundled, tmp_path_factory):
    """The child spec (every constant changed), a packet written for it, and the capacity
    the writer needs for the child's renamed and added capacity fields."""
    directory = tmp_path_factory.mktemp("child")
    constants = perturbed(bundled.plain()["constants"])
    spec = {"flarespec": 1, "id": "flare/perturbed", "extends": PARENT,
            "title": "Every constant of the bundled spec changed",
            "applies_to": {"given": "packet:$.source.revision", "equals": "${source.revision}"},
            "constants": constants}
    # the memory report's shape follows the renamed totals, one member each (section 12)
    old_totals = [law["total"] for law in bundled.plain()["constants"]["conservation"]]
    totals = [law["total"] for law in constants["conservation"]]
    spec["shapes"] = {"memory_report": {"drop_members": old_totals,
                                        "members": {total: "integer" for total in totals}}}
    path = directory / "perturbed.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    capacity = {total: 2048 for total in totals}
    return path, constants, capacity


def write(child, directory: Path) -> Path:
    path, _, capacity = child
    return write_packet(directory, path, capacity=capacity)


def rules_of(outcome) -> set[str]:
    return {v["rule"] for v in outcome.receipt["violations"]}


def test_every_constant_is_perturbed(bundled, child):
    _, constants, _ = child
    original = bundled.plain()["constants"]
    assert set(constants) == set(original)
    same = [".".join(map(str, path)) for path, value in leaves(original)
            if not exempt(path, value) and _value_at(constants, path) == value]
    assert same == []


def _value_at(constants: dict, path: tuple):
    try:
        return lookup_constant(constants, ".".join(map(str, path)))
    except KeyError:
        return object()


def test_every_constant_is_read_by_a_rule(bundled):
    """A constant no rule reads is one a child can change without effect: only the three
    declared ones may be unread. A constant another one is computed from (a derived
    constant) is read where that one is."""
    raw = bundled.chain[0].data
    text = json.dumps({key: raw[key] for key in raw if key not in ("constants", "description")})
    derived = {name for value, _ in marked_strings(raw["constants"])
               for name in spelled_names(value)}
    unread = {name for name in raw["constants"]
              if f"${{{name}" not in text and f"constants:$.{name}" not in text
              and f"constants:/{name}" not in text and name not in derived}
    assert unread == NOT_READ_BY_RULES


def test_the_bundled_spec_spells_no_constant(bundled):
    assert [str(issue) for issue in literal_constant_warnings(bundled)] == []


def test_a_packet_for_the_perturbed_child_passes(child, tmp_path):
    path, constants, _ = child
    packet = write(child, tmp_path / "packet")
    outcome = measure(packet, packet, tmp_path / "out" / "r.json", spec_path=path)
    assert outcome.exit_code == 0, outcome.receipt["violations"][:5]
    assert outcome.receipt["metrics"]["client_ttft_ns"] > 0
    corpus = json.loads((packet.parent / "corpus.json").read_text())
    assert corpus["groups"][0]["id"] == "rep0-warm"
    assert corpus["groups"][0]["requests"][1]["id"] == "rep0-warm-req1"


def test_the_bundled_revisions_packet_is_rejected_by_the_child(child, tmp_path):
    path, _, _ = child
    packet = write_packet(tmp_path / "old", PARENT)
    outcome = measure(packet, packet, tmp_path / "r.json", spec_path=path)
    assert {"packet.schema", "packet.source", "corpus.name",
            "corpus.groups.matrix"} <= rules_of(outcome)


def _derived_observation(packet: Path, constants: dict) -> tuple[int, int, str]:
    """(group index, observation index, sidecar path) of a request of a derived kind."""
    measurements = json.loads((packet.parent / "run" / "measurements.json").read_text())
    kinds = constants["derived_field"]["kinds"]
    index = next(i for i, g in enumerate(measurements["groups"]) if g["kind"] == kinds[0])
    group = measurements["groups"][index]
    request = group["observations"][0]["request_id"]
    return index, 0, f"run/{group['id']}/{request}/observation.json"


def _corrupt_derived_value(root: Path, constants: dict) -> None:
    group, request, _ = _derived_observation(root / "packet.json", constants)
    set_json(root, "run/measurements.json",
             f"$.groups[{group}].observations[{request}].analysis.prefill_tokens_per_s", 1.5)


def _plant_derived_field_in_sidecar(root: Path, constants: dict) -> None:
    group, request, sidecar = _derived_observation(root / "packet.json", constants)
    measurements = json.loads((root / "run" / "measurements.json").read_text())
    value = measurements["groups"][group]["observations"][request]["analysis"]["prefill_tokens_per_s"]
    set_json(root, sidecar, "$.analysis.prefill_tokens_per_s", value)


def _group_repetition_disagrees_with_its_id(root: Path, constants: dict) -> None:
    set_json(root, "corpus.json", "$.groups[0].repetition", 1)
    set_json(root, "run/measurements.json", "$.groups[0].repetition", 1)
    set_json_sha256(root, "run/measurements.json", "$.corpus.sha256", of="corpus.json")


def _prefix_hit_fingerprint_differs(root: Path, constants: dict) -> None:
    corpus = json.loads((root / "corpus.json").read_text())
    hit = next(i for i, g in enumerate(corpus["groups"]) if g["kind"] == constants["prefix"]["hit_kind"])
    set_json(root, "corpus.json", f"$.groups[{hit}].requests[0].prefix.prefix_tokens_sha256", "0" * 64)
    set_json_sha256(root, "run/measurements.json", "$.corpus.sha256", of="corpus.json")


def _terminator_missing(root: Path, constants: dict) -> None:
    corpus = json.loads((root / "corpus.json").read_text())
    group = corpus["groups"][0]
    response = root / "run" / group["id"] / group["requests"][0]["id"] / "response.sse"
    text = response.read_text()
    response.write_text(text.replace(f"data: {constants['stream_terminator']}\n\n", ""))


@pytest.mark.parametrize("mutate, rules", [
    (_corrupt_derived_value, {"measurements.observation.derived-value"}),
    (_plant_derived_field_in_sidecar, {"observation.analysis.no-derived-field"}),
    (_group_repetition_disagrees_with_its_id, {"corpus.group.id"}),
    (_prefix_hit_fingerprint_differs, {"corpus.request.prefix-hit"}),
    (_terminator_missing, {"response.done"}),
], ids=["derived-value", "derived-field-in-sidecar", "group-id", "prefix-hit", "terminator"])
def test_inherited_negative_cases_still_reject_under_the_child(child, tmp_path, mutate, rules):
    path, constants, _ = child
    packet = write(child, tmp_path / "packet")
    mutate(packet.parent, constants)
    refresh_digests(packet.parent)
    outcome = measure(packet, packet, tmp_path / "r.json", spec_path=path)
    assert outcome.exit_code == 2
    assert rules_of(outcome) == rules
