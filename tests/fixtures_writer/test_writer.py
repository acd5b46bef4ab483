"""The synthetic packet writer produces valid, deterministic packets driven by the spec constants."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import statistics
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from flarespec.engine.formula import compile_formula
from flarespec.fixtures.writers import write_packet, write_pair

SPEC = Path(__file__).resolve().parents[2] / "specs/flare/bce032c0.yaml"


@pytest.fixture(scope="module")
def spec(flare_spec):
    return flare_spec


@pytest.fixture(scope="module")
def constants(flare_spec) -> dict:
    return flare_spec.constants


@pytest.fixture(scope="module")
def packet_path(spec, tmp_path_factory) -> Path:
    return write_packet(tmp_path_factory.mktemp("default") / "p", spec)


# ----------------------------------------------------------------- helpers


def load(root: Path, relative: str):
    return json.loads((root / relative).read_bytes())


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def sse_events(raw: bytes) -> list[str]:
    """Minimal WHATWG SSE parse (LF only): the data of every dispatched event."""
    events, data = [], []
    for line in raw.decode("utf-8").split("\n"):
        if line == "":
            if data:
                events.append("\n".join(data))
            data = []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            assert name == "data", line
            data.append(value[1:] if value.startswith(" ") else value)
    assert not data, "unterminated trailing event"
    return events


def observations(root: Path):
    """(corpus group, corpus request, sidecar observation) in corpus order."""
    packet = load(root, "packet.json")
    corpus = load(root, packet["corpus"])
    for group in corpus["groups"]:
        for request in group["requests"]:
            base = f"{packet['run']}/{group['id']}/{request['id']}"
            yield group, request, load(root, f"{base}/observation.json")


def expected_ids(constants: dict, repetitions: int) -> list[tuple[str, list[str]]]:
    out = []
    for r in range(repetitions):
        for row in constants["group_matrix"]:
            gid = constants["group_id_format"].format(repetition=r, kind=row["kind"])
            out.append((gid, [constants["request_id_format"].format(group=gid, index=i) for i in range(row["requests"])]))
    return out


def snapshot_values(path: Path) -> dict[str, float]:
    """Unlabelled sample values, parsed by prometheus_client (also proves the text parses)."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(path.read_text(encoding="utf-8")):
        for sample in family.samples:
            if not sample.labels:
                assert sample.name not in values, f"duplicate unlabelled {sample.name}"
                values[sample.name] = sample.value
    return values


# ------------------------------------------------------------ determinism


def test_same_arguments_give_byte_identical_packets(spec, constants, tmp_path):
    first = write_packet(tmp_path / "a", spec, repetitions=2, seed=3).parent
    second = write_packet(tmp_path / "b", spec, repetitions=2, seed=3).parent
    assert tree(first) == tree(second)


# Digest of every (path, SHA-256) of the default packet of the bundled spec, as written before
# the writer moved to the documents-driven layout (issue 7): the move changed no byte. A change
# to the bundled constants or to the writer's contents changes it on purpose: update it then.
DEFAULT_PACKET_TREE_SHA256 = "7a65cc2e01d68758760b271ae927b9ce5c5ad5c0bb600b7a1b434bec267a722c"


def test_the_default_packet_of_the_bundled_spec_is_byte_for_byte_unchanged(packet_path):
    root = packet_path.parent
    listing = "".join(f"{relative} {hashlib.sha256(data).hexdigest()}\n" for relative, data in tree(root).items())
    assert hashlib.sha256(listing.encode()).hexdigest() == DEFAULT_PACKET_TREE_SHA256


def test_writer_refuses_a_non_empty_directory(spec, constants, tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "stale").write_text("left over")
    with pytest.raises(FileExistsError):
        write_packet(tmp_path / "x", spec)


# ---------------------------------------------------------- layout & files


def test_every_contract_section_1_file_is_present(constants, packet_path):
    root = packet_path.parent
    for relative in ("packet.json", "package/flare-package.bin", "corpus.json",
                     "preparation/memory-report.json", "run/measurements.json"):
        assert (root / relative).is_file(), relative
    for gid, request_ids in expected_ids(constants, 1):
        for rid in request_ids:
            for name in ("request.json", "observation.json", "response.sse"):
                assert (root / "run" / gid / rid / name).is_file()
        assert (root / f"run/metrics/{gid}.before.prom").is_file()
        assert (root / f"run/metrics/{gid}.after.prom").is_file()


def test_files_map_lists_exactly_the_referenced_assets_with_their_digests(constants, packet_path):
    root = packet_path.parent
    packet = load(root, "packet.json")
    referenced = {packet["package"], packet["corpus"], packet["memory_report"], packet["measurements"]}
    for before, after in packet["snapshots"].values():
        referenced |= {before, after}
    for group, request, _ in observations(root):
        base = f"{packet['run']}/{group['id']}/{request['id']}"
        referenced |= {f"{base}/request.json", f"{base}/observation.json", f"{base}/response.sse"}
    assert set(packet["files"]) == referenced
    # ... and nothing else is lying around in the packet.
    assert set(tree(root)) - {"packet.json"} == referenced
    for relative, digest in packet["files"].items():
        assert digest == sha(root / relative)


def test_packet_header_comes_from_the_constants(constants, packet_path):
    packet = load(packet_path.parent, "packet.json")
    assert list(packet) == ["schema", "source", "metric", "synthetic", "package", "corpus", "memory_report",
                            "measurements", "run", "snapshots", "files"]
    assert packet["schema"] == constants["packet_schema"]
    assert packet["source"] == constants["source"]
    assert packet["metric"] == constants["metric_contract"]
    assert packet["synthetic"] is True
    assert list(packet["snapshots"]) == [gid for gid, _ in expected_ids(constants, 1)]


def test_synthetic_label_and_package_size(spec, constants, tmp_path):
    header = constants["synthetic_package_header"].encode()
    labelled = write_packet(tmp_path / "s", spec, package_size=10_000).parent
    data = (labelled / "package/flare-package.bin").read_bytes()
    assert data.startswith(header) and len(data) == 10_000
    unlabelled = write_packet(tmp_path / "u", spec, synthetic=False).parent
    assert load(unlabelled, "packet.json")["synthetic"] is False
    assert not (unlabelled / "package/flare-package.bin").read_bytes().startswith(header)


# ------------------------------------------------------------------ corpus


@pytest.mark.parametrize("repetitions", [1, 2])
def test_group_and_request_order_follow_the_matrix(spec, constants, tmp_path, repetitions):
    root = write_packet(tmp_path / "p", spec, repetitions=repetitions).parent
    corpus = load(root, "corpus.json")
    assert corpus["name"] == constants["corpus_name"]
    assert corpus["repetitions"] == repetitions
    assert [(g["id"], [r["id"] for r in g["requests"]]) for g in corpus["groups"]] == expected_ids(constants, repetitions)
    rows = {row["kind"]: row for row in constants["group_matrix"]}
    for group in corpus["groups"]:
        row = rows[group["kind"]]
        assert group["concurrency"] == row["concurrency"]
        assert group["repetition"] == int(group["id"][1:].split(".")[0])
        for request in group["requests"]:
            assert request["prompt_token_count"] == row["prompt_token_count"]
            assert request["max_tokens"] == row["max_tokens"]
    measurements = load(root, "run/measurements.json")
    assert [(g["id"], [o["request_id"] for o in g["observations"]]) for g in measurements["groups"]] == \
        expected_ids(constants, repetitions)


def child_spec(tmp_path: Path, constants: dict, spec_id: str = "flare/next"):
    """A child of the bundled spec overriding ``constants``, compiled from a file."""
    from flarespec.compiler.open import open_compiled

    path = tmp_path / "next.yaml"
    path.write_text(yaml.safe_dump({"flarespec": 1, "id": spec_id, "title": "next revision",
                                    "extends": "flare/bce032c0", "constants": constants},
                                   sort_keys=False))
    return open_compiled(path)


def test_writer_follows_a_modified_spec_without_code_changes(constants, tmp_path):
    # A hypothetical next revision: decode-c4 dropped, ttft-512 has 5 requests, new id style.
    changed = copy.deepcopy(constants)
    changed["group_matrix"] = [row for row in changed["group_matrix"] if row["kind"] != "decode-c4"]
    next(row for row in changed["group_matrix"] if row["kind"] == "ttft-512")["requests"] = 5
    changed["group_id_format"] = "rep{repetition}-{kind}"
    changed["request_id_format"] = "{group}-req{index}"
    changed["corpus_name"] = "flare-http-performance-v2-corpus"
    overrides = {key: changed[key] for key in ("group_matrix", "group_id_format", "request_id_format",
                                                "corpus_name")}
    root = write_packet(tmp_path / "p", child_spec(tmp_path, overrides)).parent
    corpus = load(root, "corpus.json")
    assert corpus["name"] == "flare-http-performance-v2-corpus"
    assert [(g["id"], [r["id"] for r in g["requests"]]) for g in corpus["groups"]] == expected_ids(changed, 1)
    assert "rep0-decode-c4" not in load(root, "packet.json")["snapshots"]
    assert len(corpus["groups"][1]["requests"]) == 5
    hit = next(g for g in corpus["groups"] if g["kind"] == "prefix-hit")
    assert hit["requests"][0]["prefix"]["request"] == "rep0-prefix-seed-req0"


def test_request_json_digest_chain(constants, packet_path):
    root = packet_path.parent
    for group, request, observation in observations(root):
        path = root / "run" / group["id"] / request["id"] / "request.json"
        body = json.loads(path.read_bytes())
        assert body == {"model": "flare-local", "prompt": body["prompt"], "max_tokens": request["max_tokens"],
                        "temperature": 0.0, "stream": True, "stream_options": {"include_usage": True},
                        "ignore_eos": True}
        assert isinstance(body["prompt"], str) and body["prompt"]
        assert request["request_sha256"] == sha(path) == observation["request_sha256"]


def test_prefix_geometry_and_reuse(spec, constants, tmp_path):
    root = write_packet(tmp_path / "p", spec, repetitions=2).parent
    prefix = constants["prefix"]
    expected_reuse = {row["kind"]: row["reused_tokens"] for row in constants["group_matrix"]}
    seeds = {}
    for group, request, observation in observations(root):
        reuse = expected_reuse[group["kind"]]
        assert observation["native"]["reused_prompt_tokens"] == reuse
        assert observation["usage"]["prompt_tokens_details"]["cached_tokens"] == reuse
        if group["kind"] == prefix["seed_kind"]:
            assert request["prefix"]["request"] == request["id"]
            seeds[group["repetition"]] = request
        elif group["kind"] == prefix["hit_kind"]:
            assert reuse == prefix["tokens"] == 4096
            seed = seeds[group["repetition"]]
            assert request["prefix"] == seed["prefix"] == {
                "request": seed["id"], "tokens": prefix["tokens"],
                "prefix_tokens_sha256": seed["prefix"]["prefix_tokens_sha256"]}
            # Same prefix, different full prompts.
            assert request["prompt_tokens_sha256"] != seed["prompt_tokens_sha256"]
        else:
            assert request["prefix"] is None
    assert seeds[0]["prefix"]["prefix_tokens_sha256"] != seeds[1]["prefix"]["prefix_tokens_sha256"]


# ------------------------------------------------------- SSE and sidecars


def test_sse_stream_and_sidecar_agree(constants, packet_path):
    root = packet_path.parent
    report = load(root, "preparation/memory-report.json")
    for group, request, observation in observations(root):
        raw = (root / "run" / group["id"] / request["id"] / "response.sse").read_bytes()
        assert b"\n: keep-alive\n" in raw
        datas = sse_events(raw)
        assert datas[-1] == constants["stream_terminator"]
        chunks = [json.loads(d) for d in datas[:-1]]
        start, tokens, terminal = chunks[0], chunks[1:-1], chunks[-1]
        assert start["choices"][0] == {"index": 0, "text": "", "token_ids": [], "finish_reason": None}
        assert start["usage"] is None and start["flare"] is None
        assert all(c["object"] == constants["response_object"] for c in chunks)
        assert all(c["choices"][0]["token_ids"] for c in tokens)
        assert [c["choices"][0]["finish_reason"] for c in tokens] == \
            [None] * (len(tokens) - 1) + [constants["last_finish_reason"]]
        assert terminal["choices"] == []
        # The sidecar mirrors the stream, event for event.
        assert len(observation["events"]) == len(chunks)
        for seq, (event, chunk) in enumerate(zip(observation["events"], chunks)):
            choice = chunk["choices"][0] if chunk["choices"] else {"token_ids": [], "text": "", "finish_reason": None}
            assert event["seq"] == seq
            assert (event["token_ids"], event["text"], event["finish_reason"]) == \
                (choice["token_ids"], choice["text"], choice["finish_reason"])
        assert observation["usage"] == terminal["usage"]
        assert observation["native"] == terminal["flare"]
        assert (observation["http_status"], observation["done"], observation["error"]) == (200, True, None)
        assert observation["clock_domain"] == constants["client_clock"]
        usage = observation["usage"]
        total = sum(len(e["token_ids"]) for e in observation["events"])
        assert usage["prompt_tokens"] == request["prompt_token_count"] == observation["prompt_token_count"]
        assert usage["completion_tokens"] == request["max_tokens"] == total
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
        native = observation["native"]
        assert native["clock_domain"] == constants["native_clock"]
        assert native["prompt_tokens_sha256"] == request["prompt_tokens_sha256"]
        assert native["prefill_chunk_size"] == report["prefill_chunk_size"]
        assert len(native["token_timestamps_ns"]) == total


def test_timestamps_are_sane_and_in_separate_domains(constants, packet_path):
    ttft = {}
    for group, _, observation in observations(packet_path.parent):
        arrivals = [e["arrival_ns"] for e in observation["events"]]
        assert all(type(a) is int and a > 0 for a in arrivals)
        assert arrivals == sorted(arrivals)
        native = observation["native"]
        stamps = native["token_timestamps_ns"]
        assert native["ingress_ns"] <= native["enqueue_ns"] <= stamps[0]
        assert stamps == sorted(stamps)
        assert native["ingress_ns"] > 10**12 > arrivals[-1]  # native domain far from client domain
        first = next(e["arrival_ns"] for e in observation["events"] if e["token_ids"])
        assert observation["analysis"]["delivery_ttft_ns"] == first
        ttft.setdefault(group["kind"], []).append(first)
    # Tens of ms for 512-token prompts, slower for longer prompts.
    assert 10_000_000 < statistics.median(ttft["ttft-512"]) < 100_000_000
    assert statistics.median(ttft["ttft-4096"]) > statistics.median(ttft["ttft-512"])
    assert ttft["prefill-65536"][0] > statistics.median(ttft["ttft-4096"])


def test_coalesced_events_exist_and_are_summarised(constants, packet_path):
    for _, request, observation in observations(packet_path.parent):
        events = observation["events"]
        coalesced = [{"seq": e["seq"], "tokens": len(e["token_ids"])} for e in events if len(e["token_ids"]) > 1]
        if request["max_tokens"] > 2:
            assert coalesced, request["id"]
        analysis = observation["analysis"]
        assert analysis["coalesced"] == coalesced
        assert analysis["token_events"] == sum(1 for e in events if e["token_ids"])
        assert analysis["tokens"] == request["max_tokens"]


# ------------------------------------------------------------ measurements


def test_measurements_header(constants, packet_path):
    root = packet_path.parent
    measurements = load(root, "run/measurements.json")
    report = load(root, "preparation/memory-report.json")
    assert measurements["schema"] == constants["measurements_schema"]
    assert measurements["corpus"] == {"name": constants["corpus_name"], "sha256": sha(root / "corpus.json")}
    assert measurements["labels"] == {"target_arch": "sm120", "prefill_chunk_size": report["prefill_chunk_size"]}
    assert measurements["qualification"] == {"passed": True, "failures": []}
    for group in measurements["groups"]:
        assert (group["failed"], group["failures"]) == (False, [])
        assert group["summary"]["requests"] == len(group["observations"])


def test_derived_field_only_in_measurements_copy_of_derived_kinds(constants, packet_path):
    root = packet_path.parent
    derived = constants["derived_field"]
    section, key = derived["key"].split(".")
    formula = compile_formula(derived["formula"])
    copies = {o["request_id"]: (g["kind"], o) for g in load(root, "run/measurements.json")["groups"]
              for o in g["observations"]}
    seen_kinds = set()
    for _, request, sidecar in observations(root):
        kind, copied = copies[request["id"]]
        assert key not in sidecar[section]
        if kind in derived["kinds"]:
            seen_kinds.add(kind)
            value = copied[section].pop(key)
            assert isinstance(value, float)
            assert math.isclose(value, formula.evaluate(sidecar), rel_tol=derived["rel_tol"])
        assert copied == sidecar  # everything else is type-strictly identical
    assert seen_kinds == set(derived["kinds"])


def test_unaugmented_copies_are_identical(spec, constants, tmp_path):
    root = write_packet(tmp_path / "p", spec, augment=False).parent
    copies = {o["request_id"]: o for g in load(root, "run/measurements.json")["groups"] for o in g["observations"]}
    for _, request, sidecar in observations(root):
        assert copies[request["id"]] == sidecar


def test_target_arch_sm121(spec, constants, tmp_path):
    root = write_packet(tmp_path / "p", spec, target_arch="sm121").parent
    assert load(root, "preparation/memory-report.json")["target_arch"] == "sm121"
    assert load(root, "run/measurements.json")["labels"]["target_arch"] == "sm121"


def test_memory_report_carries_the_conservation_totals(constants, packet_path):
    report = load(packet_path.parent, "preparation/memory-report.json")
    assert report["schema"] == constants["memory_report_schema"]
    assert (report["prefill_chunk_size"], report["kv_page_tokens"], report["kv_pages_total"],
            report["snapshot_slots_total"]) == (8192, 256, 7314, 32)
    for rule in constants["conservation"]:
        assert type(report[rule["total"]]) is int


# --------------------------------------------------------------- snapshots


def check_snapshot_arithmetic(constants: dict, root: Path) -> None:
    packet = load(root, "packet.json")
    report = load(root, "preparation/memory-report.json")
    counters = constants["counters"]
    reuse = {row["kind"]: row["reused_tokens"] for row in constants["group_matrix"]}
    corpus = {g["id"]: g for g in load(root, "corpus.json")["groups"]}
    previous_after = None
    splits = set()
    for gid, (before_path, after_path) in packet["snapshots"].items():
        before, after = snapshot_values(root / before_path), snapshot_values(root / after_path)
        n = len(corpus[gid]["requests"])
        for values in (before, after):
            for metric in constants["idle_metrics"]:
                assert metric["name"] in values
                if metric["idle"] is not None:
                    assert values[metric["name"]] == metric["idle"]
            for rule in constants["conservation"]:
                assert sum(values[p] for p in rule["parts"]) == report[rule["total"]]
            splits.add(tuple(values[p] for rule in constants["conservation"] for p in rule["parts"]))
        assert after[counters["completed"]] - before[counters["completed"]] == n
        assert after[counters["failed"]] == before[counters["failed"]]
        assert after[counters["cancelled"]] == before[counters["cancelled"]]
        assert after[counters["reused_tokens"]] - before[counters["reused_tokens"]] == n * reuse[corpus[gid]["kind"]]
        if previous_after is not None:  # continuity
            assert all(before[name] == previous_after[name] for name in counters.values())
        previous_after = after
    assert len(splits) > 1  # the free/cached split varies between snapshots


def test_snapshot_counters_conservation_and_continuity(constants, packet_path):
    check_snapshot_arithmetic(constants, packet_path.parent)


def test_snapshots_carry_unrelated_families_and_plain_integer_requirements(constants, packet_path):
    root = packet_path.parent
    text = (root / load(root, "packet.json")["snapshots"]["r0.warmup"][0]).read_text()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert len({tuple(sorted(s.labels.items())) for s in families["flare_http_requests"].samples}) >= 3
    assert any(s.labels.get("le") == "+Inf" for s in families["flare_request_latency_seconds"].samples)
    assert "flare_process_resident_memory_bytes 1.5e+03" in text.splitlines()
    assert any(s.timestamp is not None for s in families["flare_uptime_seconds"].samples)
    for metric in constants["idle_metrics"]:
        lines = [line for line in text.splitlines() if line.split(" ")[0] == metric["name"]]
        assert len(lines) == 1 and lines[0].split(" ")[1].isdigit()
        assert f"# TYPE {metric['name']} {metric['type']}" in text


def test_shared_snapshots_chain(spec, constants, tmp_path):
    root = write_packet(tmp_path / "p", spec, shared_snapshots=True).parent
    packet = load(root, "packet.json")
    pairs = list(packet["snapshots"].values())
    assert pairs[0][0] == "run/metrics/s0.prom"
    for (_, after), (before, _) in zip(pairs, pairs[1:]):
        assert after == before
    snapshot_keys = [k for k in packet["files"] if k.startswith("run/metrics/")]
    assert snapshot_keys == [f"run/metrics/s{k}.prom" for k in range(len(pairs) + 1)]
    check_snapshot_arithmetic(constants, root)


# -------------------------------------------------------------------- pair


def test_write_pair_shares_identity_but_not_timings(spec, constants, tmp_path):
    baseline, candidate = write_pair(tmp_path, spec)
    assert (baseline, candidate) == (tmp_path / "baseline/packet.json", tmp_path / "candidate/packet.json")
    a, b = load(baseline.parent, "packet.json"), load(candidate.parent, "packet.json")
    for field in ("source", "metric", "synthetic"):
        assert a[field] == b[field]
    for field in ("package", "corpus"):
        assert a["files"][a[field]] == b["files"][b[field]]
    assert load(baseline.parent, a["memory_report"]) == load(candidate.parent, b["memory_report"])

    def metric(root: Path) -> float:
        return statistics.median(o["analysis"]["delivery_ttft_ns"] for g, _, o in observations(root)
                                 if g["kind"] == constants["measured_kind"])

    assert metric(baseline.parent) != metric(candidate.parent)


def test_write_pair_candidate_overrides(spec, constants, tmp_path):
    # Same seed, later timings: every candidate arrival is exactly 2 ms later.
    baseline, candidate = write_pair(tmp_path, spec, seed=5, candidate={"seed": 5, "timing_offset_ns": 2_000_000})
    first = [o["events"][0]["arrival_ns"] for *_, o in observations(baseline.parent)]
    second = [o["events"][0]["arrival_ns"] for *_, o in observations(candidate.parent)]
    assert [b - a for a, b in zip(first, second)] == [2_000_000] * len(first)
    assert os.path.samefile(candidate.parent.parent, baseline.parent.parent)
