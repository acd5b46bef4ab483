"""Issue 24: specs of any benchmark tool beside the bundled ones.

An entry document may declare its file's name (``file_name``: exact or a glob); selection
tries a spec only for an entry so named, and ``spec lint`` no longer warns
``spec.applies-to-undecided`` between specs that can never be tried for one file (a user's
AIPerf spec against the bundled Flare spec). Spec directories (``--specs DIR``,
``FLARESPEC_SPECS``) add every ``*.yaml`` under them as a library beside the bundled one.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from flarespec.authoring.lint import lint
from flarespec.review.diff import diff_specs
from flarespec.review.render import label
from flarespec.compiler.entry_name import name_matches, names_exclusive
from flarespec.compiler.errors import SpecInvalid
from flarespec.compiler.load import read_spec_file

UNDECIDED = "spec.applies-to-undecided"
BUNDLED = "flare/bce032c0"


def user_spec(spec_id: str = "bench/profile", file_name: str | None = "profile.json",
              applies_to: str = "{given: 'profile:$.schema', equals: profile-v1}",
              draft: bool = False) -> str:
    """A small spec of another tool's entry file (one JSON document, one rule)."""
    name = f", file_name: '{file_name}'" if file_name is not None else ""
    return textwrap.dedent(f"""\
        flarespec: 1
        id: {spec_id}
        title: A benchmark profile
        {"draft: true" if draft else ""}
        applies_to: {applies_to}
        shapes:
          profile: {{type: object, members: {{schema: string, requests: integer}}}}
        documents:
          profile: {{loader: json, entry: true{name}, rule: bench.profile, shape: profile}}
        rules:
          - id: bench.profile.requests
            description: At least one request was sent.
            given: "profile:$.requests"
            assert: {{range: {{min: 1}}}}
        """)


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def codes(result) -> list[str]:
    return [issue.code for issue in result.issues]


# --------------------------------------------------------------------------- file_name
@pytest.mark.parametrize("first, second, exclusive", [
    ("packet.json", "profile.json", True),         # two literal names
    ("packet.json", "packet.json", False),         # the same name
    ("packet.json", "Packet.json", True),          # case matters
    ("profile_*.json", "packet.json", True),       # a literal the glob does not match
    ("*.json", "packet.json", False),              # ... and one it matches
    ("a*.json", "b*.json", False),                 # two globs: never proved here
    (None, "packet.json", False),                  # any name
])
def test_two_entry_file_names_are_exclusive_only_when_no_name_matches_both(first, second,
                                                                           exclusive):
    assert names_exclusive(first, second) is exclusive
    assert names_exclusive(second, first) is exclusive


def test_a_file_name_is_exact_or_an_fnmatch_glob_case_sensitive():
    assert name_matches("profile_*.json", "profile_export.json")
    assert not name_matches("profile_*.json", "PROFILE_export.json")
    assert name_matches("packet.json", "packet.json")
    assert not name_matches("packet.json", "packet.jso")
    assert name_matches(None, "anything")


def test_file_name_belongs_to_the_entry_document_only(tmp_path):
    text = user_spec().replace("rule: bench.profile, shape: profile}",
                               "rule: bench.profile, shape: profile}\n"
                               "  notes: {loader: text, path: notes.txt, file_name: n.txt}")
    path = write(tmp_path, "spec.yaml", text)
    with pytest.raises(SpecInvalid) as raised:
        read_spec_file(path)
    [issue] = raised.value.issues
    assert issue.code == "spec.shape"
    assert issue.message == "'file_name' needs entry: true"
    path = write(tmp_path, "dir.yaml", user_spec(file_name="runs/profile.json"))
    with pytest.raises(SpecInvalid) as raised:
        read_spec_file(path)
    assert [i.code for i in raised.value.issues] == ["spec.shape"]


def test_the_bundled_flare_spec_names_its_entry_file_packet_json():
    from flarespec.compiler.entry_name import entry_file_name
    from flarespec.compiler.open import open_compiled

    assert entry_file_name(open_compiled(BUNDLED).resolved.data) == "packet.json"


def test_spec_diff_classes_a_changed_entry_file_name_as_review():
    old = {"id": "t/a", "title": "t", "documents": {"d": {"loader": "json", "entry": True}}}
    new = {"id": "t/b", "title": "t", "documents": {"d": {"loader": "json", "entry": True,
                                                          "file_name": "x.json"}}}
    [change] = diff_specs(old, new).changes
    assert (label(change), change.cls, change.what) == \
        ("document d file_name", "review", "entry file_name added")


# --------------------------------------------------------------------------- lint
def test_a_user_spec_with_its_own_file_name_is_not_undecided_against_the_bundled_one(
        tmp_path):
    [result] = lint([str(write(tmp_path, "profile.yaml", user_spec()))])
    assert result.compiled is not None, result.issues
    assert UNDECIDED not in codes(result), [i.message for i in result.issues]
    assert codes(result) == []


def test_a_user_spec_without_file_name_is_still_undecided_against_the_bundled_one(tmp_path):
    [result] = lint([str(write(tmp_path, "profile.yaml", user_spec(file_name=None)))])
    assert {issue.code for issue in result.issues} == {UNDECIDED}
    assert any(f"'{BUNDLED}'" in issue.message for issue in result.issues)


def test_two_user_specs_of_one_file_name_with_undecidable_applies_to_still_warn(tmp_path):
    present = "{given: 'profile:$.schema', present: true}"
    one = write(tmp_path, "one.yaml", user_spec("bench/one", applies_to=present))
    two = write(tmp_path, "two.yaml", user_spec("bench/two", applies_to=present))
    results = lint([str(one), str(two)])
    assert [codes(r) for r in results] == [[UNDECIDED], [UNDECIDED]]
    assert "'bench/two'" in results[0].issues[0].message
    assert BUNDLED not in results[0].issues[0].message


def test_two_user_specs_of_different_file_names_do_not_warn(tmp_path):
    present = "{given: 'profile:$.schema', present: true}"
    one = write(tmp_path, "one.yaml", user_spec("bench/one", "a.json", applies_to=present))
    two = write(tmp_path, "two.yaml", user_spec("bench/two", "b*.json", applies_to=present))
    assert [codes(r) for r in lint([str(one), str(two)])] == [[], []]
