import gc
import subprocess
import sys

import pytest

import flarespec.loaders as loaders
from flarespec.loaders import limits
from flarespec.loaders import KNOWN_LOADERS, LOADERS, FileStore, LoadError, get_loader, load_bytes_head


def test_known_loaders():
    assert KNOWN_LOADERS == {"json", "jsonl", "csv", "sse", "prometheus", "text", "bytes"}
    assert set(LOADERS) == {"json", "jsonl", "csv", "sse", "prometheus", "text"}


def test_json_loader():
    assert get_loader("json")(b'{"a": [1]}', {}) == {"a": [1]}


def test_sse_loader_passes_options():
    body = b'data: {"a": 1}\n\ndata: END\n\n'
    result = get_loader("sse")(body, {"data_json": True, "terminator": "END"})
    assert [e["json"] for e in result["events"]] == [{"a": 1}] and result["terminated"] is True
    plain = get_loader("sse")(body, {})
    assert [e["data"] for e in plain["events"]] == ['{"a": 1}', "END"] and "json" not in plain["events"][0]


def test_prometheus_loader():
    assert get_loader("prometheus")(b"m 2\n", {})["unlabelled"] == {"m": [2.0]}


def test_text_loader():
    assert get_loader("text")("caf\u00e9\n".encode(), {}) == {"text": "caf\u00e9\n"}
    with pytest.raises(LoadError) as info:
        get_loader("text")(b"ok\n\xff", {})
    assert (info.value.code, info.value.line) == ("invalid-utf8", 2)


def test_unknown_and_bytes_loader_names():
    with pytest.raises(ValueError, match="unknown loader 'yaml'"):
        get_loader("yaml")
    with pytest.raises(ValueError, match="load_bytes_head"):
        get_loader("bytes")


def test_load_bytes_head(tmp_path):
    (tmp_path / "blob").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\xff" * 100)
    value = load_bytes_head(FileStore(tmp_path), "blob", 5)
    assert value == {"head": "\x89PNG\r", "size": 108}


def test_import_does_not_load_prometheus_client():
    code = "import sys, flarespec.loaders; print('prometheus_client' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_public_names_exported():
    assert set(loaders.__all__) >= {"FileStore", "LoadError", "load_json", "load_json_text", "parse_sse",
                                    "parse_prometheus", "get_loader", "load_bytes_head", "LOADERS",
                                    "KNOWN_LOADERS", "locate_line", "MAX_DOCUMENT_BYTES"}
    assert all(hasattr(loaders, name) for name in loaders.__all__)


def test_loaders_import_no_third_party_module():
    code = ("import sys; before = set(sys.modules); import flarespec.loaders as l; "
            "l.parse_prometheus(b'm 1\\n'); "
            "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] not in sys.stdlib_module_names "
            "and not m.startswith('flarespec')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name", ["json", "jsonl", "csv", "sse", "prometheus", "text"])
def test_every_parsing_loader_refuses_a_document_over_the_size_limit(name, monkeypatch):
    monkeypatch.setattr(limits, "MAX_DOCUMENT_BYTES", 8)
    assert get_loader(name)(b"{}\n" if name != "prometheus" else b"m 1\n", {}) is not None
    with pytest.raises(LoadError) as info:
        get_loader(name)(b"[1, 2, 3, 4]\n", {})
    assert info.value.code == "too-large" and "8 bytes" in info.value.message


def test_load_error_attributes_and_text():
    error = LoadError("duplicate-key", "object repeats 'a'", line=3, location="$.x[0]")
    assert (error.code, error.message, error.line, error.location) == ("duplicate-key", "object repeats 'a'", 3, "$.x[0]")
    assert str(error) == "[duplicate-key] object repeats 'a' (line 3, $.x[0])"
    assert str(LoadError("missing", "gone")) == "[missing] gone"


def test_garbage_collector_paused_while_parsing_and_restored_after():
    seen = []

    @limits.gc_paused
    def parse(fail: bool):
        seen.append(gc.isenabled())
        if fail:
            raise LoadError("invalid-json", "bad")
        return nested()

    @limits.gc_paused
    def nested():
        seen.append(gc.isenabled())
        return "ok"

    assert gc.isenabled()
    assert parse(False) == "ok" and gc.isenabled()
    with pytest.raises(LoadError):
        parse(True)
    assert gc.isenabled() and seen == [False, False, False]
    gc.disable()
    try:
        parse(False)
        assert not gc.isenabled()  # a caller's own pause is left alone
    finally:
        gc.enable()


@pytest.mark.parametrize("name", ["json", "jsonl", "csv", "sse", "prometheus"])
def test_parsing_loaders_restore_the_garbage_collector_even_on_error(name):
    for data in (b"{}\n\n", b"\xff"):
        try:
            get_loader(name)(data, {})
        except LoadError:
            pass
        assert gc.isenabled()


# A document of 1.5 MiB each parsing loader accepts: padding its format ignores.
_PADDED = {
    "json": b" " * (3 * limits.MIB // 2) + b"{}",
    "jsonl": b" " * (3 * limits.MIB // 2) + b"{}",
    "csv": b"a\n" + b"x" * (3 * limits.MIB // 2),
    "sse": b":" + b"x" * (3 * limits.MIB // 2) + b"\n",
    "prometheus": b"# " + b"x" * (3 * limits.MIB // 2) + b"\n",
    "text": b"x" * (3 * limits.MIB // 2),
}


@pytest.mark.parametrize("name", sorted(_PADDED))
def test_the_spec_option_max_mib_sets_a_documents_size_limit(name):
    assert get_loader(name)(_PADDED[name], {}) is not None  # under the default limit
    assert get_loader(name)(_PADDED[name], {"max_mib": 2}) is not None
    with pytest.raises(LoadError) as info:
        get_loader(name)(_PADDED[name], {"max_mib": 1})
    assert info.value.code == "too-large"
    assert info.value.message.endswith(
        f"is {len(_PADDED[name])} bytes; the limit for this document is 1048576 bytes "
        f"(1 MiB, spec option max_mib)")


def test_document_limit_is_max_mib_in_bytes_else_the_default():
    assert limits.document_limit({}) == limits.MAX_DOCUMENT_BYTES == 32 * limits.MIB
    assert limits.document_limit({"data_json": True, "max_mib": 128}) == 128 * limits.MIB


def test_the_default_limit_keeps_its_wording():
    """Receipts carry this message: without max_mib it is the one it always was."""
    assert limits.too_large("JSON text", 40_000_000).message == (
        "the JSON text is 40000000 bytes; the limit for a parsed document is 33554432 bytes "
        "(32 MiB)")
    assert limits.too_large("file").message == (
        "the file is larger; the limit for a parsed document is 33554432 bytes (32 MiB)")


def test_locates_lines_says_which_loaders_locate_lines_at_all():
    """The engine asks before it reads a released document again for a line number."""
    sse = loaders.parse_sse(b"data: {}\n\n", data_json=True)
    assert loaders.locates_lines("sse") and loaders.locate_line("sse", sse, "$.events[0]") == 1
    assert loaders.locates_lines("prometheus")
    assert not loaders.locates_lines("json")
    assert loaders.locate_line("json", {"a": 1}, "$.a") is None
