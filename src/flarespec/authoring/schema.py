"""JSON Schemas of a spec file, a fixture catalog and an acknowledgements file, for editors.

Generated, never written by hand: the Cerberus meta-schema the loader checks every spec
file against (compiler/metaschema.py) and the catalog's (fixtures/catalog.py) are converted rule
by rule (``cerberus_field``); what the compiler checks by its registries is added from those
registries: the assertion kinds and their argument schemas (engine/kinds.py, declared as
data with engine/argument_schema.py: a kind's docstring is its ``description``, each kind a
definition of its own), the loader names (loaders, compiler/compile.py) and the keys
of a shape node (engine/shapes.py). The schema judges a spec file *as written*: the
meta-schema's fields are checked before ``${...}`` constants are substituted, exactly as
Cerberus checks them, while a kind's argument, a loader name and a shape key are checked
after substitution, so there a whole ``"${name}"`` stands for any value.

Draft-07: the newest draft yaml-language-server (the VS Code YAML extension, and the other
editors built on it) and SchemaStore fully support. The shipped files are
``src/flarespec/schemas/*.schema.json``; regenerate them with
``python -m flarespec.cli.spec_schema_command --write`` (tests/compiler/test_schema_agreement.py fails
when they are stale). What only ``spec lint`` can check (references, names declared
elsewhere in the spec, hooks and their arguments, cross-field rules) is listed there.
"""

from __future__ import annotations

import json
from pathlib import Path

from flarespec.engine.argument_schema import named_values
from flarespec.engine.kinds import KINDS, Kind
from flarespec.engine.shapes import AUTHORING_KEYS, NODE_KEYS, TYPE_NAMES
from flarespec.loaders import KNOWN_LOADERS
from flarespec.loaders.options import declared_options
from flarespec.compiler import metaschema as meta
from flarespec.compiler.compile import STREAMED_LOADERS
from flarespec.compiler.tokens import _TOKEN

DRAFT = "http://json-schema.org/draft-07/schema#"
SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"
NAMES = ("spec", "catalog", "acks")
REGENERATE = "python -m flarespec.cli.spec_schema_command --write"
_TYPES = {"string": "string", "integer": "integer", "float": "number", "number": "number",
          "boolean": "boolean", "dict": "object", "list": "array"}
_LENGTH = {"string": ("minLength", "maxLength"), "object": ("minProperties", "maxProperties"),
           "array": ("minItems", "maxItems")}
CONSTANT = {"type": "string", "pattern": f"^{_TOKEN.pattern}$",
            "description": "a whole ${constant}: substituted (any value) before this is "
                           "checked", "examples": ["${name}"]}


def _ref(name: str) -> dict:
    return {"$ref": f"#/definitions/{name}"}


# ------------------------------------------------------------------ Cerberus -> JSON Schema
def _anchored(regex: str) -> str:
    """Cerberus matches a ``regex`` whole (re.match plus an appended ``$``); JSON Schema's
    ``pattern`` searches: anchor it."""
    body = regex[1:] if regex.startswith("^") else regex
    body = body[:-1] if body.endswith("$") else body
    return f"^(?:{body})$"


def cerberus_field(rules: dict, named: dict) -> dict:
    """The JSON Schema of one Cerberus field's ``rules`` (``named``: id of a nested Cerberus
    schema -> its definition name, referenced instead of repeated)."""
    out: dict = {}
    about = rules.get("meta")
    if isinstance(about, dict):
        out.update(about)
    elif isinstance(about, str):
        out["description"] = f"must be {about}"
    kinds = rules.get("type")
    types = [_TYPES[t] for t in ([kinds] if isinstance(kinds, str) else kinds or [])]
    types = list(dict.fromkeys(types))
    if rules.get("nullable"):
        types.append("null")
    if types:
        out["type"] = types[0] if len(types) == 1 else types
    if "allowed" in rules:
        out["enum"] = list(rules["allowed"])
    if "regex" in rules:
        out["pattern"] = _anchored(rules["regex"])
    if rules.get("empty") is False:
        out["minLength"] = 1
    for index, rule in enumerate(("minlength", "maxlength")):
        if rule in rules:
            for kind in types:
                if kind in _LENGTH:
                    out[_LENGTH[kind][index]] = rules[rule]
    if "keysrules" in rules:
        out["propertyNames"] = cerberus_field(rules["keysrules"], named)
    if "valuesrules" in rules:
        out["additionalProperties"] = cerberus_field(rules["valuesrules"], named)
    inner = rules.get("schema")
    if inner is not None and "dict" in (kinds if isinstance(kinds, list) else [kinds]):
        out.update(_object_or_ref(inner, named, rules.get("allow_unknown", False)))
    elif inner is not None:
        out["items"] = cerberus_field(inner, named)
    return out


def _object_or_ref(schema: dict, named: dict, allow_unknown: bool) -> dict:
    if id(schema) in named:
        return {"allOf": [_ref(named[id(schema)])]}
    return cerberus_object(schema, named, allow_unknown=allow_unknown)


def cerberus_object(schema: dict, named: dict, *, allow_unknown: bool = False) -> dict:
    """A Cerberus mapping schema as an object: its fields, which are required (a required
    field that ``excludes`` others is required unless one of them is there, as Cerberus
    has it), which exclude each other and which depend on others; an unknown key is
    refused unless ``allow_unknown``."""
    out: dict = {"type": "object",
                 "properties": {key: cerberus_field(rules, named)
                                for key, rules in schema.items()}}
    required, groups, exclusive, needs = [], [], [], {}
    for key, rules in schema.items():
        excluded = rules.get("excludes", [])
        excluded = [excluded] if isinstance(excluded, str) else list(excluded)
        if rules.get("required") and not excluded:
            required.append(key)
        elif rules.get("required"):
            group = sorted({key, *(e for e in excluded if schema.get(e, {}).get("required"))})
            groups += [group] if group not in groups else []
        exclusive += [pair for pair in (sorted((key, other)) for other in excluded)
                      if pair not in exclusive]
        if "dependencies" in rules:
            depends = rules["dependencies"]
            # a mapping names the values the other field must have (file_name: entry true)
            needs[key] = {"required": sorted(depends), "properties": {
                field: {"enum": list(values)} for field, values in depends.items()}} \
                if isinstance(depends, dict) else \
                [depends] if isinstance(depends, str) else list(depends)
    if required:
        out["required"] = required
    every = [{"anyOf": [{"required": [key]} for key in group]} for group in groups]
    every += [{"not": {"required": pair}} for pair in exclusive]
    if every:
        out["allOf"] = every
    if needs:
        out["dependencies"] = needs
    if not allow_unknown:
        out["additionalProperties"] = False
    return out


def _refine(schema: dict, *path_and_refinement) -> None:
    """Add a refinement (by the compiler's registries) to the field at a path of properties."""
    *path, refinement = path_and_refinement
    node = schema
    for step in path:
        node = node["properties"][step] if step != "*" else node["additionalProperties"]
    node.setdefault("allOf", []).append(refinement)


# ------------------------------------------------------------------ argument values
def value(schema: dict) -> dict:
    """A value of ``schema`` as a spec writes it in a kind's argument: itself, a whole
    ``"${constant}"`` or ``{literal: ...}`` of it (compiler/compile.py, ``walk``)."""
    literal = {"type": "object", "properties": {"literal": schema}, "required": ["literal"],
               "additionalProperties": False}
    return {"anyOf": [schema, _ref("constant"), literal]}


def _dynamic(schema: dict) -> dict:
    """``schema``, or a value read per binding that the check accepts before it is read
    (a ``{ref}`` or ``{template}``: engine/argument_schema.py ``dynamic``)."""
    return {"anyOf": [schema, _ref("ref"), _ref("template")]}


class _Forms:
    """How this schema spells a shared definition and the written forms of a value: what
    an argument schema's nodes (engine/argument_schema.py) ask for."""

    ref = staticmethod(_ref)
    value = staticmethod(value)
    dynamic = staticmethod(_dynamic)


FORMS = _Forms()

ARGUMENT_FORMS = {
    "ref": {"type": "object", "required": ["ref"], "additionalProperties": False,
            "description": "the value of the one place R selects (all: true: the list of "
                           "every place's value)",
            "properties": {"ref": {"type": "string", "description": "a reference"},
                           "default": {"description": "the value when R selects nothing"},
                           "all": {"description": "true: the list of every value"},
                           "at": {"type": "object", "description": "iterations pinned: "
                                                                   "{name: index|previous|next}"}}},
    "template": {"type": "object", "required": ["template"], "additionalProperties": False,
                 "properties": {"template": {"type": "string"}},
                 "description": "the rendered string", "examples": [{"template": "s{shelf@index}"}]},
}


def argument_values() -> dict:
    """The definitions of the named values kinds' arguments declare (engine/kinds.py)."""
    return {f"argument_{name}": each.definition(FORMS)
            for name, each in sorted(named_values(kind.argument for kind in
                                                  KINDS.values()).items())}


# ------------------------------------------------------------------ assertion kinds
def kind_argument(kind: Kind) -> dict:
    """The JSON Schema of ``kind``'s argument, derived from the argument schema the kind
    declares (engine/argument_schema.py): nothing about a kind is written here."""
    return kind.argument.argument_schema(FORMS)


def kind_definitions() -> dict:
    """Each kind once, as a definition (``kind_<name>``: its docstring and its argument),
    referenced by an assertion and a condition alike."""
    return {f"kind_{name}": {"description": KINDS[name].doc,
                             "allOf": [kind_argument(KINDS[name])]}
            for name in sorted(KINDS)}


def assertion_schema() -> dict:
    """A mapping of exactly one assertion kind to its argument, each kind described by its
    docstring (what ``flarespec spec kinds`` prints)."""
    return {"type": "object", "minProperties": 1, "maxProperties": 1,
            "additionalProperties": False,
            "properties": {name: _ref(f"kind_{name}") for name in sorted(KINDS)}}


def condition_schema() -> dict:
    """``given`` and exactly one assertion kind (compiler/compile.py ``condition``)."""
    schema = assertion_schema()
    schema["properties"] = {"given": {"type": "string", "description": "a reference"},
                            **schema["properties"]}
    return dict(schema, required=["given"], minProperties=2, maxProperties=2)


# ------------------------------------------------------------------ shapes and documents
def _shape_keys() -> dict:
    """The schema of each key of a shape node (engine/shapes.py ``NODE_KEYS`` and
    ``AUTHORING_KEYS``; the checks are compiler/shapes.py ``ShapeCompiler.key``)."""
    count = {"type": "integer", "minimum": 0}
    names = {"enum": [*TYPE_NAMES, None]}  # YAML's bare null names the type null
    return {
        "type": value({"anyOf": [names, {"type": "array", "minItems": 1, "items": names}]}),
        "members": {"type": "object", "additionalProperties": _ref("shape"),
                    "description": "member name -> shape; every member is required unless "
                                   "its shape says optional: true"},
        "values": _ref("shape"), "items": _ref("shape"),
        "optional": value({"type": "boolean"}), "closed": value({"type": "boolean"}),
        "min": value({"type": "number"}), "max": value({"type": "number"}),
        "length": value({"anyOf": [count, {
            "type": "object", "minProperties": 1, "additionalProperties": False,
            "properties": {"min": count, "max": count}}]}),
        "pattern": {"type": "string", "description": "an RE2 pattern"},
        "one_of": value({"type": "array", "minItems": 1}),
        "description": {"type": "string"}, "example": {},
        "use": {"type": "string", "description": "start from this named shape"},
        "drop_members": {"type": "array", "items": {"type": "string"},
                         "description": "in a child: inherited members to remove"},
    }


def shape_schema() -> dict:
    keys = _shape_keys()
    unknown = set(keys) ^ {*NODE_KEYS, *AUTHORING_KEYS}
    if unknown:
        raise KeyError(f"shape keys without a schema, or no longer keys: {sorted(unknown)}")
    return {"description": f"a shape: a mapping, or a type ({', '.join(TYPE_NAMES)}) or the "
                           f"name of another entry of shapes",
            "anyOf": [{"type": ["string", "null"]},
                      {"type": "object", "additionalProperties": False, "properties": keys}]}


def loader_schema() -> dict:
    names = sorted(KNOWN_LOADERS | STREAMED_LOADERS)
    return {"anyOf": [{"enum": names}, _ref("constant")], "examples": names}


def _declared_options() -> dict[str, tuple]:
    """Each built-in loader's options, as it declares them (loaders/options.py)."""
    return {loader: declared_options(loader) for loader in sorted(KNOWN_LOADERS | STREAMED_LOADERS)}


def options_schema() -> dict:
    """Every option a loader declares, with its schema, or a whole ``${constant}`` (options
    are checked after substitution); which loader takes which is ``options_by_loader``'s."""
    properties: dict = {}
    for loader, options in _declared_options().items():
        for option in options:
            if option.name not in properties:
                takes = [name for name, declared in _declared_options().items()
                         if option in declared]
                properties[option.name] = {"anyOf": [dict(
                    option.schema, description=f"{option.description}; loaders: "
                                               f"{', '.join(takes)}"), _ref("constant")]}
    return {"type": "object", "additionalProperties": False, "properties": properties}


def options_by_loader() -> list[dict]:
    """A document's options are its loader's (a loader written as a ${constant}, or a
    plug-in's, is judged by spec lint alone)."""
    return [{"if": {"required": ["loader"], "properties": {"loader": {"const": loader}}},
             "then": {"properties": {"options": {"propertyNames": {
                 "enum": [option.name for option in options]}} if options else {
                 "maxProperties": 0}}}}
            for loader, options in _declared_options().items()]


# ------------------------------------------------------------------ the three schemas
def spec_schema() -> dict:
    named = {id(meta.RULE): "rule", id(meta.DOCUMENT): "document",
             id(meta.ITERATION): "iteration", id(meta.METRIC): "metric",
             id(meta.PAIR_RULE): "pair_rule"}
    definitions = {name: cerberus_object(schema, named) for schema, name in
                   ((meta.RULE, "rule"), (meta.DOCUMENT, "document"),
                    (meta.ITERATION, "iteration"), (meta.METRIC, "metric"),
                    (meta.PAIR_RULE, "pair_rule"))}
    root = cerberus_object(meta.SPEC, named)
    _refine(definitions["rule"], "assert", _ref("assertion"))
    for owner, key in ((definitions["rule"], "when"), (definitions["metric"], "when"),
                       (root, "applies_to")):
        _refine(owner, key, _ref("condition"))
    _refine(definitions["document"], "loader", loader_schema())
    _refine(definitions["document"], "options", options_schema())
    definitions["document"].setdefault("allOf", []).extend(options_by_loader())
    _refine(root, "shapes", "*", _ref("shape"))
    definitions.update(assertion=assertion_schema(), condition=condition_schema(),
                       shape=shape_schema(), constant=CONSTANT, **ARGUMENT_FORMS,
                       **argument_values(), **kind_definitions())
    return _document("flarespec spec file", root, definitions,
                     "A spec file of flarespec (docs/spec-language.md), as written: a child "
                     "(extends) states only what it changes.")


def catalog_schema(catalog: dict) -> dict:
    """A fixture catalog, from its Cerberus schema ``catalog`` (fixtures/catalog.py
    ``CATALOG``: a room above this one, so the command line passes it in)."""
    return _document("flarespec fixture catalog", cerberus_object(catalog, {}), {},
                     "Negative and positive fixture cases of a spec (flarespec.fixtures."
                     "catalog; `flarespec spec test`).")


def acks_schema() -> dict:
    """The acknowledgements file of `spec diff --acks` (review/render.py ``read_acks``: no
    declarative definition there, so this one is checked against it by the agreement test)."""
    text = {"type": "string", "pattern": r"\S", "description": "non-empty text"}
    entry = {"type": "object", "required": ["fingerprint", "reason"],
             "additionalProperties": False,
             "properties": {"fingerprint": dict(text, description="the fingerprint of an "
                                                "acknowledged change, as spec diff prints it "
                                                "(quote an all-digit one)"),
                            "reason": dict(text, description="why the change is accepted")}}
    root = {"type": ["array", "null"], "items": entry,
            "description": "a list of {fingerprint, reason}; an empty file or [] "
                           "acknowledges nothing"}
    return _document("flarespec spec diff acknowledgements", root, {},
                     "Reviewed changes of `flarespec spec diff` that no longer block.")


def _document(title: str, root: dict, definitions: dict, description: str) -> dict:
    # no $id: a file's location is its identity, so no reader resolves a URL (no network)
    out = {"$schema": DRAFT, "title": title,
           "description": description, **root}
    if definitions:
        out["definitions"] = definitions
    return out


def schema_text(schema: dict) -> str:
    """A schema as the shipped file's text."""
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def shipped_path(name: str) -> Path:
    return SCHEMA_DIR / f"{name}.schema.json"
