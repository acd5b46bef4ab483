"""Issue 23, item B: the Prometheus loader against prometheus/common, round 3.

* A ``# HELP`` or ``# TYPE`` line naming a sample name of a histogram or summary declared
  earlier (``# TYPE s summary`` then ``# TYPE s_sum gauge``) was taken as a family of its
  own; prometheus/common's text parser maps the name onto the declared family (as it maps a
  sample's) and rejects a second HELP or TYPE ("second TYPE line for metric name ..., or
  TYPE reported after samples"). So does this loader now (a false PASS before).
* ``+inf``, ``Inf``, ``Infinity``, ``nan`` (Go's ``ParseFloat`` spellings, any case) as a
  sample value were rejected (a false reject of a family the contract does not read); a
  required sample of such a value still fails ``snapshot.sample.finite``.
"""

from __future__ import annotations

import math

import pytest

from flarespec.adapter.commands import measure
from flarespec.fixtures.mutations import prom_append, prom_set, refresh_digests
from flarespec.loaders.errors import LoadError
from flarespec.loaders.prometheus import parse_prometheus

HISTOGRAM_SAMPLES = 'h_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n'


def parse(text: str) -> dict:
    return parse_prometheus(text.encode("utf-8"))


@pytest.mark.parametrize("text, line, shown", [
    ("# TYPE s summary\n# TYPE s_sum gauge\n", 2, "s_sum (a sample name of the summary s)"),
    ("# TYPE s summary\n# TYPE s_count counter\n", 2, "s_count (a sample name of the summary s)"),
    ("# TYPE s summary\ns_sum 1\n# TYPE s_sum untyped\n", 3, "s_sum (a sample name of the summary s)"),
    ("# TYPE h histogram\n" + HISTOGRAM_SAMPLES + "# TYPE h_bucket counter\n", 5,
     "h_bucket (a sample name of the histogram h)"),
    ("# TYPE h histogram\n# TYPE h_sum gauge\n", 2, "h_sum (a sample name of the histogram h)"),
    ("# TYPE h histogram\n# TYPE h_count histogram\n", 2, "h_count (a sample name of the histogram h)"),
    ('# TYPE "a.b" histogram\n# TYPE "a.b_bucket" gauge\n', 2,
     "'a.b_bucket' (a sample name of the histogram 'a.b')"),
])
def test_a_type_line_naming_a_member_of_a_declared_family_is_a_second_type(text, line, shown):
    with pytest.raises(LoadError) as info:
        parse(text)
    assert (info.value.code, info.value.line) == ("invalid-exposition", line)
    assert info.value.message == f"second # TYPE line for {shown}"


@pytest.mark.parametrize("text, line, shown", [
    ("# TYPE s summary\n# HELP s a summary\n# HELP s_count its count\n", 3,
     "s_count (a sample name of the summary s)"),
    ("# TYPE s summary\n# HELP s_sum its sum\n# HELP s a summary\n", 3, "s"),
    ("# TYPE h histogram\n# HELP h a histogram\n" + HISTOGRAM_SAMPLES + "# HELP h_bucket x\n", 6,
     "h_bucket (a sample name of the histogram h)"),
])
def test_a_help_line_naming_a_member_of_a_declared_family_is_a_second_help(text, line, shown):
    with pytest.raises(LoadError) as info:
        parse(text)
    assert (info.value.code, info.value.line) == ("invalid-exposition", line)
    assert info.value.message == f"second # HELP line for {shown}"


def test_a_member_s_help_is_its_family_s_help():
    """As prometheus/common: ``# HELP s_sum`` of the summary ``s`` is ``s``'s HELP."""
    result = parse("# TYPE s summary\n# HELP s_sum the help\ns_sum 1\ns_count 1\n")
    assert result["families"] == [{"name": "s", "type": "summary", "help": "the help", "line": 1}]


@pytest.mark.parametrize("text", [
    "# HELP s a name\n# HELP s_count another\n",       # s has no type: s_count is its own
    "# TYPE s summary\n# TYPE s_bucket gauge\n",        # a summary has no _bucket samples
    "# TYPE g gauge\n# TYPE g_sum gauge\n",             # a gauge owns no suffixed names
    "# TYPE c counter\n# TYPE c_total counter\n",       # 0.0.4 has no _total rule
    "# TYPE s_sum gauge\n# TYPE s summary\n",           # s_sum declared first: its own family
])
def test_names_no_declared_family_owns_stay_families_of_their_own(text):
    assert len(parse(text)["families"]) == 2


# ------------------------------------------------------------------ values


@pytest.mark.parametrize("token, value", [
    ("+inf", math.inf), ("Inf", math.inf), ("inf", math.inf), ("INF", math.inf),
    ("Infinity", math.inf), ("+Infinity", math.inf), ("-infinity", -math.inf), ("-iNf", -math.inf),
    ("+Inf", math.inf), ("-Inf", -math.inf),
])
def test_every_spelling_of_an_infinity_prometheus_takes_is_a_value(token, value):
    parsed = parse(f"m {token}\n")["samples"][0]["value"]
    assert parsed == value and type(parsed) is float


@pytest.mark.parametrize("token", ["nan", "NaN", "NAN", "nAn"])
def test_every_spelling_of_nan_prometheus_takes_is_a_value(token):
    parsed = parse(f"m {token} 17\n")["samples"][0]
    assert math.isnan(parsed["value"]) and parsed["timestamp"] == 17


def test_ordinary_numbers_stay_exact():
    values = [s["value"] for s in parse("a 0.1\nb 12.0\nc 9007199254740993\n")["samples"]]
    assert [str(v) for v in values] == ["0.1", "12", "9007199254740993"]


# ------------------------------------------------------------------ end to end

SNAPSHOT = "run/metrics/r0.ttft-512.before.prom"


def _packet_rules(entry, peer, tmp_path) -> tuple[int, set[str]]:
    refresh_digests(entry.parent)
    outcome = measure(entry, peer, tmp_path / "out" / "receipt.json")
    return outcome.exit_code, {v["rule"] for v in outcome.receipt["violations"]
                               if v["packet"] == "packet"}


@pytest.mark.parametrize("token", ["Infinity", "nan", "+inf"])
def test_a_non_finite_value_in_a_family_the_contract_does_not_read_passes(token, packet_pair, tmp_path):
    entry, peer = packet_pair
    prom_append(entry.parent, SNAPSHOT, f"unread_gauge {token}")
    assert _packet_rules(entry, peer, tmp_path) == (0, set())


@pytest.mark.parametrize("token", ["+inf", "nan", "-Infinity"])
def test_a_non_finite_required_sample_is_still_not_finite(token, packet_pair, tmp_path):
    entry, peer = packet_pair
    prom_set(entry.parent, SNAPSHOT, "flare_checkpoints_inflight", token)
    exit_code, rules = _packet_rules(entry, peer, tmp_path)
    assert exit_code == 2 and "snapshot.sample.finite" in rules, rules
    assert "snapshot.file.invalid-exposition" not in rules


def test_a_member_type_line_in_a_snapshot_rejects(packet_pair, tmp_path):
    entry, peer = packet_pair
    prom_append(entry.parent, SNAPSHOT, "# TYPE unread_summary summary")
    prom_append(entry.parent, SNAPSHOT, "# TYPE unread_summary_sum gauge")
    assert _packet_rules(entry, peer, tmp_path) == (2, {"snapshot.file.invalid-exposition"})
