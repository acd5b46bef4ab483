"""Every type change of every declared member is rejected by its document's shape rule.

The sites come from the shapes themselves (shape_sites.py): for each member a shape declares
and a valid packet holds, every JSON type the shape does not allow (array -> object keyed
"0", "1", …; integer -> float, string, boolean, null; object -> array; …) and, for a
required member, its removal. Each change is written into the packet (digests refreshed, so
only the change itself can reject), the packet is validated, and the receipt must carry the
document's ``<rule>.shape`` violation at exactly that file and place, with no metric. A child
spec's new members are covered by the same code: ``test_child_member_is_a_site``.

Every site runs by default (a few hundred validations of a one-repetition packet); the
packet is restored byte for byte between sites.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flarespec.engine.evaluate import Evaluation
from flarespec.fixtures.mutations import refresh_digests
from flarespec.fixtures.writers import write_packet
from flarespec.compiler.open import open_compiled

from shape_sites import apply, site_id, sites

SPEC_ID = "flare/bce032c0"


def _loaded(spec, entry: Path) -> dict:
    """Document name -> (file, value) of one instance of each shaped document, as the
    engine loads them from the valid packet (the first instance in path order). Rules one
    by one (``streaming=False``): every document is still loaded when the run ends."""
    evaluation = Evaluation(spec, entry, streaming=False)
    report = evaluation.run()
    assert report.ok, report.violations
    found = {}
    for name, document in spec.documents.items():
        if document.shape is None:
            continue
        path = sorted(evaluation.documents.document_paths([name]))[0]
        found[name] = (path, evaluation.documents._by_path[path].value)
    return found


@pytest.fixture(scope="module")
def spec():
    return open_compiled(SPEC_ID)


@pytest.fixture(scope="module")
def packet(spec, tmp_path_factory):
    return write_packet(tmp_path_factory.mktemp("shape-sites") / "packet", spec)


def _all_sites():
    spec = open_compiled(SPEC_ID)
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        entry = write_packet(Path(directory) / "packet", spec)
        return sites(spec, _loaded(spec, entry))


SITES = _all_sites()


def test_sites_cover_every_shaped_document_and_type_change():
    documents = {site.document for site in SITES}
    spec = open_compiled(SPEC_ID)
    assert documents == {name for name, d in spec.documents.items() if d.shape is not None}
    labels = {site.label for site in SITES}
    assert labels == {"null", "boolean", "integer", "number", "string", "array", "object",
                      "removed"}
    assert len(SITES) > 300


@pytest.mark.parametrize("site", SITES, ids=site_id)
def test_type_change_rejected_by_the_shape_rule(site, spec, packet):
    root = packet.parent
    saved = {path: path.read_bytes() for path in (packet, root / site.file)}
    try:
        apply(root, site)
        if site.file != packet.name:
            refresh_digests(root)
        report = Evaluation(spec, packet).run()
    finally:
        for path, data in saved.items():
            path.write_bytes(data)
    places = {(v.file, v.location) for v in report.violations if v.rule == site.rule}
    assert (site.file, site.location) in places, \
        f"{site_id(site)}: no {site.rule} at {site.location}; got " \
        f"{sorted((v.rule, v.file, v.location) for v in report.violations)[:8]}"
    assert not report.ok and report.metric is None


def test_child_member_is_a_site(tmp_path):
    """A child that adds one required member to a shape (one entry) gets its sites."""
    child = tmp_path / "child.yaml"
    child.write_text(
        "flarespec: 1\nid: flare/shape-child\nextends: flare/bce032c0\ntitle: child\n"
        "shapes:\n  memory_report:\n    members:\n      kv_pages_reserved: integer\n")
    spec = open_compiled(str(child))
    node = spec.documents["memory_report"].shape.node
    assert node["members"]["kv_pages_reserved"] == {"type": "integer"}
    assert node["members"]["kv_pages_total"] == {"type": "integer"}  # inherited members kept
    value = {"schema": "s", "target_arch": "a", "prefill_chunk_size": 1, "kv_page_tokens": 1,
             "kv_pages_total": 1, "snapshot_slots_total": 1, "bytes": {},
             "kv_pages_reserved": 3}
    found = sites(spec, {"memory_report": ("preparation/memory-report.json", value)})
    mine = {site.label for site in found if site.steps == ("kv_pages_reserved",)}
    assert mine == {"null", "boolean", "number", "string", "array", "object", "removed"}


def test_restored_packet_is_valid(spec, packet):
    """The module's packet is restored after every site (so no site sees another's change)."""
    assert Evaluation(spec, packet).run().ok
