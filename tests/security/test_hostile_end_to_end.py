"""End-to-end hostile cases of issue 6 (defects 1-12), as the runner would meet them.

Every case (built by hostile.py) runs `python -m flarespec measure` as a subprocess under
the issue's bounds - killed after 40 s, RLIMIT_AS 1.5 GiB - and must end with:
  * an admitted exit code (2, or 0 where the packet is in fact valid), no traceback;
  * the packet roots byte-identical (paths, modes, bytes, link targets);
  * a receipt whose status matches the exit code, with the expected rule ids, no internal
    error, no metric on rejection, at most MAX_KEPT_PER_RULE violations per packet and rule
    (the cut ones counted under violations_truncated) - or, for a refused output, nothing
    written: the output path and its directory exactly as they were;
  * wall time < 40 s and peak RSS < 1.5 GiB (printed per case; run with -s to see them).
Cases marked `slow` build or read tens of megabytes; deselect them with -m "not slow".
"""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from pathlib import Path

import pytest
from hostile import (
    CASES,
    MEMORY_LIMIT_BYTES,
    NEEDS_MKNOD,
    NEEDS_UNPRIVILEGED,
    PEER_INVALID,
    RECEIPT_BYTES_AT_MOST,
    REFUSED,
    SLOW,
    TIME_LIMIT_S,
    Case,
    copy_packet,
    delivery_ttft_median,
    make_null_device,
    measure_args,
    output_private_null_device,
    output_state,
    rule_admitted,
    run_bounded,
    tree_digest,
)

from flarespec.engine.outcome import MAX_KEPT_PER_RULE
from flarespec.fixtures.writers import write_pair

INTERNAL_ERROR = "engine.internal-error"
DEV_NULL = Path("/dev/null")
NULL_DEVICE = os.makedev(1, 3)


@pytest.fixture(scope="module")
def template(tmp_path_factory, flare_spec) -> Path:
    directory = tmp_path_factory.mktemp("hostile-template")
    write_pair(directory, flare_spec)
    return directory


def _build(name: str, template: Path, work: Path) -> Case:
    if name in NEEDS_UNPRIVILEGED and os.geteuid() == 0:
        pytest.skip("runs as root, which reads and searches regardless of permission bits")
    try:
        return CASES[name](template, work)
    except PermissionError as denied:
        if name in NEEDS_MKNOD:
            pytest.skip(f"cannot create a device node here: {denied}")
        raise


def _all_keys(value):
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            yield from node
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _check_bounded(receipt: dict, truncated: bool) -> None:
    """At most MAX_KEPT_PER_RULE violations per packet and rule; every cut rule is listed
    with its total (issue 6 defect 10)."""
    kept = Counter((v["packet"], v["rule"]) for v in receipt["violations"] + receipt["warnings"])
    crowded = {key: n for key, n in kept.items() if n > MAX_KEPT_PER_RULE}
    assert not crowded, f"more than {MAX_KEPT_PER_RULE} violations kept: {crowded}"
    cut = receipt.get("violations_truncated", [])
    for row in cut:
        assert row["kept"] == kept[(row["packet"], row["rule"])] <= MAX_KEPT_PER_RULE < row["total"], row
    assert bool(cut) == truncated, f"violations_truncated: {cut}"


def _check_receipt(case: Case, exit_code: int) -> None:
    data = case.output.read_bytes()
    assert len(data) <= RECEIPT_BYTES_AT_MOST, f"receipt of {len(data)} bytes"
    receipt = json.loads(data)
    violations = receipt["violations"]
    errors = Counter(v["rule"] for v in violations if v["severity"] == "error")
    summary = "\n".join(f"  {v['packet']}: {v['rule']} {v.get('file')} @ {v.get('location')}: "
                        f"{str(v['message'])[:140]}" for v in violations[:40])
    assert INTERNAL_ERROR not in errors, summary
    _check_bounded(receipt, case.expect.truncated)
    if exit_code == 0:
        assert receipt["status"] == "pass" and violations == [], summary
        assert receipt["metrics"] == {"delivery_ttft_ns": delivery_ttft_median(case.packet)}
        return
    assert receipt["status"] == "rejected", summary
    assert not {"metric", "metrics"} & set(_all_keys(receipt)), "a rejection carries a metric"
    expect = case.expect
    assert expect.required <= set(errors), f"missing {sorted(expect.required - set(errors))}\n{summary}"
    if expect.allowed is not None:
        stray = sorted(r for r in errors if r != PEER_INVALID and not rule_admitted(r, expect.allowed))
        assert not stray, f"unexpected rules {stray} (admitted: {expect.allowed})\n{summary}"
    if expect.invalid is not None:
        roles = {v["packet"] for v in violations if v["packet"] != "pair"}
        assert roles == set(expect.invalid), f"invalid roles {sorted(roles)}\n{summary}"


def run_and_check(case: Case, *, compare_listing: bool = True):
    """Run one case under the bounds and check every invariant of the module docstring."""
    roots = {root: tree_digest(root) for root in case.roots}
    output_before = output_state(case.output)
    run = run_bounded(measure_args(case))
    print(f"\n{case.name} (defect {case.defect}): exit {run.exit_code}, {run.wall_s:.2f} s, "
          f"peak RSS {run.max_rss_bytes / 2**20:.0f} MiB")
    assert run.exit_code is not None, f"{case.name}: still running after {TIME_LIMIT_S} s (killed)"
    assert "Traceback" not in run.stderr + run.stdout, run.stderr[-3000:]
    assert run.wall_s < TIME_LIMIT_S
    assert run.max_rss_bytes < min(MEMORY_LIMIT_BYTES, case.expect.memory_bytes), (
        f"peak RSS {run.max_rss_bytes} bytes")
    assert run.exit_code in case.expect.exits, f"exit {run.exit_code}\n{run.stderr[-3000:]}"
    for root, digest in roots.items():
        assert tree_digest(root) == digest, f"{root} changed"
    if case.expect.receipt:
        _check_receipt(case, run.exit_code)
    else:
        after = output_state(case.output)
        assert after[0] == output_before[0], f"{case.output} was replaced or created"
        if compare_listing:
            assert after[1] == output_before[1], f"files appeared beside {case.output}"
        assert run.stderr.strip(), "a refused output must say why"
    if case.after is not None:
        case.after()
    return run


def _param(name: str):
    return pytest.param(name, id=name, marks=[pytest.mark.slow] if name in SLOW else [])


@pytest.mark.parametrize("name", [_param(name) for name in CASES])
def test_hostile_case(name, template, tmp_path):
    case = _build(name, template, tmp_path)
    run_and_check(case)


def _is_null_device(path: Path) -> bool:
    info = os.lstat(path)
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == NULL_DEVICE


def test_output_dev_null_is_refused_and_stays_the_null_device(template, tmp_path):
    """Defect 3 against the system's /dev/null. As root an unfixed validator would rename a
    receipt over the machine's /dev/null, so the same refusal is first proven on a private
    copy of the device; only then is the real one used."""
    if os.geteuid() == 0:
        probe = tmp_path / "probe"
        probe.mkdir()
        try:
            make_null_device(probe / "probe-null")
        except PermissionError:
            pytest.skip("cannot prove the refusal on a private device first")
        (probe / "probe-null").unlink()
        private = output_private_null_device(template, probe)
        run = run_bounded(measure_args(private))
        if not stat.S_ISCHR(os.lstat(private.output).st_mode):
            pytest.fail(f"a private null device was replaced (exit {run.exit_code}): not run "
                        f"against the system's /dev/null")
    entry = copy_packet(template, tmp_path)
    case = Case("output-dev-null", 3, entry, entry, DEV_NULL, (entry.parent,), REFUSED)
    run_and_check(case, compare_listing=False)
    assert _is_null_device(DEV_NULL), "/dev/null is no longer the null character device"
