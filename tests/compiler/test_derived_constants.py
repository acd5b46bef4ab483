"""Derived constants: a constant computed from others (``${a.b}``, ``${a.b + c}``), after the
extends merge, each after what it reads; cycles, unknown names and what cannot be computed
are refused with their codes at the constant's line (compiler/resolve.py, compiler/tokens.py).
And lint's cross-check where a child writes out what a parent computes
(authoring/restated.py)."""

from __future__ import annotations

import textwrap

import pytest

from flarespec.authoring.lint import lint
from flarespec.compiler.errors import WARNING, SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

RULES = """\
shapes:
  doc: {type: object, members: {a: number}}
documents:
  doc: {loader: json, entry: true, shape: doc}
rules:
  - id: toy.a
    description: A rule.
    given: "doc:$.a"
    assert: {equals: EQUALS}
"""


def spec(spec_id: str, constants: str, extends: str | None = None,
         equals: str = "1") -> str:
    """A spec file; a child (``extends``) holds constants only."""
    head = f"flarespec: 1\nid: {spec_id}\ntitle: T\n" + (f"extends: {extends}\n" if extends else "")
    text = head + "constants:\n" + textwrap.indent(textwrap.dedent(constants), "  ")
    return text if extends else text + RULES.replace("EQUALS", equals)


PARENT = """\
base: {size: 4096, name: big}
extra: 512
rows:
  - {name: small, size: 512, reused: 0}
  - {name: big, size: "${base.size + extra}", reused: "${base.size}"}
"""  # constants start at line 5: base 5, extra 6, rows 7, row 0 at 8, row 1 at 9


def resolved(tmp_path, files: dict[str, str], spec_id: str):
    for name, text in files.items():
        (tmp_path / f"{name}.yaml").write_text(text)
    library = SpecLibrary([tmp_path])
    return resolve(library.get(spec_id), library)


def refused(tmp_path, constants: str) -> list[tuple]:
    with pytest.raises(SpecInvalid) as caught:
        resolved(tmp_path, {"t": spec("toy/t", constants)}, "toy/t")
    return [(i.mark.line, i.mark.column, i.code, i.message) for i in caught.value.issues]


def test_a_derived_constant_is_a_typed_value(tmp_path):
    result = resolved(tmp_path, {"p": spec("toy/p", PARENT, equals='"${rows.1.size}"')}, "toy/p").plain()
    assert result["constants"]["rows"][1] == {"name": "big", "size": 4608, "reused": 4096}
    assert type(result["constants"]["rows"][1]["size"]) is int
    assert result["rules"][0]["assert"] == {"equals": 4608}  # rules read the computed value


def test_a_child_overriding_what_a_row_reads_gets_the_row_that_follows(tmp_path):
    child = spec("toy/c", "base: {size: 2048, name: big}\n", extends="toy/p")
    result = resolved(tmp_path, {"p": spec("toy/p", PARENT, equals='"${rows.1.size}"'), "c": child}, "toy/c").plain()
    assert result["constants"]["rows"][1] == {"name": "big", "size": 2560, "reused": 2048}
    assert result["rules"][0]["assert"] == {"equals": 2560}


def test_values_are_computed_in_dependency_order_not_file_order(tmp_path):
    result = resolved(tmp_path, {"t": spec("toy/t", """\
        total: "${sum(rows.*.size)}"
        label: "rows of ${total} tokens"
        alias: "${rows}"
        first: "${alias.1.size * 2}"
        rows:
          - {name: a, size: 1}
          - {name: b, size: "${unit / 2}"}
        unit: 6
        """)}, "toy/t").plain()["constants"]
    assert (result["total"], result["label"], result["first"]) == (4.0, "rows of 4.0 tokens", 6.0)
    assert result["alias"] == result["rows"] == [{"name": "a", "size": 1}, {"name": "b", "size": 3.0}]


@pytest.mark.parametrize("constants, found", [
    ('a: "${b}"\nb: "${a}"\n', [
        (5, 3, "constant a is computed from itself: a -> b -> a"),
        (6, 3, "constant b is computed from itself: b -> a -> b")]),
    ('a: "${a + 1}"\n', [(5, 3, "constant a is computed from itself: a -> a")]),
    # a member cannot read the mapping that holds it
    ('m: {n: "${m}", o: 1}\n', [(5, 7, "constant m.n is computed from itself: m.n -> m.n")]),
    ('rows:\n  - {k: x, n: "${rows.1.n}"}\n  - {k: y, n: "${rows.0.n + 1}"}\n', [
        (6, 14, "constant rows.0.n is computed from itself: rows.0.n -> rows.1.n -> rows.0.n"),
        (7, 14, "constant rows.1.n is computed from itself: rows.1.n -> rows.0.n -> rows.1.n")]),
])
def test_a_cycle_is_refused_at_each_of_its_constants(tmp_path, constants, found):
    issues = refused(tmp_path, constants)
    assert [(line, column, code) for line, column, code, _ in issues] == \
        [(line, column, "spec.constant-cycle") for line, column, _ in found]
    assert [message.split(" (")[0] for *_, message in issues] == [m for *_, m in found]


def test_a_reader_of_a_cycle_is_left_as_written_and_not_reported_again(tmp_path):
    issues = refused(tmp_path, 'a: "${b}"\nb: "${a}"\nc: "${a + 1}"\n')
    assert {code for _, _, code, _ in issues} == {"spec.constant-cycle"}
    assert [line for line, *_ in issues] == [5, 6]


@pytest.mark.parametrize("constants, line, column, code, message", [
    ('x: 1\ny: "${nope + 1}"\n', 6, 3, "spec.unknown-constant", "unknown constant ${nope}"),
    ('x: {a: 1}\ny: "${x.b}"\n', 6, 3, "spec.unknown-constant", "unknown constant ${x.b}"),
    ('rows:\n  - {k: x, n: "${rows.5.n}"}\n', 6, 14, "spec.unknown-constant",
     "unknown constant ${rows.5.n}"),
    ('x: text\ny: "${x + 1}"\n', 6, 3, "spec.constant-expression",
     "${x + 1} cannot be computed: field 'x' is not a number: string \"text\""),
    ('x: 0\ny: "${1 / x}"\n', 6, 3, "spec.constant-expression",
     "${1 / x} cannot be computed: division by zero (1 / 0)"),
    ('x: 1\ny: "${x +}"\n', 6, 3, "spec.constant-syntax", "'${x +}' is not a constant"),
    ('x: 1\ny: "${x < 2}"\n', 6, 3, "spec.constant-syntax", "'${x < 2}' is not a constant"),
])
def test_what_cannot_be_computed_is_refused_at_the_constants_line(tmp_path, constants, line,
                                                                    column, code, message):
    ((found_line, found_column, found_code, found_message),) = refused(tmp_path, constants)
    assert (found_line, found_column, found_code) == (line, column, code)
    assert found_message.startswith(message)


def test_an_unknown_name_in_a_constant_is_found_by_lint_with_the_rest(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text(spec("toy/t", 'x: 1\ny: "${nope}"\nz: "${z}"\n'))
    [result] = lint([str(path)])
    assert [(i.mark.line, i.code) for i in result.errors] == [
        (7, "spec.constant-cycle"), (6, "spec.unknown-constant")]


# ------------------------------------------------------------ lint: restated in a child
def child_lint(tmp_path, constants: str) -> list[tuple]:
    (tmp_path / "p.yaml").write_text(spec("toy/p", PARENT, equals='"${rows.1.size}"'))
    path = tmp_path / "c.yaml"
    path.write_text(spec("toy/c", constants, extends="toy/p"))
    [result] = lint([str(path)])
    assert result.errors == []
    return [(i.mark.line, i.mark.column, i.message) for i in result.issues
            if i.code == "spec.constant-restated" and i.severity == WARNING]


def test_lint_warns_where_a_childs_row_disagrees_with_what_the_parent_computes(tmp_path):
    found = child_lint(tmp_path, """\
        base: {size: 2048, name: big}
        rows:
          - {name: small, size: 512, reused: 0}
          - {name: big, size: 4608, reused: 2048}
        """)  # size kept from before base changed; reused agrees (restated, no warning)
    assert found == [
        (9, 19, "constants rows.1.size is 4608, but toy/p computes it as '${base.size + extra}', "
                "which is 2560 with this spec's constants: write '${base.size + extra}' (it "
                "then follows them), or change the constants it reads")]


def test_a_row_is_matched_by_its_first_member_and_a_derived_child_row_is_quiet(tmp_path):
    found = child_lint(tmp_path, """\
        rows:
          - {name: huge, size: 9000, reused: 0}
          - {name: big, size: "${base.size + extra}", reused: 7}
          - {name: small, size: 512, reused: 0}
        """)
    assert [(line, message.split(",")[0]) for line, _, message in found] == [
        (8, "constants rows.1.reused is 7")]


def test_rows_without_an_identity_are_matched_by_position(tmp_path):
    (tmp_path / "p.yaml").write_text(spec("toy/p", 'n: 2\nlist: [1, "${n * 2}"]\n'))
    path = tmp_path / "c.yaml"
    path.write_text(spec("toy/c", "n: 3\nlist: [1, 4]\n", extends="toy/p"))
    [result] = lint([str(path)])
    assert [(i.mark.line, i.mark.column, i.message.split(",")[0]) for i in result.warnings
            if i.code == "spec.constant-restated"] == [(7, 13, "constants list.1 is 4")]
