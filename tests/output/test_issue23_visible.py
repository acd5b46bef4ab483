"""Issue 23: packet text reaching a terminal or a CI log, through every format.

A finding's strings (message, file, location, expected, actual, details, facts) may hold
anything a JSON string can: line breaks that start a line of their own (``::error …``,
``::add-mask::…``: GitHub workflow commands), OSC/BEL and other control characters, the
runners' legacy ``##[command]`` anywhere in a line, U+2028, lone surrogates (which broke
the write of stdout). Every human format (text, markdown, github, junit) shows them as
visible escapes and cuts long strings; json and sarif keep the exact strings in JSON's
own escapes, encodable. A hypothesis test checks the invariants on arbitrary strings.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree

from hypothesis import given
from hypothesis import strategies as st
from inert_output import check_inert

from flarespec.output import text
from flarespec.output.formats import FORMATS, render
from flarespec.output.model import WARNING, Finding, Report, Section
from flarespec.output.visible import SHOWN_LIMIT, json_visible, visible, visible_report

HOSTILE = "\n::error file=README.md,line=1::forged annotation\n::add-mask::secret.json"
OSC = "\x1b]0;pwned\x07"
HUMAN = ("text", "markdown", "github", "junit")
JSONS = ("json", "sarif")


def hostile_report(value: str, *, file: str | None = None) -> Report:
    """``value`` in every string of a finding, a heading, a note and the footer."""
    finding = Finding("rule.x", f"entry {value} names no referenced file",
                      file=file if file is not None else f"pkt/{value}.json", line=3,
                      location=f"$.files['{value}']", expected=value, actual={value: value},
                      details=(f"detail {value}", value), title=f"[packet] {value}",
                      facts=(("in", value),))
    section = Section(f"[packet] rule.x ({value})", [finding, Finding(
        "rule.y", value, WARNING, location=value)], notes=[value], rule="rule.x")
    return Report("measure", "flarespec measure: REJECTED", False, [section, Section(None, [
        Finding("rule.z", value)])], footer=[f"receipt: {value}"])


def outputs(report: Report) -> dict[str, str]:
    shown = {fmt: render(report, fmt) for fmt in FORMATS}
    shown.update({f"{fmt} -v": render(report, fmt, verbose=True) for fmt in ("text",
                                                                              "markdown")})
    return shown


def test_a_forged_workflow_command_in_a_manifest_key_starts_no_line_in_any_format():
    for fmt, out in outputs(hostile_report(HOSTILE + OSC)).items():
        check_inert(fmt.split()[0], out)
        if fmt.split()[0] in HUMAN:
            assert "\\n::error file=README.md" in out, fmt  # shown, escaped
            assert "\\x1b]0;pwned\\x07" in out or "\\\\x1b]0;pwned\\\\x07" in out, fmt


def test_json_and_sarif_keep_the_exact_strings():
    value = HOSTILE + OSC + "\x85\u2028\ud800 ##[add-mask]x ##vso[task.complete]"
    report = hostile_report(value)
    document = json.loads(render(report, "json"))
    finding = document["findings"][0]
    assert finding["location"] == f"$.files['{value}']" and finding["expected"] == value
    assert finding["actual"] == {value: value} and finding["details"] == [f"detail {value}",
                                                                         value]
    sarif = json.loads(render(report, "sarif"))
    assert sarif["runs"][0]["results"][0]["properties"]["expected"] == value
    for fmt in JSONS:
        check_inert(fmt, render(report, fmt))


def test_a_lone_surrogate_is_shown_escaped_and_every_format_encodes():
    report = hostile_report("x\ud800y")
    for fmt, out in outputs(report).items():
        out.encode("utf-8")
        assert "\\ud800" in out, fmt
    assert json.loads(render(report, "json"))["findings"][0]["expected"] == "x\ud800y"


def test_junit_is_well_formed_xml_whatever_the_text():
    value = "".join(map(chr, range(0, 0x20))) + "\x7f\ufffe\uffff\ud800"
    root = ElementTree.fromstring(render(hostile_report(value), "junit"))
    failure = root.find("testsuite").find("testcase").find("failure")
    assert "\\x00\\x01" in failure.get("message") and "\\ufffe" in failure.text


def test_legacy_commands_and_a_leading_colon_are_defused():
    assert visible("a ##[error]b ##vso[task.x]c ###[d") == \
        "a \\x23#[error]b \\x23#vso[task.x]c #\\x23#[d"
    assert visible("::error::x") == "\\x3a:error::x" and visible("  :x") == "  \\x3ax"
    assert visible("a::b") == "a::b"  # inside a line a colon pair is no command
    assert json.loads(json_visible(json.dumps("##[x]\u2028", ensure_ascii=False))) == "##[x]\u2028"


def test_visible_is_idempotent_and_leaves_plain_text_alone():
    plain = "packet.json $.files['corpus.json']: is object, expected string → ok…"
    assert visible(plain) == plain
    once = visible(HOSTILE + OSC + "##[x]")
    assert visible(once) == once


def test_a_long_string_is_cut_in_human_output_and_kept_in_json():
    """A 200 KB path in a message printed a 200 KB line (issue 23)."""
    long = "d/" * 10_000
    report = hostile_report(long)
    shown = outputs(report)
    for fmt in HUMAN:
        longest = max(len(line) for line in shown[fmt].split("\n"))
        assert longest < 12 * SHOWN_LIMIT, (fmt, longest)
    assert "(20000 characters)" in shown["text"]
    verbose = shown["text -v"].split("\n")  # values in full (asked for), every text cut
    assert max(len(line) for line in verbose if not re.match(r"\s*(expected|actual):", line)) \
        < 12 * SHOWN_LIMIT
    assert json.loads(shown["json"])["findings"][0]["expected"] == long


def test_the_fingerprint_is_the_original_strings():
    report = hostile_report(HOSTILE)
    before = [f.fingerprint for f in report.findings]
    assert [f.fingerprint for f in visible_report(report).findings] == before
    assert all(f"fingerprint {print_}" in render(report, "junit") for print_ in before[:1])
    assert hostile_report("x\ud800").findings[0].fingerprint  # hashes, no UnicodeEncodeError


def test_markdown_keeps_a_finding_from_breaking_its_table_or_adding_html():
    out = render(hostile_report("a | b <!-- ``c`` |"), "markdown")
    row = next(line for line in out.split("\n") if line.startswith("| error"))
    message = row.split("```")[-1]  # a code span shows its text literally; a cell does not
    assert "&lt;!--" in message and "<!--" not in message
    assert len(re.findall(r"(?<!\\)\|", row)) == 5  # four cells, whatever the text
    assert "```" in row  # a code span fenced past the text's own double backticks


def test_a_section_whose_findings_are_all_hidden_says_none_is_shown():
    """``warnings: 3`` then ``… and 3 more`` showed none: now ``3 not shown``."""
    section = Section("warnings: 3", [Finding("w", f"m{i}", WARNING) for i in range(3)],
                      limit=0, more=" (see the receipt, or --verbose)")
    report = Report("measure", "t", True, [section])
    shown = text.render(report)
    assert "  warnings: 3\n      3 not shown (see the receipt, or --verbose)" in shown
    assert "more" not in shown.replace("--verbose", "")
    assert "3 not shown (see the receipt, or --verbose)" in render(report, "markdown")
    assert "m2" in text.render(report, verbose=True)


FRAGMENTS = ["\n", "\r", "\r\n", "::", ":", "::error ", "::add-mask::", "##[", "##vso[", "#",
             " ", "\t", "\x1b]0;", "\x07", "\x1b[2J", "\x85", "\x9b", "\u2028", "\u2029",
             "\u202e", "\ud800", "\udfff", "\ufffe", "|", "<", "`", "%", "\\", "x", "é", "😀"]
ANY_CHARACTER = st.characters(exclude_categories=())  # surrogates and controls included
STRINGS = st.lists(st.one_of(st.sampled_from(FRAGMENTS), ANY_CHARACTER), max_size=12).map(
    "".join)


@given(value=STRINGS, file=STRINGS)
def test_no_string_a_finding_holds_reaches_a_log_raw_in_any_format(value, file):
    report = hostile_report(value, file=file or "f")
    for fmt, out in outputs(report).items():
        check_inert(fmt.split()[0], out)
    if value:
        document = json.loads(render(report, "json"))
        assert document["findings"][0]["expected"] == value
    if "\n" not in value:  # the human formats show a one-line value whole (escaped)
        assert visible(value, limit=None) in render(report, "text")


def test_a_progress_item_name_is_shown_inert():
    from flarespec.output.progress import _one_line

    assert _one_line("case \x1b]0;pwned\x07 ##[x]", 60) == "case \\x1b]0;pwned\\x07 \\x23#[x]"
