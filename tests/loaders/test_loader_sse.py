"""SSE parser: WHATWG examples, web-platform-tests eventsource/format-* cases (rewritten as
byte strings), terminator handling and a real captured stream."""

import subprocess
import sys
from pathlib import Path

import pytest

from flarespec.loaders import sse
from flarespec.loaders.errors import LoadError
from flarespec.loaders.sse import parse_sse

DATA = Path(__file__).parent / "data"


def datas(body: bytes, **options) -> list[str]:
    return [event["data"] for event in parse_sse(body, **options)["events"]]


# --------------------------------------------------------------- WHATWG spec examples

def test_spec_multiline_data_example():
    result = parse_sse(b"data: YHOO\ndata: +2\ndata: 10\n\n")
    assert result["events"] == [
        {"index": 0, "line": 1, "type": "message", "data": "YHOO\n+2\n10", "id": None, "retry": None}]
    assert result["unterminated"] is None and result["bom"] is False


def test_spec_test_stream_with_comment_and_ids():
    body = b": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
    events = parse_sse(body)["events"]
    assert [(e["line"], e["data"], e["id"]) for e in events] == [
        (3, "first event", "1"), (6, "second event", ""), (9, " third event", "")]


def test_spec_empty_data_events_and_discarded_final_line():
    result = parse_sse(b"data\n\ndata\ndata\n\ndata:")
    assert [e["data"] for e in result["events"]] == ["", "\n"]
    assert result["unterminated"] == {"line": 6, "text": "data:"}


def test_spec_data_with_and_without_space_are_identical():
    assert datas(b"data:test\n\ndata: test\n\n") == ["test", "test"]


# --------------------------------------------------------------- wpt eventsource/format-*

def test_format_bom():
    result = parse_sse(b"\xef\xbb\xbfdata:1\n\n\xef\xbb\xbfdata:2\n\ndata:3\n\n")
    assert result["bom"] is True
    # Only the leading BOM is stripped; a later one makes "\ufeffdata" an unknown field.
    assert [(e["line"], e["data"]) for e in result["events"]] == [(1, "1"), (5, "3")]


def test_format_bom_2():
    result = parse_sse(b"\xef\xbb\xbf\xef\xbb\xbfdata:1\n\ndata:2\n\ndata:3\n\n")
    assert result["bom"] is True
    assert [e["data"] for e in result["events"]] == ["2", "3"]


def test_format_comments():
    long = b"x" * 2049
    body = (b"data:1\r:\x00\n:\r\ndata:2\n:" + long + b"\rdata:3\n:data:fail\r:" + long
            + b"\ndata:4\n\n")
    assert datas(body) == ["1\n2\n3\n4"]


def test_format_data_before_final_empty_line():
    result = parse_sse(b"retry:1000\ndata:test1\n\nid:test\ndata:test2")
    assert [(e["data"], e["retry"], e["id"]) for e in result["events"]] == [("test1", 1000, None)]
    assert result["unterminated"] == {"line": 4, "text": "id:test"}


def test_format_field_data():
    assert datas(b"data:\n\ndata\ndata\n\ndata:test\n\n") == ["", "\n", "test"]


def test_format_field_event():
    events = parse_sse(b"event:test\ndata:x\n\ndata:x\n\n")["events"]
    assert [e["type"] for e in events] == ["test", "message"]


def test_format_field_event_empty():
    events = parse_sse(b"event: \ndata:data\n\n")["events"]
    assert [(e["type"], e["data"]) for e in events] == [("message", "data")]


def test_format_field_id_persists_and_empty_id_resets():
    events = parse_sse(b"id:1\ndata:a\n\ndata:b\n\nid:\ndata:c\n\n")["events"]
    assert [e["id"] for e in events] == ["1", "1", ""]


def test_format_field_id_null_is_ignored():
    events = parse_sse(b"id: 1\ndata: a\n\nid: 2\x00\ndata: b\n\n")["events"]
    assert [e["id"] for e in events] == ["1", "1"]


def test_format_field_parsing():
    body = (b"data:\x00\ndata:  2\rData:1\ndata\x00:2\ndata:1\r\x00data:4\nda-ta:3\rdata_5\n"
            b"data:3\rdata:\r\n data:32\ndata:4\n\n")
    assert datas(body) == ["\x00\n 2\n1\n3\n\n4"]


def test_format_field_retry():
    events = parse_sse(b"retry:03000\ndata:x\n\n")["events"]
    assert events[0]["retry"] == 3000


def test_format_field_retry_bogus_is_ignored():
    events = parse_sse(b"retry:3000\nretry:1000x\ndata:x\n\nretry: 12\ndata:y\n\n")["events"]
    # "1000x" is ignored; " 12" loses its one optional space and is valid.
    assert [e["retry"] for e in events] == [3000, 12]


def test_format_field_retry_empty_is_ignored():
    events = parse_sse(b"retry\ndata:test\n\n")["events"]
    assert (events[0]["retry"], events[0]["data"]) == (None, "test")


def test_format_field_retry_non_ascii_digits_ignored():
    events = parse_sse("retry:\u0661\u0662\ndata:x\n\n".encode())["events"]
    assert events[0]["retry"] is None


def test_retry_beyond_a_64_bit_integer_is_ignored_like_any_invalid_value():
    body = b"retry: 250\ndata: a\n\nretry: " + b"7" * 5000 + b"\ndata: b\n\nretry: 9223372036854775808\ndata: c\n\n"
    assert [e["retry"] for e in parse_sse(body)["events"]] == [250, 250, 250]


def test_retry_limits_count_digits_after_leading_zeros():
    body = b"retry: " + b"0" * 5000 + b"3000\ndata: a\n\nretry: 9223372036854775807\ndata: b\n\n"
    assert [e["retry"] for e in parse_sse(body)["events"]] == [3000, 9223372036854775807]


def test_format_field_unknown():
    body = b"data:test\n data\ndata\nfoobar:xxx\njustsometext\n:thisisacommentyay\ndata:test\n\n"
    assert datas(body) == ["test\n\ntest"]


def test_format_leading_space():
    assert datas(b"data:\ttest\rdata: \ndata:test\n\n") == ["\ttest\n\ntest"]


def test_format_newlines():
    assert datas(b"data:test\r\ndata\ndata:test\r\n\r") == ["test\n\ntest"]


def test_format_null_character():
    assert datas(b"data:\x00\n\n") == ["\x00"]


def test_format_utf_8():
    assert datas(b"data:ok\xe2\x80\xa6\n\n") == ["ok\u2026"]


# --------------------------------------------------------------- line ends and line numbers

def test_lf_after_crlf_is_a_second_line_end():
    events = parse_sse(b"data: a\r\n\ndata: b\n\r\ndata: c\r\r")["events"]
    assert [(e["line"], e["data"]) for e in events] == [(1, "a"), (3, "b"), (5, "c")]


def test_event_line_is_its_first_field_line_not_first_data_line():
    events = parse_sse(b": hello\n\nevent: tick\n: note\nid: 7\ndata: x\n\n")["events"]
    assert [(e["line"], e["type"], e["id"], e["index"]) for e in events] == [(3, "tick", "7", 0)]


def test_blocks_without_data_dispatch_nothing_and_reset_type():
    events = parse_sse(b"event: lost\nid: 1\n\ndata: x\n\n")["events"]
    assert [(e["type"], e["id"], e["line"]) for e in events] == [("message", "1", 4)]


def test_invalid_utf8_names_the_line():
    with pytest.raises(LoadError) as info:
        parse_sse(b"data: a\n\ndata: \xc3\x28\n\n")
    assert (info.value.code, info.value.line) == ("invalid-utf8", 3)


def test_trailing_comment_without_line_end_is_not_unterminated():
    result = parse_sse(b"data: a\n\n: keep-alive")
    assert result["unterminated"] is None and datas(b"data: a\n\n: keep-alive") == ["a"]


def test_complete_field_line_without_blank_line_is_unterminated():
    result = parse_sse(b"data: a\n\n: c\nid: 9\n")
    assert [e["data"] for e in result["events"]] == ["a"]
    assert result["unterminated"] == {"line": 4, "text": "id: 9"}


# --------------------------------------------------------------- terminator

def test_terminator_dispatched_is_not_an_event():
    result = parse_sse(b"data: 1\n\ndata: [DONE]\n\n", terminator="[DONE]")
    assert [e["data"] for e in result["events"]] == ["1"]
    assert (result["terminated"], result["terminator_line"], result["after_terminator"]) == (True, 3, [])


def test_without_terminator_option_marker_is_an_ordinary_event():
    result = parse_sse(b"data: [DONE]\n\n")
    assert [e["data"] for e in result["events"]] == ["[DONE]"]
    assert (result["terminated"], result["terminator_line"]) == (False, None)


def test_missing_terminator():
    result = parse_sse(b"data: 1\n\n", terminator="[DONE]")
    assert (result["terminated"], result["terminator_line"], result["unterminated"]) == (False, None, None)


def test_terminator_at_eof_without_blank_line_is_not_dispatched():
    result = parse_sse(b"data: 1\n\ndata: [DONE]", terminator="[DONE]")
    assert result["terminated"] is False
    assert result["unterminated"] == {"line": 3, "text": "data: [DONE]"}
    result = parse_sse(b"data: 1\n\ndata: [DONE]\n", terminator="[DONE]")
    assert (result["terminated"], result["unterminated"]) == (False, {"line": 3, "text": "data: [DONE]"})


def test_comments_and_blank_lines_after_terminator_are_allowed():
    result = parse_sse(b"data: [DONE]\n\n\n: bye\r\n\n", terminator="[DONE]")
    assert (result["terminated"], result["after_terminator"], result["unterminated"]) == (True, [], None)


def test_lines_after_terminator_are_reported_even_if_they_dispatch_nothing():
    body = b"data: [DONE]\n\nid: 5\n\n: fine\ndata: {\"late\": 1}\n\ndata"
    result = parse_sse(body, terminator="[DONE]", data_json=True)
    assert result["events"] == []
    assert result["after_terminator"] == [
        {"line": 3, "text": "id: 5"}, {"line": 6, "text": 'data: {"late": 1}'}, {"line": 8, "text": "data"}]
    assert result["unterminated"] == {"line": 8, "text": "data"}


def test_terminator_compares_whole_data_buffer():
    result = parse_sse(b"data: [DONE]\ndata: more\n\n", terminator="[DONE]")
    assert (result["terminated"], [e["data"] for e in result["events"]]) == (False, ["[DONE]\nmore"])


# --------------------------------------------------------------- data_json

def test_data_json_parses_each_event():
    result = parse_sse(b'data: {"a": 1}\n\ndata: [1,\ndata: 2.5]\n\ndata: [DONE]\n\n',
                       data_json=True, terminator="[DONE]")
    assert [e["json"] for e in result["events"]] == [{"a": 1}, [1, 2.5]]


def test_without_data_json_there_is_no_json_key():
    assert "json" not in parse_sse(b'data: {"a": 1}\n\n')["events"][0]


@pytest.mark.parametrize("payload, code", [
    (b"data: {bad}", "invalid-json"),
    (b'data: {"a": 1, "a": 2}', "duplicate-key"),
    (b'data: {"a": NaN}', "non-json-literal"),
    (b"data:", "invalid-json"),
])
def test_data_json_errors_name_the_event_line(payload, code):
    with pytest.raises(LoadError) as info:
        parse_sse(b'data: {"ok": true}\n\n: c\nid: 3\n' + payload + b"\n\n", data_json=True)
    assert (info.value.code, info.value.line) == (code, 4)
    assert "event 1 (line 4)" in info.value.message


@pytest.mark.parametrize("number, code", [(b"7" * 5000, "number-too-long"), (b"1e999", "number-out-of-range")])
def test_data_json_numbers_beyond_range_name_the_event_line(number, code):
    with pytest.raises(LoadError) as info:
        parse_sse(b'data: {"a": 1}\n\n: c\ndata: {"n":\ndata: ' + number + b"}\n\n", data_json=True)
    assert (info.value.code, info.value.line) == (code, 4)


def test_identical_event_data_share_one_string_and_one_parsed_value():
    result = parse_sse(b'data: {"choices": []}\n\nid: 1\ndata: {"choices": []}\n\ndata: [2]\n\n', data_json=True)
    first, second, third = result["events"]
    assert first["json"] == second["json"] == {"choices": []} and third["json"] == [2]
    assert first["json"] is second["json"] and first["data"] is second["data"]
    assert (first["id"], second["id"], second["index"], second["line"]) == (None, "1", 1, 3)


def test_lines_split_a_slice_at_a_time_give_the_same_result(monkeypatch):
    bodies = [b"data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n",
              (DATA / "openai-chat-stream-with-usage.sse").read_bytes(),
              b"data: x\n\r\n\r\r\ndata: [DONE]\n\nid: 3\n\ndata: late\r\ndata"]
    whole = [parse_sse(body, terminator="[DONE]") for body in bodies]
    for size in (1, 2, 3, 7):
        monkeypatch.setattr(sse, "SLICE_CHARS", size)
        assert [parse_sse(body, terminator="[DONE]") for body in bodies] == whole


def test_more_events_than_the_limit_is_too_large(monkeypatch):
    monkeypatch.setattr(sse, "MAX_SSE_EVENTS", 2)
    assert len(parse_sse(b"data: 1\n\ndata: 2\n\n")["events"]) == 2
    with pytest.raises(LoadError) as info:
        parse_sse(b"data: 1\n\ndata: 2\n\n: c\ndata: 3\n\n")
    assert (info.value.code, info.value.line) == ("too-large", 6)


@pytest.mark.slow
@pytest.mark.parametrize("event", [b"data: {}\n\n", b'data: {"choices":[]}\n\n'])
def test_a_million_tiny_events_fit_the_memory_budget(event):
    code = f"""
import resource, sys
from flarespec.loaders.sse import parse_sse
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = parse_sse({event!r} * 1_000_000, data_json=True, terminator="[DONE]")
usage = resource.getrusage(resource.RUSAGE_SELF)
print(len(result["events"]), usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime)
"""
    count, peak, cpu = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                      check=True, timeout=300).stdout.split()
    assert int(count) == 1_000_000
    assert int(peak) < 600 * 2**20, f"peak RSS {int(peak) / 2**20:.0f} MiB"
    assert float(cpu) < 20


def test_data_json_duplicate_location_is_rebased_onto_the_output():
    with pytest.raises(LoadError) as info:
        parse_sse(b'data: {"a": [{"k": 1, "k": 1}]}\n\n', data_json=True)
    assert (info.value.location, info.value.line) == ("$.events[0].json.a[0]", 1)


# --------------------------------------------------------------- real capture

def test_real_openai_stream_without_terminator_option():
    result = parse_sse((DATA / "openai-chat-stream-with-usage.sse").read_bytes())
    assert len(result["events"]) == 12
    assert result["events"][-1]["data"] == "[DONE]"
    assert result["unterminated"] is None


def test_real_openai_stream_with_terminator_and_json():
    result = parse_sse((DATA / "openai-chat-stream-with-usage.sse").read_bytes(),
                       data_json=True, terminator="[DONE]")
    events = result["events"]
    assert (len(events), result["terminated"], result["terminator_line"]) == (11, True, 23)
    assert (result["after_terminator"], result["unterminated"], result["bom"]) == ([], None, False)
    assert [e["line"] for e in events] == list(range(1, 22, 2))
    assert {e["type"] for e in events} == {"message"}
    first, finish, usage = events[0]["json"], events[9]["json"], events[10]["json"]
    assert first["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}
    content = "".join(e["json"]["choices"][0]["delta"]["content"] for e in events[1:9])
    assert content == "The capital of the UK is London."
    assert finish["choices"][0]["delta"] == {} and finish["choices"][0]["finish_reason"] == "stop"
    assert usage["choices"] == [] and usage["usage"]["total_tokens"] == 87


# --------------------------------------------------- issue 15: the inlined loop, the fast split


@pytest.mark.parametrize("other_break", ["\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
                                         "\u2029"])
def test_line_breaks_of_str_splitlines_that_are_not_sse_line_ends_stay_in_the_line(other_break):
    """The slices are split with str.splitlines when they hold none of its other line
    breaks; a slice that holds one is split on CR, LF and CRLF alone."""
    text = f"data: a{other_break}b\n\ndata: c\r\n\r\n"
    events = parse_sse(text.encode())["events"]
    assert [e["data"] for e in events] == [f"a{other_break}b", "c"]
    assert [e["line"] for e in events] == [1, 3]


def test_the_fast_split_and_the_line_end_split_give_the_same_lines(monkeypatch):
    text = "data: 1\r\n\r\ndata: 2\r\rid: 7\n: c\nevent: e\ndata: 3\n\n" * 50 + "data: tail"
    plain = parse_sse(text.encode())
    monkeypatch.setattr(sse, "_OTHER_LINE_BREAKS", type("Always", (), {"search": lambda *a: True})())
    monkeypatch.setattr(sse, "SLICE_CHARS", 7)  # many slices, cut at every kind of line end
    assert parse_sse(text.encode()) == plain
    assert len(plain["events"]) == 150 and plain["unterminated"]["text"] == "data: tail"


def test_event_json_keys_are_shared_between_events_and_errors_are_unchanged():
    stream = b'data: {"a": 1, "b": {"c": 2}}\n\ndata: {"a": 3, "b": {"c": 4}}\n\n'
    first, second = (e["json"] for e in parse_sse(stream, data_json=True)["events"])
    assert [id(k) for k in first] == [id(k) for k in second]  # interned keys
    assert [id(k) for k in first["b"]] == [id(k) for k in second["b"]]
    with pytest.raises(LoadError) as info:
        parse_sse(b'data: {"a": 1}\n\ndata: {"a": 1} x\n\n', data_json=True)
    assert info.value.code == "invalid-json" and info.value.line == 3
    assert info.value.message == ("event 1 (line 3): data is not strict JSON: invalid JSON: "
                                  "Extra data (column 10)")
    with pytest.raises(LoadError) as info:
        parse_sse(b'data: {"a": 1, "a": 2}\n\n', data_json=True)
    assert info.value.code == "duplicate-key" and info.value.location == "$.events[0].json"
