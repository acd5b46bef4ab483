"""Issue 23, item C: an extra member in a request's ``prefix`` object is ignored (contract
section 12: "``prefix`` null or object (``request`` string, ``tokens`` integer,
``prefix_tokens_sha256`` sha256; other members ignored)"); the three members the contract
reads are still compared between the hit and its seed. Used to be: the whole objects were
compared, so an extra member fired ``corpus.request.prefix-hit``."""

from __future__ import annotations

import pytest

from flarespec.adapter.commands import validate_pair
from flarespec.fixtures.mutations import refresh_digests, set_json, set_json_sha256

REQUEST = "$.groups[?@.kind=='{kind}'].requests[0].prefix"


def edit_corpus(root, kind: str, member: str, value) -> None:
    """Set a member of the ``kind`` request's prefix, re-binding the corpus digest that
    measurements.json records and the packet's file digests."""
    set_json(root, "corpus.json", f"{REQUEST.format(kind=kind)}.{member}", value)
    set_json_sha256(root, "run/measurements.json", "$.corpus.sha256", of="corpus.json")
    refresh_digests(root)


def rules_by_role(receipt) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for violation in receipt["violations"]:
        found.setdefault(violation["packet"], set()).add(violation["rule"])
    return found


@pytest.mark.parametrize("kind", ["prefix-hit", "prefix-seed"])
def test_an_extra_prefix_member_is_ignored(packet_pair, tmp_path, kind):
    for entry in packet_pair:  # both packets: the pair ran the same corpus bytes
        edit_corpus(entry.parent, kind, "note", {"origin": "hand-assembled"})
    outcome = validate_pair(*packet_pair, tmp_path / "pair.json")
    assert outcome.receipt["violations"] == [] and outcome.exit_code == 0


def test_the_members_the_contract_reads_are_still_compared(packet_pair, tmp_path):
    for entry in packet_pair:
        edit_corpus(entry.parent, "prefix-hit", "note", "extra")
        edit_corpus(entry.parent, "prefix-hit", "prefix_tokens_sha256", "0" * 64)
    outcome = validate_pair(*packet_pair, tmp_path / "pair.json")
    assert outcome.exit_code == 2
    assert rules_by_role(outcome.receipt) == {"baseline": {"corpus.request.prefix-hit"},
                                              "candidate": {"corpus.request.prefix-hit"}}
    (violation, _) = outcome.receipt["violations"]
    assert violation["file"] == "corpus.json"
    assert 'unexpected "' + "0" * 64 + '"' in violation["message"]
