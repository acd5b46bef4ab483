"""The loader registry: every format a spec's document may name, built in or a plug-in.

A format is a :class:`Format`: its name, its load function ``(data: bytes, options: dict)
-> value``, and what it declares beside it: ``records`` (the value is an array whose every
element came from one place of the file, and the load function returns ``(value, lines)``,
``lines[i]`` the 1-based file line element ``i`` begins on: ``jsonl``, ``csv``), ``shaped``
(the load function also takes ``shape``, the document's declared shape node or None:
``csv`` reads its column types there). The built-in formats are registered by
``flarespec.loaders``; a package adds one without touching flarespec through the
``flarespec.loaders`` entry-point group (docs/loaders.md, "Plug-ins"): the entry point names
a module that registers its formats with :func:`register_loader` when imported.

Plug-ins are discovered only when a name that is not built in is asked for, so a spec of
built-in loaders never scans the installed packages. A plug-in is untrusted in the way a
hook is not: whatever it raises, other than :class:`LoadError`, is the document's
``loader-failed`` (never a crash, never a pass), and its value is checked to be JSON-like
(``loader-output``) before any rule or shape reads it. An entry point that does not load is
remembered and named by the message for an unknown loader, not raised where no spec asked
for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable

from .errors import LoadError
from .locate import locate_with, record_line

ENTRY_POINT_GROUP = "flarespec.loaders"
# names a spec may give a document that are not formats: the engine reads such files itself
NOT_PARSED = frozenset({"bytes", "directory"})
_NAME = re.compile(r"[a-z][a-z0-9_-]*")


@dataclass(frozen=True)
class Format:
    name: str
    load: Callable[..., Any]
    module: str
    records: bool = False   # load returns (value, lines): lines[i] the file line of value[i]
    shaped: bool = False    # load takes shape=: the document's declared shape node (or None)
    builtin: bool = False
    # a built-in locator reading lines kept in the value (sse, prometheus): (value, steps)
    locate: Callable[[Any, list], int | None] | None = None
    doc: str = ""
    # the options it reads beyond max_mib (loaders/options.py: checked when a spec loads)
    options: tuple = ()

    @property
    def locates_lines(self) -> bool:
        return self.records or self.locate is not None


FORMATS: dict[str, Format] = {}
# name -> (data, options) -> value: every format's value alone (no lines, no shape)
LOADERS: dict[str, Callable[[bytes, dict], Any]] = {}
_broken: dict[str, str] = {}  # entry point -> why it did not load
_discovered = False


def register(fmt: Format) -> Format:
    """Add a format. A name is lower-case letters, digits, ``-`` and ``_``; a built-in name,
    ``bytes``, ``directory`` or a name another module registered is refused (ValueError)."""
    if not isinstance(fmt.name, str) or not _NAME.fullmatch(fmt.name):
        raise ValueError(f"a loader name is lower-case letters, digits, '-' and '_', starting "
                         f"with a letter; got {fmt.name!r}")
    if fmt.name in NOT_PARSED:
        raise ValueError(f"{fmt.name!r} is the engine's own loader; choose another name")
    known = FORMATS.get(fmt.name)
    if known is not None and (known.builtin or known.module != fmt.module):
        raise ValueError(f"loader {fmt.name!r} is registered already (by {known.module})")
    FORMATS[fmt.name] = fmt
    LOADERS[fmt.name] = lambda data, options: load_document(fmt.name, data, options)[0]
    return fmt


def register_loader(name: str, *, records: bool = False, shaped: bool = False,
                    options: tuple = ()):
    """Register the decorated function as loader ``name`` (a plug-in's one call).

    The function takes ``(data: bytes, options: dict)`` (and ``shape=``, the document's
    shape node or None, when ``shaped``), returns a JSON-like value (dicts with string keys,
    lists, str, int, float, Decimal, bool, None) or ``(value, lines)`` when ``records``
    (``value`` a list, ``lines[i]`` the file line its element ``i`` begins on: violations
    inside ``$[i]`` then name that line), and raises :class:`LoadError` for a file it
    refuses. ``options``: the :class:`~flarespec.loaders.options.Option` s it reads beyond
    ``max_mib``; a spec giving any other is refused when it loads."""
    def decorate(load):
        register(Format(name, load, load.__module__, records=records, shaped=shaped,
                        doc=(load.__doc__ or "").strip(), options=tuple(options)))
        return load
    return decorate


def discover() -> dict[str, Format]:
    """Import every module of the ``flarespec.loaders`` entry-point group once; one that
    fails is remembered (``unknown_loader`` names it), not raised."""
    global _discovered
    if not _discovered:
        _discovered = True
        from importlib.metadata import entry_points

        for entry in entry_points(group=ENTRY_POINT_GROUP):
            try:
                entry.load()
            except Exception as problem:  # noqa: BLE001 - a broken plug-in breaks no other spec
                _broken[entry.name] = f"{entry.value}: {type(problem).__name__}: {problem}"
    return FORMATS


def find_loader(name: str) -> Format | None:
    """The format called ``name`` (plug-ins discovered when it is not built in), or None."""
    return FORMATS.get(name) or discover().get(name)


def known_loaders() -> frozenset[str]:
    """Every name a document may give: the formats (plug-ins included) and ``bytes``."""
    return frozenset(discover()) | {"bytes"}


def unknown_loader(name: str, also=frozenset()) -> str:
    """The one message for a loader name nobody registered: the formats (plug-ins marked)
    and the names ``also`` known where it is asked (a spec's ``bytes``, ``directory``), and
    the plug-ins that did not load."""
    def shown(known: str) -> str:
        fmt = FORMATS.get(known)
        return f"{known} (plug-in)" if fmt is not None and not fmt.builtin else known

    known = [shown(known) for known in sorted(set(discover()) | set(also))]
    message = f"unknown loader {name!r}; known: {', '.join(known)}"
    if _broken:
        message += "; plug-ins that did not load: " + "; ".join(
            f"{entry} ({why})" for entry, why in sorted(_broken.items()))
    return message


def format_of(name: str) -> Format:
    """The format ``name`` parses with; ValueError for ``bytes`` and an unknown name."""
    if name == "bytes":
        raise ValueError("the 'bytes' loader does not take file contents; use "
                         "load_bytes_head(store, rel, n)")
    fmt = find_loader(name)
    if fmt is None:
        raise ValueError(unknown_loader(name))
    return fmt


def load_document(name: str, data: bytes, options: dict, shape: dict | None = None
                  ) -> tuple[Any, Any]:
    """``(value, lines)`` of a document's bytes read by loader ``name``: ``lines`` the file
    line of each element of a records format's value, else None. LoadError for bytes the
    format refuses (for a plug-in also whatever else it raised, and a value that is not
    JSON-like); ValueError for an unknown name."""
    fmt = format_of(name)
    if fmt.builtin:
        result = fmt.load(data, options, shape) if fmt.shaped else fmt.load(data, options)
        return result if fmt.records else (result, None)
    try:
        result = fmt.load(data, options, shape=shape) if fmt.shaped else fmt.load(data, options)
    except LoadError:
        raise
    except Exception as bug:  # noqa: BLE001 - a plug-in's failure rejects the document
        raise LoadError("loader-failed", f"the {name} loader (plug-in {fmt.module}) failed: "
                                         f"{type(bug).__name__}: {bug}") from None
    return _checked(fmt, result)


# ------------------------------------------------------------------ what a plug-in returns

_SCALARS = (str, int, float, bool, type(None), Decimal)


def _checked(fmt: Format, result) -> tuple[Any, Any]:
    """A plug-in's result, once it is what it declared: a JSON-like value (and, for a
    records format, one line per element)."""
    lines = None
    if fmt.records:
        if type(result) is not tuple or len(result) != 2 or type(result[0]) is not list:
            raise _bad_output(fmt, "a records loader returns (a list, its lines)", "$")
        result, lines = result
        try:
            fine = len(lines) == len(result) and all(
                type(line) is int and line >= 1 for line in lines)
        except TypeError:
            fine = False
        if not fine:
            raise _bad_output(fmt, "its lines are not one line number (an int from 1) per "
                                   "element", "$")
    where = _not_json_like(result)
    if where is not None:
        raise _bad_output(fmt, f"{where[1]} is not a JSON value", where[0])
    return result, lines


def _not_json_like(value) -> tuple[str, str] | None:
    """(location, what) of the first place of ``value`` that is not JSON-like, or None."""
    from .locations import child_location

    pending = [("$", value)]
    while pending:
        location, value = pending.pop()
        kind = type(value)
        if kind is dict:
            for key, member in value.items():
                if type(key) is not str:
                    return location, f"a key of type {type(key).__name__}"
                pending.append((child_location(location, key), member))
        elif kind is list:
            pending.extend((f"{location}[{index}]", item) for index, item in enumerate(value))
        elif kind not in _SCALARS:
            return location, f"a value of type {kind.__name__}"
    return None


def _bad_output(fmt: Format, what: str, location: str) -> LoadError:
    return LoadError("loader-output", f"the {fmt.name} loader (plug-in {fmt.module}) returned "
                                      f"what flarespec cannot read: {what}", location=location)


# ------------------------------------------------------------------ lines


def locates_lines(loader_name: str) -> bool:
    """Whether ``locate_line`` can ever tell a line of this loader's output."""
    fmt = FORMATS.get(loader_name)
    return fmt is not None and fmt.locates_lines


def locate_line(loader_name: str, value, location: str, lines=None) -> int | None:
    """The 1-based line of the file that the place ``location`` (a JSONPath into ``value``,
    the output of loader ``loader_name``, or a reference's text ``target:$...``) came from,
    or None when it cannot be told. ``lines`` are a records format's lines (what
    ``load_document`` gave beside the value): ``$[i]`` and anything inside it is on
    ``lines[i]``. A wildcard step (``[*]``) gives the line of the first element it
    matches. Never raises."""
    fmt = FORMATS.get(loader_name)
    if fmt is None:
        return None
    if fmt.records:
        return locate_with(record_line, lines, location) if lines is not None else None
    return locate_with(fmt.locate, value, location) if fmt.locate is not None else None
