"""The Prometheus loader against prometheus/common's own text-parser test inputs.

``data/prometheus_common/text_parse_cases.json`` holds every input of ``testTextParse``
(valid) and ``testTextParseError`` (invalid) of ``expfmt/text_parse_test.go`` (see the README
there for the commit and licence). Every valid input must parse and every invalid input must
be a ``LoadError`` on the line prometheus/common names, except the deliberate differences
below, each with its reason (also in docs/loaders.md, prometheus section).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from flarespec.loaders.errors import LoadError
from flarespec.loaders.prometheus import parse_prometheus

CASES = json.loads((Path(__file__).parent / "data" / "prometheus_common" / "text_parse_cases.json")
                   .read_text(encoding="utf-8"))

# Valid in prometheus/common, rejected here: index -> (reason, how the input is adjusted so
# that it is valid here too, the adjusted input must then parse).
STRICTER = {
    3: ("'# HELP' without a metric name, and '# HELP my_summary' (empty docstring) twice: the "
        "0.0.4 format wants a name after HELP and at most one HELP line per family (section 12); "
        "prometheus/common ignores a HELP line that ends right after the keyword or the name",
        lambda text: text.replace("# HELP\n# HELP\n# HELP my_summary\n# HELP my_summary\n", "")),
    7: ("the input ends with tabs after its last line feed: section 12 wants the last byte to be "
        "a line feed (a file that does not end with one is a truncated capture)",
        lambda text: text.rstrip(" \t")),
    15: ("'# TYPE ... gaugehistogram' is OpenMetrics, not a type of the 0.0.4 text format "
         "(prometheus/common's own text writer writes gauge histograms as 'histogram')",
         lambda text: text.replace(" gaugehistogram\n", " histogram\n")),
    16: ("'# TYPE ... gauge_histogram' is not a type of the 0.0.4 text format (as case 15)",
         lambda text: text.replace(" gauge_histogram\n", " histogram\n")),
    17: ("'# TYPE ... gauge_histogram' is not a type of the 0.0.4 text format (as case 15)",
         lambda text: text.replace(" gauge_histogram\n", " histogram\n")),
}
# Invalid in prometheus/common only under its legacy (pre-UTF-8) name validation: its error
# for the UTF-8 scheme, which this loader follows (quoted names parse), is empty.
VALID_UNDER_UTF8 = {e["index"] for e in CASES["invalid"] if not e["error_utf8"]}


def _bytes(entry: dict) -> bytes:
    return bytes.fromhex(entry["in_hex"]) if "in_hex" in entry else entry["in"].encode("utf-8")


def _go_line(entry: dict) -> int:
    return int(re.match(r"text format parsing error in line (\d+): ", entry["error_utf8"])[1])


def _ids(entries):
    return [f"{e['index']}-{e['comment'][:40]}" for e in entries]


def test_the_data_file_is_the_whole_source():
    source = CASES["source"]
    assert source["repository"] == "https://github.com/prometheus/common"
    assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]) and source["license"] == "Apache-2.0"
    assert [e["index"] for e in CASES["valid"]] == list(range(18))
    assert [e["index"] for e in CASES["invalid"]] == list(range(48))
    assert VALID_UNDER_UTF8 == {41, 42}


VALID = [e for e in CASES["valid"] if e["index"] not in STRICTER]


@pytest.mark.parametrize("entry", VALID, ids=_ids(VALID))
def test_valid_cases_parse(entry):
    result = parse_prometheus(_bytes(entry))
    assert result["samples"] or entry["index"] == 0  # case 0 is blank lines only


@pytest.mark.parametrize("entry", [e for e in CASES["invalid"] if e["index"] in VALID_UNDER_UTF8],
                         ids=_ids([e for e in CASES["invalid"] if e["index"] in VALID_UNDER_UTF8]))
def test_quoted_names_invalid_only_under_legacy_validation_parse(entry):
    result = parse_prometheus(_bytes(entry))
    assert [s["name"] for s in result["samples"]] in (["metric.name"], ["metric_name"])
    assert any("." in key for s in result["samples"] for key in [s["name"], *s["labels"]])


INVALID = [e for e in CASES["invalid"] if e["index"] not in VALID_UNDER_UTF8]


@pytest.mark.parametrize("entry", INVALID, ids=_ids(INVALID))
def test_invalid_cases_are_rejected_on_prometheus_lines(entry):
    data = _bytes(entry)
    with pytest.raises(LoadError) as info:
        parse_prometheus(data)
    assert info.value.code == ("invalid-utf8" if entry["index"] == 20 else "invalid-exposition")
    assert info.value.line == _go_line(entry)
    if entry["index"] == 0 or data.endswith(b"\n"):
        return
    # Most inputs lack a final line feed: with one added they must still be rejected, for
    # what is wrong in them, not only for the missing line feed.
    with pytest.raises(LoadError) as completed:
        parse_prometheus(data + b"\n")
    assert completed.value.line == _go_line(entry)
    assert "line feed" not in completed.value.message


def test_case_0_of_the_invalid_inputs_is_only_the_missing_line_feed():
    entry = CASES["invalid"][0]
    assert entry["comment"] == "No new-line at end of input."
    assert len(parse_prometheus(_bytes(entry) + b"\n")["samples"]) == 2


@pytest.mark.parametrize("index", sorted(STRICTER))
def test_deliberately_stricter_cases(index):
    entry = CASES["valid"][index]
    reason, adjust = STRICTER[index]
    with pytest.raises(LoadError) as info:
        parse_prometheus(_bytes(entry))
    assert info.value.code == "invalid-exposition", reason
    adjusted = adjust(entry["in"])
    assert adjusted != entry["in"]
    assert parse_prometheus(adjusted.encode("utf-8"))["samples"]


def test_quoted_names_are_resolved_as_prometheus_resolves_them():
    by_index = {e["index"]: parse_prometheus(_bytes(e)) for e in CASES["valid"] if e["index"] in (8, 9, 10)}
    gauge = by_index[8]
    assert gauge["families"][0] == {"name": "gauge.name", "type": "gauge",
                                    "help": 'gauge\ndoc\nstr"ing', "line": 1}
    assert gauge["samples"][0]["labels"] == {"name.1": "val with\nnew line",
                                             "name*2": 'val with \\backslash and "quotes"'}
    assert gauge["samples"][1]["labels"] == {"name.1": "Björn", "name*2": "佖佥"}
    assert gauge["samples"][1]["value"] == 314 * 10 ** 40
    escaped = by_index[9]["samples"][0]
    assert escaped["name"] == 'my"noncompliant\nmetric\\' and escaped["labels"] == {'label"name\n': "value"}
    assert by_index[9]["families"][0]["type"] == "counter"
    not_first = by_index[10]["samples"][0]
    assert (not_first["name"], not_first["labels"]) == ("my.noncompliant.metric", {"labelname": "value"})
