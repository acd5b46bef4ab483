"""Reading a spec's YAML: PyYAML's SafeLoader, bounded, marking every key and item.

What it yields and every limit are compiler/yamlmarks.py's (``load_marked`` there is the way in);
this module holds the parts that need PyYAML, so that a process that only reads compiled
specs from the cache never imports it.
"""

from __future__ import annotations

import json
import math
import re

import yaml

from flarespec.compiler.yamlmarks import (
    INT_MAX, INT_MIN, MAX_ALIASES, MAX_DEPTH, MAX_INT_TEXT, MAX_NODES, Mark, MarkedDict,
    MarkedList, SpecYamlError)

_TAG = "tag:yaml.org,2002:"
_JSON_TYPES = "a spec holds only strings, numbers, booleans, null, lists and mappings"
# Explicit tags: none, the non-specific "!" and !!str (both make a string); any other tag
# (!!binary, !!set, !!python/..., !!int on text that is no integer, !local) is refused.
_ALLOWED_TAGS = (None, "!", _TAG + "str")


class _SpecLoader(yaml.SafeLoader):
    """SafeLoader that marks keys and items, bounds depth, aliases and expanded size while
    composing, and constructs JSON-compatible values only."""

    def __init__(self, text: str, file: str):
        super().__init__(text)
        self.file = file
        self._depth = 0
        self._aliases = 0
        self._nodes = 0  # values composed so far, aliases counted at their expanded size
        self._anchor_sizes: dict[str, int] = {}

    def mark(self, yaml_mark) -> Mark:
        return Mark(self.file, yaml_mark.line + 1, yaml_mark.column + 1)

    def fail(self, message: str, yaml_mark, code: str):
        raise SpecYamlError(message, self.mark(yaml_mark), code)

    # ------------------------------------------------------------------ composing (bounded)

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            return self._compose_alias(event, parent, index)
        if event.tag not in _ALLOWED_TAGS:
            tag = _clip(event.tag.replace(_TAG, "!!"))
            self.fail(f"the tag {tag} is not allowed; {_JSON_TYPES}, written without tags "
                      f"(quote a string)", event.start_mark, "spec.yaml-type")
        nests = isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent))
        if nests and self._depth >= MAX_DEPTH:
            self.fail(f"lists and mappings nest more than {MAX_DEPTH} levels deep",
                      event.start_mark, "spec.yaml-depth")
        self._count(1, event)
        before = self._nodes - 1
        self._depth += nests
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= nests
        if event.anchor is not None:
            self._anchor_sizes[event.anchor] = self._nodes - before
        return node

    def _compose_alias(self, event, parent, index):
        if event.anchor in self.anchors:  # an undefined alias is PyYAML's error
            size = self._anchor_sizes.get(event.anchor)
            if size is None:
                self.fail(f"alias *{_clip(event.anchor)} refers to a node that contains it",
                          event.start_mark, "spec.yaml-alias")
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                self.fail(f"more than {MAX_ALIASES} aliases (*name) in one spec file",
                          event.start_mark, "spec.yaml-alias")
            self._count(size, event)
        return super().compose_node(parent, index)

    def _count(self, size: int, event) -> None:
        self._nodes += size
        if self._nodes > MAX_NODES:
            alias = isinstance(event, yaml.AliasEvent)
            found = "aliases expand the spec to" if alias else "the spec holds"
            self.fail(f"{found} more than {MAX_NODES} values (lists, mappings and scalars)",
                      event.start_mark,
                      "spec.yaml-alias" if alias else "spec.too-large")

    # ------------------------------------------------------------------ constructing (JSON only)

    def construct_marked_mapping(self, node):
        own = sum(1 for key_node, _ in node.value if key_node.tag != _TAG + "merge")
        self.flatten_mapping(node)
        merged = len(node.value) - own  # keys from "<<" come first; its own keys may override them
        result = MarkedDict()
        result.mark = self.mark(node.start_mark)
        result.key_marks = {}
        own_keys = set()
        for position, (key_node, value_node) in enumerate(node.value):
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str):
                self.fail(_not_a_string_key(key_node, key), key_node.start_mark, "spec.yaml-key")
            if position >= merged:
                if key in own_keys:
                    self.fail(f"duplicate key {_clip(key)!r}", key_node.start_mark, "spec.yaml")
                own_keys.add(key)
            result[key] = self.construct_object(value_node, deep=True)
            result.key_marks[key] = self.mark(key_node.start_mark)
        return result

    def construct_marked_sequence(self, node):
        result = MarkedList(self.construct_object(child, deep=True) for child in node.value)
        result.mark = self.mark(node.start_mark)
        result.item_marks = [self.mark(child.start_mark) for child in node.value]
        return result

    def construct_text(self, node):
        value = self.construct_scalar(node)
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                self.fail("a string holds an unpaired surrogate escape (\\uD800-\\uDFFF), which "
                          "is not Unicode text", node.start_mark, "spec.yaml-type")
        return value

    def construct_bounded_int(self, node):
        if len(node.value) > MAX_INT_TEXT:
            self.fail(f"an integer of {len(node.value)} characters; spec integers fit in 64 bits "
                      f"({INT_MIN} to {INT_MAX}): quote it for a string", node.start_mark,
                      "spec.yaml-type")
        value = self.construct_yaml_int(node)
        if not INT_MIN <= value <= INT_MAX:
            self.fail(f"{node.value} does not fit in 64 bits ({INT_MIN} to {INT_MAX}): quote it "
                      f"for a string", node.start_mark, "spec.yaml-type")
        return value

    def construct_finite_float(self, node):
        value = self.construct_yaml_float(node)
        if not math.isfinite(value):
            self.fail(f"{_clip(node.value)} is not a finite number (JSON has no infinity or "
                      f"NaN): use a finite bound, or quote it for a string", node.start_mark,
                      "spec.yaml-type")
        return value

    def refuse_date(self, node):
        """YAML 1.1 reads 2026-01-01 as a date, which JSON lacks (the only such plain scalar:
        every explicit tag but !!str was refused while composing)."""
        self.fail(f"{_clip(node.value)} is read as a date; {_JSON_TYPES}: quote it "
                  f"({json.dumps(_clip(node.value))})", node.start_mark, "spec.yaml-type")


def _not_a_string_key(key_node, key) -> str:
    if not isinstance(key_node, yaml.ScalarNode):
        kind = "list" if isinstance(key, list) else "mapping"
        return f"a {kind} cannot be a key; spec keys are strings"
    if key_node.value == "":
        return "an empty key (null); spec keys are strings"
    kind = {bool: "a boolean", int: "an integer", float: "a number", type(None): "null"}.get(
        type(key), type(key).__name__)
    return (f"the key {_clip(key_node.value)} is read as {kind}; spec keys are strings: "
            f"quote it ({json.dumps(_clip(key_node.value))})")


def _clip(text: str, keep: int = 40) -> str:
    return text if len(text) <= keep else f"{text[:keep]}… ({len(text)} characters)"


for _tag, _constructor in {
        _TAG + "map": _SpecLoader.construct_marked_mapping,
        _TAG + "seq": _SpecLoader.construct_marked_sequence,
        _TAG + "str": _SpecLoader.construct_text,
        _TAG + "value": _SpecLoader.construct_text,   # a plain "=" is text, as in JSON
        _TAG + "merge": _SpecLoader.construct_text,   # "<<" outside a key position
        _TAG + "int": _SpecLoader.construct_bounded_int,
        _TAG + "float": _SpecLoader.construct_finite_float,
        _TAG + "timestamp": _SpecLoader.refuse_date,
}.items():
    _SpecLoader.add_constructor(_tag, _constructor)


def load_marked(text: str, file: str):
    """The single YAML document in ``text`` as marked, JSON-compatible data; any problem is a
    ``SpecYamlError`` naming ``file:line:column`` and a code."""
    try:
        loader = _SpecLoader(text, file)  # PyYAML's reader checks every character here
    except yaml.reader.ReaderError as error:
        raise _reader_error(error, text, file) from None
    except yaml.YAMLError as error:
        raise SpecYamlError(f"YAML: {error}", Mark(file, 1, 1)) from None
    try:
        return loader.get_single_data()
    except SpecYamlError:
        raise
    except yaml.reader.ReaderError as error:
        raise _reader_error(error, text, file) from None
    except yaml.MarkedYAMLError as error:
        message, where = explain_yaml_error(error)
        raise SpecYamlError(message, loader.mark(where) if where else None) from None
    except yaml.YAMLError as error:
        raise SpecYamlError(f"YAML: {error}", Mark(file, 1, 1)) from None
    finally:
        loader.dispose()


CHARACTER_CODE = "spec.yaml-character"


def _reader_error(error, text: str, file: str) -> SpecYamlError:
    """PyYAML's ReaderError (a character YAML does not allow: a control character other
    than tab and line breaks, a lone surrogate, U+FFFE...) at its line and column."""
    position = error.position if isinstance(error.position, int) else 0
    before = text[:max(0, min(position, len(text)))]
    line = before.count("\n") + 1
    column = position - (before.rfind("\n") + 1) + 1
    character = error.character
    shown = f"U+{character:04X}" if isinstance(character, int) else repr(character)
    return SpecYamlError(f"the character {shown} is not allowed in YAML (a control "
                         f"character other than tab and line breaks, or a non-character); "
                         f"remove it, or write it as an escape such as \\x01 inside a "
                         f"double-quoted string", Mark(file, line, column), CHARACTER_CODE)


# (context prefix or None, problem pattern, message, mark: "problem" or "context");
# {context} in a message is the context mark as "line L, column C".
_EXPLAINED = (
    (None, r"found character '\\t' that cannot start any token",
     "a tab character: YAML indents with spaces only", "problem"),
    (None, r"found character '(.)' that cannot start any token",
     "a value cannot start with '{0}': quote it", "problem"),
    ("while scanning a quoted scalar", r"found unexpected (end of stream|document separator)",
     "a quoted string opened here is never closed", "context"),
    (None, r"mapping values are not allowed here",
     "unexpected ':' — quote a value that contains ': ', or indent this line like the keys "
     "around it", "problem"),
    ("while parsing a block", r"expected <block end>, but found",
     "bad indentation: this line does not line up with the block that starts at {context}",
     "problem"),
    ("while scanning a simple key", r"could not find expected ':'",
     "a line with no ':' where a key was expected (or a quote or bracket left open)",
     "context"),
    ("while parsing a flow", r"expected ',' or '([\]}])', but got",
     "the bracket opened at {context} is not closed with '{0}' before this point", "problem"),
    (None, r"found undefined alias '(.*)'",
     "alias *{0} refers to no anchor &{0} defined before it", "problem"),
    ("expected a single document", r"but found another document",
     "a spec is one YAML document; a second one starts here", "problem"),
)


def explain_yaml_error(error: yaml.MarkedYAMLError):
    """A sentence for the common YAML mistakes (PyYAML's parser text otherwise), and the mark
    a person should look at."""
    problem, context = error.problem or str(error), error.context or ""
    for wanted_context, pattern, message, where in _EXPLAINED:
        found = re.match(pattern, problem)
        if found and (wanted_context is None or context.startswith(wanted_context)):
            mark = error.context_mark if where == "context" else error.problem_mark
            at = error.context_mark
            text = message.format(*map(_clip, found.groups()), context=(
                f"line {at.line + 1}, column {at.column + 1}" if at else "?"))
            return f"YAML syntax: {text}", mark or error.problem_mark
    return f"YAML syntax: {problem}", error.problem_mark or error.context_mark
