"""Extract the text-parser test inputs of prometheus/common into text_parse_cases.json.

Run from anywhere, with the path of a git directory of prometheus/common (a clone or a bare
mirror) and the commit to read:

    python extract.py /path/to/common/.git d2417e2cbb82c4c81e4d28d55f354058169a9f08

It reads ``expfmt/text_parse_test.go`` at that commit and keeps, for every scenario of
``testTextParse`` (valid inputs) and ``testTextParseError`` (invalid inputs), its index, its
leading comment, its input and, for the invalid ones, the expected error texts. Nothing else
of the Go file is copied. The result is committed, so the tests never need the network.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

SOURCE = "expfmt/text_parse_test.go"
_ESCAPES = {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\", "r": b"\r"}


def go_string(text: str, start: int) -> tuple[bytes, int]:
    """The bytes of the Go string literal starting at ``start`` (raw or interpreted) and the
    position after it."""
    if text[start] == "`":
        end = text.index("`", start + 1)
        return text[start + 1:end].encode("utf-8"), end + 1
    assert text[start] == '"', text[start:start + 20]
    out, position = bytearray(), start + 1
    while text[position] != '"':
        char = text[position]
        if char == "\\":
            code = text[position + 1]
            if code == "x":
                out.append(int(text[position + 2:position + 4], 16))
                position += 4
                continue
            out += _ESCAPES[code]
            position += 2
            continue
        out += char.encode("utf-8")
        position += 1
    return bytes(out), position + 1


def scenarios(body: str) -> list[dict]:
    """Every ``{ ... in: ..., err...: ... }`` scenario of one function body, in order."""
    found = []
    for match in re.finditer(r"// (\d+):([^\n]*)\n((?:\t\t//[^\n]*\n)*)\t\t\{\n", body):
        more = [line.strip()[2:].strip() for line in match[3].splitlines()]
        index, comment = int(match[1]), " ".join([match[2].strip(), *more]).strip()
        entry = {"index": index, "comment": comment}
        field = re.compile(r"\s*(in|errUTF8|errLegacy):\s*")
        position = match.end()
        while True:
            found_field = field.match(body, position)
            if found_field is None:
                break
            value, position = go_string(body, found_field.end())
            entry[found_field[1]] = value
            position = body.index("\n", position) + 1  # the rest of the line (the comma)
        found.append(entry)
    return found


def as_json(entry: dict) -> dict:
    out = {"index": entry["index"], "comment": entry["comment"]}
    data = entry["in"]
    try:
        out["in"] = data.decode("utf-8")
    except UnicodeDecodeError:
        out["in_hex"] = data.hex()
    for key, name in (("errUTF8", "error_utf8"), ("errLegacy", "error_legacy")):
        if key in entry:
            out[name] = entry[key].decode("utf-8")
    return out


def main(git_dir: str, commit: str) -> None:
    text = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{SOURCE}"],
                          check=True, capture_output=True, text=True).stdout
    valid_body = text[text.index("func testTextParse(t testing.TB)"):text.index("func TestTextParse(")]
    error_body = text[text.index("func testTextParseError(t testing.TB)"):text.index("func TestTextParseError(")]
    valid, invalid = scenarios(valid_body), scenarios(error_body)
    assert [e["index"] for e in valid] == list(range(len(valid)))
    assert [e["index"] for e in invalid] == list(range(len(invalid)))
    document = {
        "source": {"repository": "https://github.com/prometheus/common", "commit": commit,
                   "path": SOURCE, "license": "Apache-2.0"},
        "valid": [as_json(e) for e in valid],
        "invalid": [as_json(e) for e in invalid],
    }
    target = Path(__file__).with_name("text_parse_cases.json")
    target.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{target}: {len(valid)} valid, {len(invalid)} invalid")


if __name__ == "__main__":
    main(*sys.argv[1:])
