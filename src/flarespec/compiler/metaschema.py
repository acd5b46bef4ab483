"""The Cerberus meta-schema every spec file must satisfy before it is used.

Only the shape is checked here; names that need the registries (assertion kinds, hooks,
loaders) and the syntax of JSONPaths, pointers and formulas are checked when compiling,
with the same file:line:column reporting.
"""

from __future__ import annotations

import json

FORMAT_VERSIONS = [1]
RULE_ID = r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)+$"
SPEC_ID = r"^[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)*$"
NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
# a constant's name, or a child's dotted name of one member of an inherited constant
# (``derived_field.key``; a member as the token grammar spells it, resolve.py refuses a list)
CONSTANT_NAME = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_-]+)*$"
ENTRY_FILE_NAME = r"^[^/\\]+$"  # one path component: no directory, never empty

def _about(description: str, *examples) -> dict:
    """A field's ``meta`` for the JSON Schema of authoring/schema.py (editor hover text);
    a ``meta`` that is a string is instead the wording of the field's errors (see ``_say``)."""
    return {"description": description, **({"examples": list(examples)} if examples else {})}


_CONDITION = {"type": "dict", "schema": {"given": {"type": "string", "required": True,
                                                   "meta": _about("a reference: the places "
                                                                  "the condition checks")}},
              "allow_unknown": True,
              "meta": _about("a condition: `given` and exactly one assertion kind; it holds "
                             "when every place `given` selects passes the kind")}

RULE = {
    "id": {"type": "string", "required": True, "regex": RULE_ID,
           "meta": _about("the rule id, unique in the spec: at least two dot-separated "
                          "parts of a-z, 0-9, _ and -", "toy.item.colour")},
    "description": {"type": "string", "required": True, "empty": False,
                    "meta": _about("what the rule requires, in one sentence (required, "
                                   "non-empty)")},
    "clause": {"type": "string", "meta": _about("the normative clause it implements; free "
                                                "text (spec diff: wording)", "4.2")},
    "severity": {"type": "string", "allowed": ["error", "warning"],
                 "meta": _about("error (the default) rejects; warning is reported in "
                                "report.warnings only")},
    "for_each": {"type": "string", "regex": NAME,
                 "meta": _about("an iteration name: the rule runs once per binding of it")},
    "when": dict(_CONDITION, meta=_about("a condition evaluated per binding: the rule is "
                                         "skipped where it does not hold")),
    "given": {"type": "string", "meta": _about("a reference (target:selector): the places "
                                               "to check; required with assert",
                                               "item:$.colour")},
    "optional": {"type": "boolean", "meta": _about("true: an empty selection passes")},
    "assert": {"type": "dict", "minlength": 1, "maxlength": 1,
               "excludes": "hook", "required": True,
               "meta": _about("exactly one assertion kind and its argument (or hook and "
                              "args instead)")},
    "hook": {"type": "string", "excludes": "assert", "required": True,
             "meta": _about("instead of assert: a registered check hook")},
    "args": {"type": "dict", "dependencies": "hook",
             "meta": _about("the hook's argument values")},
    "message": {"type": "string", "meta": _about("a template replacing the kind's own "
                                                 "message: {detail}, {expected}, {actual}, "
                                                 "{file}, {location}, bound names")},
    "requires": {"type": "list", "schema": {"type": "string", "regex": RULE_ID},
                 "meta": _about("rule ids: skip this rule for a binding where one of them "
                                "failed")},
    # a child's rule replacing the inherited rule of this id in place, under its own id
    "renamed_from": {"type": "string", "regex": RULE_ID,
                     "meta": _about("in a child: the id of an inherited rule this rule "
                                    "replaces in place, under its own id")},
    # a child's rule with an inherited id replaces that rule only when it says so
    "replaces": {"type": "boolean",
                 "meta": _about("in a child: true when this rule's id is an inherited "
                                "rule's and it replaces that rule in place")},
    # history, kept in the resolved spec: a revision or spec id, free text
    "since": {"type": "string", "empty": False,
              "meta": _about("history: the revision or spec id the rule appeared in")},
    "changed_in": {"type": "string", "empty": False,
                   "meta": _about("history: the revision or spec id the rule last changed "
                                  "in")},
}

DOCUMENT = {
    "loader": {"type": "string", "required": True,
               "meta": _about("how the file is read (see docs/loaders.md)")},
    "description": {"type": "string", "meta": _about("free text")},
    "options": {"type": "dict", "meta": _about("a mapping passed to the loader")},
    "entry": {"type": "boolean", "meta": _about("true: this document is the entry, the file "
                                                "passed to evaluate (exactly one is)")},
    # selection only: a spec is tried for an entry file of this name (compiler/entry_name.py)
    "file_name": {"type": "string", "regex": ENTRY_FILE_NAME, "dependencies": {"entry": [True]},
                  "meta": _about("the entry's file name, exact or an fnmatch glob (case "
                                 "matters): spec selection tries this spec only for an entry "
                                 "file so named (entry: true only)", "packet.json",
                                 "profile_export_*.json")},
    "path": {"type": "string", "excludes": ["path_from", "entry"],
             "meta": _about("a template of the path relative to the root",
                            "shelves/{shelf.name}.json")},
    "path_from": {"type": "string", "excludes": ["path", "entry"],
                  "meta": _about("a reference selecting exactly one string: the path")},
    # no file: the document is parsed from a string member of another (engine/documents.py)
    "from": {"type": "string", "excludes": ["entry", "path", "path_from"],
             "meta": _about("a reference selecting exactly one string per binding: the "
                            "document is that string parsed by its loader, not a file",
                            "record:$.raw")},
    "each": {"type": "string", "regex": NAME,
             "meta": _about("an iteration: the document exists once per binding of it")},
    "rule": {"type": "string", "regex": RULE_ID,
             "meta": _about("prefix of the rule ids of this document's failures (default "
                            "document.<name>)")},
    # the name of an entry of the spec's `shapes`: the document's declared structure
    "shape": {"type": "string", "regex": NAME,
              "meta": _about("the name of an entry of shapes: the document's declared "
                             "structure")},
}

ITERATION = {
    "over": {"type": "string", "required": True,
             "meta": _about("a reference; each place it selects becomes one binding",
                            "index:$.shelves[*]")},
    "parent": {"type": "string", "regex": NAME,
               "meta": _about("another iteration: over is evaluated once per parent "
                              "binding")},
    "label": {"type": "string", "meta": _about("a template naming a binding in reports")},
    "description": {"type": "string", "meta": _about("free text")},
}

METRIC = {
    "key": {"type": "string", "required": True, "meta": _about("the metric's key")},
    "unit": {"type": "string", "required": True, "meta": _about("the metric's unit")},
    "description": {"type": "string", "meta": _about("free text")},
    "contract": {"type": ["dict", "string"],  # a whole "${constant}" is allowed
                 "meta": _about("any mapping (or a whole \"${constant}\"), reported as is")},
    "hook": {"type": "string", "required": True, "meta": _about("a registered metric hook")},
    "for_each": {"type": "string", "regex": NAME,
                 "meta": _about("an iteration: one sample per binding")},
    "when": dict(_CONDITION, meta=_about("a condition: bindings where it does not hold "
                                         "give no sample")),
    "given": {"type": "string", "required": True,
              "meta": _about("a reference: the values of one sample")},
    "label": {"type": "string", "meta": _about("a template naming a sample")},
    "args": {"type": "dict", "meta": _about("the hook's argument values")},
}

PAIR_RULE = {
    "id": {"type": "string", "required": True, "regex": RULE_ID,
           "meta": _about("the pair rule's id")},
    "description": {"type": "string", "required": True,
                    "meta": _about("what the pair rule requires")},
    "identity": {"type": "string", "required": True,
                 "meta": _about("an identity that must be present and equal in both "
                                "inputs")},
    "clause": {"type": "string", "meta": _about("the normative clause; free text")},
}

SPEC = {
    "flarespec": {"type": "integer", "required": True, "allowed": FORMAT_VERSIONS,
                  "meta": _about("the format version of the spec language")},
    "id": {"type": "string", "required": True, "regex": SPEC_ID,
           "meta": _about("the spec id: lower case, /-separated", "shop/v1")},
    "title": {"type": "string", "required": True, "meta": _about("one line")},
    "description": {"type": "string", "meta": _about("free text")},
    "extends": {"type": "string", "regex": SPEC_ID,
                "meta": _about("the id of the parent spec: this file states only what "
                               "changes")},
    "applies_to": dict(_CONDITION, meta=_about("a condition on the entry document that "
                                               "selects this spec (a header: not "
                                               "inherited)")),
    # a draft is never chosen for a packet nor written by default: used only when named
    "draft": {"type": "boolean",
              "meta": _about("true: a spec still being written, used only when named")},
    "limits": {"type": "string",
               "meta": _about("what a pass does not prove; copied into receipts")},
    # the registered packet writer of `flarespec fixture write` (inherited through extends)
    "writer": {"type": "string", "regex": NAME,
               "meta": _about("the registered packet writer of `flarespec fixture write` "
                              "(inherited)")},
    "constants": {"type": "dict", "keysrules": {"type": "string", "regex": CONSTANT_NAME},
                  "meta": _about("named values for ${...} and for constants: references; "
                                 "in a child, a dotted name (a.b) replaces one member of "
                                 "an inherited constant")},
    # named shapes (a node: a mapping, or the name of a type or of another shape); the
    # keys inside a node are checked when compiling (engine/shapes.py, compiler/compile.py)
    "shapes": {"type": "dict", "keysrules": {"type": "string", "regex": NAME},
               "valuesrules": {"type": ["dict", "string"]},
               "meta": _about("named shapes: the declared JSON structure of documents")},
    "documents": {"type": "dict", "keysrules": {"type": "string", "regex": NAME},
                  "valuesrules": {"type": "dict", "schema": DOCUMENT},
                  "meta": _about("the files, by name")},
    "iterations": {"type": "dict", "keysrules": {"type": "string", "regex": NAME},
                   "valuesrules": {"type": "dict", "schema": ITERATION},
                   "meta": _about("the things rules run for each of, by name")},
    "rules": {"type": "list", "schema": {"type": "dict", "schema": RULE},
              "meta": _about("the assertions, in order")},
    "drop_rules": {"type": "list", "schema": {"type": "string", "regex": RULE_ID},
                   "meta": _about("in a child: rule ids of a parent to remove")},
    "drop_documents": {"type": "list", "schema": {"type": "string", "regex": NAME},
                       "meta": _about("in a child: document names of a parent to remove")},
    "identities": {"type": "dict", "keysrules": {"type": "string", "regex": NAME},
                   "meta": _about("values that identify the input, reported and compared "
                                  "by pair")},
    "pair": {"type": "list", "schema": {"type": "dict", "schema": PAIR_RULE},
             "meta": _about("rules comparing the identities of two inputs")},
    "metric": {"type": "dict", "schema": METRIC,
               "meta": _about("one number computed from a clean run by a metric hook")},
}


def _validator():
    """Cerberus's validator with ``integer`` refusing ``true``/``false`` (Python's bool is an
    int; YAML's booleans are not integers: ``flarespec: true`` is no format version)."""
    import cerberus

    class Strict(cerberus.Validator):
        types_mapping = {**cerberus.Validator.types_mapping,
                         "integer": cerberus.TypeDefinition("integer", (int,), (bool,))}
    return Strict


def shape_errors(document: dict, schema: dict = SPEC, *, allow_unknown: bool = False
                 ) -> list[tuple[tuple, str]]:
    """(path inside the document, message) for every shape error Cerberus finds against
    ``schema`` (a spec's by default; fixtures/catalog.py declares a catalog's, and
    adapter/receipt_report.py a receipt's, whose other top-level keys ``allow_unknown``). A field
    whose rules carry ``meta`` (what it must be: "true or false") is refused in those words."""
    validator = _validator()(schema, allow_unknown=allow_unknown)
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
    "DEPENDENCIES_FIELD_VALUE": "{field} needs {needed}",
}
# errors about which keys are there, worded as such even where the field has a `meta` wording
_ABOUT_KEYS = ("UNKNOWN_FIELD", "REQUIRED_FIELD", "EXCLUDES_FIELD", "DEPENDENCIES_FIELD",
               "DEPENDENCIES_FIELD_VALUE")


def _say(error, schema: dict) -> str:
    from cerberus import errors as codes

    names = {getattr(codes, name).code: name for name in _WORDING}
    name = names.get(error.code)
    field = error.field
    must = _rules_at(schema, error.schema_path).get("meta")
    must = must if isinstance(must, str) else None  # a mapping is a description (_about)
    if must and name not in _ABOUT_KEYS:
        return f"{'item ' if isinstance(field, int) else ''}{field!r} must be {must}"
    if name is None:
        return f"{field!r}: {error.rule} {error.constraint!r} violated (value {error.value!r})"
    return _WORDING[name].format(field=repr(field), constraint=repr(error.constraint),
                                 value=repr(error.value), bare_constraint=error.constraint,
                                 needed=_needed(error.constraint))


def _needed(constraint) -> str:
    """A ``dependencies`` mapping as YAML spells it: ``{"entry": [True]}`` is ``entry: true``."""
    if not isinstance(constraint, dict):
        return repr(constraint)
    return " or ".join(f"{key}: {value if isinstance(value, str) else json.dumps(value)}"
                       for key, values in constraint.items() for value in values)


def _rules_at(schema: dict, schema_path) -> dict:
    """The rules of the field an error's ``schema_path`` (ending in the failed rule) names."""
    rules = schema
    for step in schema_path[:-1]:
        rules = rules.get(step, {}) if isinstance(rules, dict) else {}
    return rules if isinstance(rules, dict) else {}
