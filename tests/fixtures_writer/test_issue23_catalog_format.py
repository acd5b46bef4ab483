"""Issue 23 item 4, the same hole in catalogs: a catalog name's ``format`` was Python's
str.format on catalog text (``{n:>999999999}`` ran for a minute; ``{n.__class__}`` rendered
internals; ``{0}`` was an IndexError). It is the spec's template grammar now, each
placeholder one field of the name."""

from __future__ import annotations

import pytest

from flarespec.fixtures.catalog import CatalogError, resolve_names


def test_a_format_fills_its_fields_as_before():
    names = {"g": {"format": "r{repetition}.{kind}", "repetition": 0, "kind": "ttft"}}
    assert resolve_names(names, {}) == {"g": "r0.ttft"}


@pytest.mark.parametrize("text", ["{n:>999999999}", "{n.__class__.__init__}", "{n!r}", "{0}",
                                  "{zz}", "{n@index}", "{n", "{doc:$.x}"])
def test_any_other_placeholder_is_a_catalog_error(text):
    with pytest.raises(CatalogError):
        resolve_names({"g": {"format": text, "n": 1}}, {})
