"""Issue 23 items 4 and 14: a kind's argument is checked against its schema at load, and a
{ref} argument once it is read.

* order_equals's ``format`` is a template of the spec's own grammar (engine/paths.py),
  never Python's ``str.format``: a placeholder is one axis of ``product``; a format spec
  (``{n:>999999999}``: 76 s and 6.7 GB before), a conversion (``{n!r}``), an attribute
  (``{n.__class__.__init__}``), a position (``{0}``) or an unknown name (``{zz}``) is a
  ``spec.kind-argument`` at the argument's file:line:column, found by lint;
* arguments that are mistyped or can never hold are refused at load;
* a {ref} argument read with the wrong type is a violation of the rule saying what the
  kind wants and what it got (not Python's words, not a silent pass).
"""

from __future__ import annotations

import itertools
from decimal import Decimal
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_kinds import RULE, check, run

from flarespec.engine.kinds import KINDS, ArgumentMistyped, _expand, _generated
from flarespec.compiler.compile import compile_spec
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import SpecLibrary
from flarespec.compiler.resolve import resolve

HEAD = """\
flarespec: 1
id: toy/case
title: Toy case
documents:
  doc: {loader: json, entry: true}
rules:
  - id: toy.kind
    description: The kind under test.
    given: "doc:$.v[*]"
"""  # the rule's next key is on line 10


def issues(tmp_path, assertion: str) -> list[tuple[int, int, str, str]]:
    """(line, column, code, message) of every issue compiling HEAD + ``assert: ...``."""
    path = tmp_path / "case.yaml"
    path.write_text(HEAD + textwrap.indent(textwrap.dedent(assertion), "    "))
    with pytest.raises(SpecInvalid) as caught:
        library = SpecLibrary([tmp_path])
        compile_spec(resolve(library.get("toy/case"), library))
    found = []
    for issue in caught.value.issues:
        assert issue.mark.file == str(path)
        assert str(issue).startswith(f"{path}:{issue.mark.line}:{issue.mark.column}: ")
        found.append((issue.mark.line, issue.mark.column, issue.code, issue.message))
    return found


# --------------------------------------------------------------------------- item 4: format
PRODUCT = "product: {n: [1, 2]}"


@pytest.mark.parametrize("placeholder, why", [
    ("{n:>999999999}", "placeholder {n:>999999999} names no axis of product (n)"),
    ("{zz}", "placeholder {zz} names no axis of product (n)"),
    ("{n.__class__.__init__}", "placeholder {n.__class__.__init__} names no axis of product"),
    ("{n!r}", "{n!r}"),
    ("{0}", "{0}"),
    ("{n", "unbalanced braces"),
])
def test_a_format_placeholder_that_is_no_axis_is_refused_at_its_line(tmp_path, placeholder,
                                                                     why):
    [(line, column, code, message)] = issues(tmp_path, f"""\
        assert:
          order_equals:
            format: "s{placeholder}"
            {PRODUCT}
        """)
    assert (line, column, code) == (11, 7, "spec.kind-argument")
    assert message.startswith(f'order_equals: format "s{placeholder}": ')
    assert why in message


def test_the_format_wants_a_string_and_the_product_its_axes(tmp_path):
    [(_, _, code, message)] = issues(tmp_path, "assert: {order_equals: {format: 5}}\n")
    assert (code, message) == ("spec.kind-argument", "order_equals: format wants a string "
                               "(a template over the axes of product), got integer 5")
    [(_, _, code, message)] = issues(
        tmp_path, "assert: {order_equals: {format: '{n}', product: {n: {range: -1}}}}\n")
    assert (code, message) == ("spec.kind-argument", "order_equals: product axis n range "
                               "wants a whole number >= 0, got integer -1")
    [(_, _, code, message)] = issues(
        tmp_path, "assert: {order_equals: {format: '{n}', product: {n: 3}}}\n")
    assert (code, message) == ("spec.kind-argument", "order_equals: product axis n wants a "
                               "list or {range: n}, got integer 3")


def test_a_format_renders_as_python_did_for_the_values_a_product_gives(tmp_path):
    """The bundled spec's formats, over axes of every JSON scalar: the template's text is
    str.format's of plain named fields (what the spec's formats were), value for value."""
    for template, names in (("r{repetition}.{kind}", ("repetition", "kind")),
                            ("{group}.q{index}", ("group", "index"))):
        axes = {names[0]: [0, 7, "r1", 1.5, True, None, -3],
                names[1]: ["warmup", 2, 10 ** 20, 0.1, False]}
        arg = {"format": template, "product": axes}
        assert KINDS["order_equals"].check(arg, set()) is None
        expected = [template.format(**dict(zip(names, combination)))
                    for combination in itertools.product(*axes.values())]
        assert _expand(*_generated(arg)) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(), st.text(alphabet="ab.{}", max_size=3),
                          st.floats(allow_nan=False), st.booleans(), st.none()),
                min_size=1, max_size=4),
       st.text(alphabet="xy.-", max_size=3))
def test_a_rendered_placeholder_is_the_value_as_str_format_wrote_it(values, literal):
    arg = {"format": f"{literal}{{a}}{literal}", "product": {"a": values}}
    assert _expand(*_generated(arg)) == [f"{literal}{{a}}{literal}".format(a=v) for v in values]


def test_a_generated_order_still_passes_and_fails_through_the_engine(tmp_path):
    generated = {"format": "r{r}.{kind}", "product": {"r": {"range": 2}, "kind": ["a", "b"]}}
    assert check(tmp_path, {"v": ["r0.a", "r0.b", "r1.a", "r1.b"]}, {"order_equals": generated},
                 given="doc:$.v[*]") == []
    assert check(tmp_path / "b", {"v": ["r0.a", "r0.b", "r1.a"]}, {"order_equals": generated},
                 given="doc:$.v[*]") == [("doc:$.v[*]", 'missing "r1.b"')]


# --------------------------------------------------------------------------- item 14: at load
@pytest.mark.parametrize("assertion, message", [
    ("{range: {min: x}}", 'range: min wants a number (not NaN), got string "x"'),
    ("{range: {min: 3, max: 1}}", "range: min 3 and max 1 leave nothing that can hold"),
    ("{range: {min: 1, exclusive_max: 1}}",
     "range: min 1 and exclusive_max 1 leave nothing that can hold"),
    ("{range: {exclusive_min: 2, max: 2}}",
     "range: exclusive_min 2 and max 2 leave nothing that can hold"),
    ("{count: {equals: -1}}", "count: equals wants a whole number >= 0, got integer -1"),
    ("{count: {min: 1, max: 0}}", "count: min 1 and max 0 leave nothing that can hold"),
    ("{count: {equals: 5, max: 3, where: {equals: 1}}}",
     "count: equals 5 and max 3 leave nothing that can hold"),
    ("{length: {min: -1}}", "length: min wants a whole number >= 0, got integer -1"),
    ("{length: {equals: 1.5}}", "length: equals wants a whole number >= 0, got number 1.5"),
    ("{length: {equals: true}}", "length: equals wants a whole number >= 0, got boolean true"),
    ("{length: {min: 3, equals: 2}}", "length: min 3 and equals 2 leave nothing that can hold"),
    ("{one_of: []}", "one_of: wants a non-empty list, got array []"),
    ("{keys: [1, 2]}", "keys: item 0 wants a string (a member name), got integer 1"),
])
def test_an_argument_mistyped_or_never_holding_is_refused_at_its_line(tmp_path, assertion,
                                                                     message):
    assert issues(tmp_path, f"assert: {assertion}\n") == [
        (10, 14, "spec.kind-argument", message)]


@pytest.mark.parametrize("assertion", [
    "{range: {min: 1, max: 1}}", "{range: {exclusive_min: 1, max: 2}}",
    "{count: {equals: 0}}", "{length: {min: 2, max: 2, equals: 2}}", "{one_of: [1]}",
    "{keys: []}", "{order_equals: {format: 'x'}}", "{order_equals: {format: 's{ n }', "
    "product: {n: {range: 0}}}}",
])
def test_an_argument_that_can_hold_is_accepted(tmp_path, assertion):
    (tmp_path / "case.yaml").write_text(HEAD + f"    assert: {assertion}\n")
    library = SpecLibrary([tmp_path])
    compile_spec(resolve(library.get("toy/case"), library))


def test_a_bound_read_per_binding_is_not_judged_at_load(tmp_path):
    (tmp_path / "case.yaml").write_text(
        HEAD + "    assert: {range: {min: {ref: 'doc:$.low'}, max: 1}}\n")
    library = SpecLibrary([tmp_path])
    compile_spec(resolve(library.get("toy/case"), library))


# --------------------------------------------------------------------------- item 14: read
@pytest.mark.parametrize("doc, assertion, given, message", [
    ({"v": "abc", "p": 5}, {"starts_with": {"ref": "doc:$.p"}}, "doc:$.v",
     "starts_with: wants a string, got integer 5"),
    ({"v": "a", "p": "abc"}, {"one_of": {"ref": "doc:$.p"}}, "doc:$.v",  # passed silently
     'one_of: wants a non-empty list, got string "abc"'),
    ({"v": 3, "p": "x"}, {"range": {"min": {"ref": "doc:$.p"}}}, "doc:$.v",
     'range: min wants a number (not NaN), got string "x"'),
    ({"v": 3, "p": True}, {"range": {"max": {"ref": "doc:$.p"}}}, "doc:$.v",  # True == 1
     "range: max wants a number (not NaN), got boolean true"),
    ({"v": [1], "p": "1"}, {"length": {"equals": {"ref": "doc:$.p"}}}, "doc:$.v",
     'length: equals wants a whole number >= 0, got string "1"'),
    ({"v": {"a": 1}, "p": [1]}, {"keys": {"ref": "doc:$.p"}}, "doc:$.v",
     "keys: item 0 wants a string (a member name), got integer 1"),
    ({"v": "abc", "p": 5}, {"not": {"starts_with": {"ref": "doc:$.p"}}}, "doc:$.v",
     "not: starts_with: wants a string, got integer 5"),
    ({"v": [1, 2], "p": "x"}, {"count": {"equals": 1, "where": {"one_of": {"ref": "doc:$.p"}}}},
     "doc:$.v[*]", 'count: one_of: wants a non-empty list, got string "x"'),
    ({"v": ["s0"], "p": "lots"},
     {"order_equals": {"format": "s{n}", "product": {"n": {"range": {"ref": "doc:$.p"}}}}},
     "doc:$.v[*]", 'order_equals: product axis n range wants a whole number >= 0, got string '
                   '"lots"'),
])
def test_a_ref_argument_of_the_wrong_type_is_a_violation_saying_what_was_expected(
        tmp_path, doc, assertion, given, message):
    assert check(tmp_path, doc, assertion, given=given) == [
        (None, f"cannot evaluate: {message} (the argument as read here)")]


def test_a_condition_with_a_mistyped_ref_argument_is_a_violation_of_its_rule(tmp_path):
    report = run(tmp_path, {"v": "abc", "p": 5}, {"present": True},
                 when={"given": "doc:$.v", "starts_with": {"ref": "doc:$.p"}})
    assert [(v.rule, v.message) for v in report.violations] == [
        (RULE, "cannot evaluate: starts_with: wants a string, got integer 5 (the argument "
               "as read here)")]


def test_a_ref_read_over_nothing_is_the_evidences_to_fail_not_a_mistyped_argument(tmp_path):
    """What can never hold is refused in the spec's own argument; read from the evidence,
    an empty list is the kind's ordinary failure."""
    assert check(tmp_path, {"v": "a", "p": []}, {"one_of": {"ref": "doc:$.p[*]", "all": True}}
                 ) == [("$.v", "is not one of the allowed values")]
    assert check(tmp_path / "b", {"v": [1, 2], "lo": 3, "hi": 1},
                 {"length": {"min": {"ref": "doc:$.lo"}, "max": {"ref": "doc:$.hi"}}}) == [
        ("$.v", "length is 2, expected at least 3"), ("$.v", "length is 2, expected at most 1")]


def test_holds_for_refuses_a_mistyped_argument_rather_than_deciding():
    """The pass plans and element loops decide a read argument with ``holds_for``: a
    mistyped one raises (the reporting path then words it), never a verdict."""
    with pytest.raises(ArgumentMistyped, match="one_of: wants a non-empty list"):
        KINDS["one_of"].holds_for(None, ["a"], "abc")
    with pytest.raises(ArgumentMistyped, match=r"range: min wants a number \(not NaN\), got "
                                               r"number NaN"):  # a Prometheus value
        KINDS["range"].holds_for(None, [1], {"min": Decimal("NaN")})
    assert KINDS["one_of"].holds_for(None, ["a"], ["a", "b"]) is True


# --------------------------------------------------------------------------- item 14: shapes
@pytest.mark.parametrize("shape, column, message", [
    ("{type: string, length: {min: 3, max: 1}}", 23,
     "shape key 'length' wants {min, max} with min at most max, got {'min': 3, 'max': 1}"),
    ("{type: integer, min: 5, max: 1}", 24, "shape min 5 is above max 1: no number has this "
                                            "shape"),
])
def test_a_shape_whose_bounds_leave_nothing_is_refused_at_its_line(tmp_path, shape, column,
                                                                  message):
    path = tmp_path / "case.yaml"
    path.write_text(f"flarespec: 1\nid: toy/case\ntitle: T\nshapes:\n  doc: {shape}\n"
                    f"documents:\n  doc: {{loader: json, entry: true, shape: doc}}\n")
    library = SpecLibrary([tmp_path])
    with pytest.raises(SpecInvalid) as caught:
        compile_spec(resolve(library.get("toy/case"), library))
    assert [(i.mark.line, i.mark.column, i.code, i.message) for i in caught.value.issues] == [
        (5, column, "spec.document-shape", message)]
