"""The Cerberus meta-schema every spec file must satisfy before it is used.

Only the shape is checked here; names that need the registries (assertion kinds, hooks,
loaders) and the syntax of JSONPaths, pointers and formulas are checked when compiling,
with the same file:line:column reporting.
"""

from __future__ import annotations

FORMAT_VERSIONS = [1]
RULE_ID = r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$"
SPEC_ID = r"^[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)*$"
NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"

_CONDITION = {"type": "dict", "schema": {"given": {"type": "string", "required": True}},
              "allow_unknown": True}

RULE = {
    "id": {"type": "string", "required": True, "regex": RULE_ID},
    "description": {"type": "string", "required": True, "empty": False},
    "clause": {"type": "string"},
    "severity": {"type": "string", "allowed": ["error", "warning"]},
    "for_each": {"type": "string", "regex": NAME},
    "when": _CONDITION,
    "given": {"type": "string"},
    "optional": {"type": "boolean"},
    "assert": {"type": "dict", "minlength": 1, "maxlength": 1,
               "excludes": "hook", "required": True},
    "hook": {"type": "string", "excludes": "assert", "required": True},
    "args": {"type": "dict", "dependencies": "hook"},
    "message": {"type": "string"},
    "requires": {"type": "list", "schema": {"type": "string", "regex": RULE_ID}},
    # a child's rule replacing the inherited rule of this id in place, under its own id
    "renamed_from": {"type": "string", "regex": RULE_ID},
    # a child's rule with an inherited id replaces that rule only when it says so
    "replaces": {"type": "boolean"},
    # history, kept in the resolved spec: a revision or spec id, free text
    "since": {"type": "string", "empty": False},
    "changed_in": {"type": "string", "empty": False},
}

DOCUMENT = {
    "loader": {"type": "string", "required": True},
    "description": {"type": "string"},
    "options": {"type": "dict"},
    "entry": {"type": "boolean"},
    "path": {"type": "string", "excludes": ["path_from", "entry"]},
    "path_from": {"type": "string", "excludes": ["path", "entry"]},
    "each": {"type": "string", "regex": NAME},
    "rule": {"type": "string", "regex": RULE_ID},
    # the name of an entry of the spec's `shapes`: the document's declared structure
    "shape": {"type": "string", "regex": NAME},
}

ITERATION = {
    "over": {"type": "string", "required": True},
    "parent": {"type": "string", "regex": NAME},
    "label": {"type": "string"},
    "description": {"type": "string"},
}

METRIC = {
    "key": {"type": "string", "required": True},
    "unit": {"type": "string", "required": True},
    "description": {"type": "string"},
    "contract": {"type": ["dict", "string"]},  # a whole "${constant}" is allowed
    "hook": {"type": "string", "required": True},
    "for_each": {"type": "string", "regex": NAME},
    "when": _CONDITION,
    "given": {"type": "string", "required": True},
    "label": {"type": "string"},
    "args": {"type": "dict"},
}

PAIR_RULE = {
    "id": {"type": "string", "required": True, "regex": RULE_ID},
    "description": {"type": "string", "required": True},
    "identity": {"type": "string", "required": True},
    "clause": {"type": "string"},
}

SPEC = {
    "flarespec": {"type": "integer", "required": True, "allowed": FORMAT_VERSIONS},
    "id": {"type": "string", "required": True, "regex": SPEC_ID},
    "title": {"type": "string", "required": True},
    "description": {"type": "string"},
    "extends": {"type": "string", "regex": SPEC_ID},
    "applies_to": _CONDITION,
    # a draft is never chosen for a packet nor written by default: used only when named
    "draft": {"type": "boolean"},
    "limits": {"type": "string"},
    # the registered packet writer of `flarespec fixture write` (inherited through extends)
    "writer": {"type": "string", "regex": NAME},
    "constants": {"type": "dict", "keysrules": {"type": "string", "regex": NAME}},
    # named shapes (a node: a mapping, or the name of a type or of another shape); the
    # keys inside a node are checked when compiling (engine/shapes.py, spec/compile.py)
    "shapes": {"type": "dict", "keysrules": {"type": "string", "regex": NAME},
               "valuesrules": {"type": ["dict", "string"]}},
    "documents": {"type": "dict", "keysrules": {"type": "string", "regex": NAME},
                  "valuesrules": {"type": "dict", "schema": DOCUMENT}},
    "iterations": {"type": "dict", "keysrules": {"type": "string", "regex": NAME},
                   "valuesrules": {"type": "dict", "schema": ITERATION}},
    "rules": {"type": "list", "schema": {"type": "dict", "schema": RULE}},
    "drop_rules": {"type": "list", "schema": {"type": "string", "regex": RULE_ID}},
    "drop_documents": {"type": "list", "schema": {"type": "string", "regex": NAME}},
    "identities": {"type": "dict", "keysrules": {"type": "string", "regex": NAME}},
    "pair": {"type": "list", "schema": {"type": "dict", "schema": PAIR_RULE}},
    "metric": {"type": "dict", "schema": METRIC},
}


def shape_errors(document: dict, schema: dict = SPEC) -> list[tuple[tuple, str]]:
    """(path inside the document, message) for every shape error Cerberus finds against
    ``schema`` (a spec's by default; fixtures/catalog.py declares a catalog's). A field
    whose rules carry ``meta`` (what it must be: "true or false") is refused in those words."""
    import cerberus

    validator = cerberus.Validator(schema)
    if validator.validate(document):
        return []
    found: list[tuple[tuple, str]] = []

    def walk(errors):
        for error in errors:
            if error.is_group_error:
                walk(error.child_errors)
            else:
                found.append((tuple(error.document_path), _say(error, schema)))
    walk(validator._errors)
    return found


# How each cerberus error reads, by its code's name; {field}, {constraint} and {value} are
# shown with repr. Any other error is worded generically.
_WORDING = {
    "UNKNOWN_FIELD": "unknown key {field}",
    "REQUIRED_FIELD": "missing required key {field}",
    "EXCLUDES_FIELD": "{field} cannot be combined with {constraint}",
    "REGEX_MISMATCH": "{field}: {value} does not match {bare_constraint}",
    "UNALLOWED_VALUE": "{field}: {value} is not one of {bare_constraint}",
    "BAD_TYPE": "{field} must be of type {bare_constraint}",
    "DEPENDENCIES_FIELD": "{field} needs {constraint}",
}
# errors about which keys are there, worded as such even where the field has a `meta` wording
_ABOUT_KEYS = ("UNKNOWN_FIELD", "REQUIRED_FIELD", "EXCLUDES_FIELD", "DEPENDENCIES_FIELD")


def _say(error, schema: dict) -> str:
    from cerberus import errors as codes

    names = {getattr(codes, name).code: name for name in _WORDING}
    name = names.get(error.code)
    field = error.field
    must = _rules_at(schema, error.schema_path).get("meta")
    if must and name not in _ABOUT_KEYS:
        return f"{'item ' if isinstance(field, int) else ''}{field!r} must be {must}"
    if name is None:
        return f"{field!r}: {error.rule} {error.constraint!r} violated (value {error.value!r})"
    return _WORDING[name].format(field=repr(field), constraint=repr(error.constraint),
                                 value=repr(error.value), bare_constraint=error.constraint)


def _rules_at(schema: dict, schema_path) -> dict:
    """The rules of the field an error's ``schema_path`` (ending in the failed rule) names."""
    rules = schema
    for step in schema_path[:-1]:
        rules = rules.get(step, {}) if isinstance(rules, dict) else {}
    return rules if isinstance(rules, dict) else {}
