"""locate_line: a JSONPath into a loader's output back to the line of its file."""

from pathlib import Path

import pytest

from flarespec.loaders import locate_line, parse_prometheus, parse_sse

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def stream():
    return parse_sse((DATA / "openai-chat-stream-with-usage.sse").read_bytes(), data_json=True, terminator="[DONE]")


@pytest.fixture(scope="module")
def metrics():
    return parse_prometheus((DATA / "sglang-production-metrics.prom").read_bytes())


def test_sse_event_locations_give_the_event_line(stream):
    assert locate_line("sse", stream, "$.events[9].json.choices[0].finish_reason") == 19
    assert locate_line("sse", stream, "$.events[0]") == 1
    assert locate_line("sse", stream, "$.events[10].json['usage'].total_tokens") == 21
    assert locate_line("sse", stream, "$.terminated") == 23


def test_sse_lines_after_the_terminator_and_the_unterminated_block():
    value = parse_sse(b"data: 1\n\ndata: [DONE]\n\n: ok\nid: 4\n\ndata: late", terminator="[DONE]")
    assert locate_line("sse", value, "$.after_terminator[0]") == 6
    assert locate_line("sse", value, "$.after_terminator[1].text") == 8
    assert locate_line("sse", value, "$.unterminated") == 8
    assert locate_line("sse", value, "$.unterminated.text") == 8


def test_prometheus_samples_and_families_on_a_real_capture(metrics):
    assert locate_line("prometheus", metrics, "$.samples[0].value") == 3
    assert metrics["samples"][25]["labels"]["le"] == "+Inf"
    assert locate_line("prometheus", metrics, "$.samples[25].labels.le") == 36
    assert [locate_line("prometheus", metrics, f"$.families[{i}]") for i in (0, 1)] == [1, 4]


def test_prometheus_unlabelled_names_give_the_kth_sample_line():
    value = parse_prometheus(b'# TYPE a counter\na{x="1"} 5\na 1\nns:b 2\na 3\n# c\nns:b 4\n')
    assert value["unlabelled"] == {"a": [1.0, 3.0], "ns:b": [2.0, 4.0]}
    assert locate_line("prometheus", value, "$.unlabelled.a") == 3
    assert locate_line("prometheus", value, "$.unlabelled.a[1]") == 5
    assert locate_line("prometheus", value, "$.unlabelled['ns:b'][1]") == 7
    assert locate_line("prometheus", value, "$.unlabelled['ns:b']") == 4
    assert locate_line("prometheus", value, "$.unlabelled.a[2]") is None


def test_prometheus_duplicates_give_their_first_or_chosen_line():
    value = parse_prometheus(b"m 1\nn 1\nm 2\nm 3\n")
    assert locate_line("prometheus", value, "$.duplicates[0]") == 1
    assert locate_line("prometheus", value, "$.duplicates[0].name") == 1
    assert locate_line("prometheus", value, "$.duplicates[0].lines[2]") == 4


def test_quoted_names_with_escapes():
    value = parse_prometheus(b"x 1\n")
    value["unlabelled"]["it's"] = [1.0]
    value["samples"].append({"name": "it's", "labels": {}, "value": 1.0, "timestamp": None, "line": 9})
    assert locate_line("prometheus", value, "$.unlabelled['it\\'s']") == 9


@pytest.mark.parametrize("loader, location", [
    ("sse", "$.events[99]"), ("sse", "$.events"), ("sse", "$.bom"), ("sse", "$"), ("sse", ""), ("sse", "events[0]"),
    ("sse", "$.events['0']"), ("sse", "$.unterminated"), ("prometheus", "$.samples[500]"),
    ("prometheus", "$.unlabelled.nope"), ("prometheus", "$.duplicates[0]"), ("json", "$.events[0]"),
    ("text", "$.text"), ("bytes", "$.head"), ("yaml", "$.a"),
])
def test_anything_else_is_none_never_an_error(stream, metrics, loader, location):
    value = metrics if loader == "prometheus" else stream
    assert locate_line(loader, value, location) is None


def test_a_value_of_the_wrong_shape_is_none():
    assert locate_line("sse", {"events": [{"line": "3"}]}, "$.events[0]") is None
    assert locate_line("sse", None, "$.events[0]") is None
    assert locate_line("prometheus", [], "$.samples[0]") is None
    assert locate_line("sse", {"events": [{"line": True}]}, "$.events[0]") is None
