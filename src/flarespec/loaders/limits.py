"""The bounds on what one document may cost to parse (docs/loaders.md, "Limits").

Documents come from packets under validation, so they are untrusted: parsing turns bytes into
Python objects, which cost many times the bytes. These limits keep the worst case for one
document well inside the memory a validation may use, far above what real evidence needs.
"""

from __future__ import annotations

import functools
import gc

from .errors import LoadError

MIB = 1 << 20
# Bytes of one document read whole and parsed (json, sse, prometheus, text); not the
# ``bytes`` loader, whose files are only head-read and hashed as a stream.
MAX_DOCUMENT_BYTES = 32 * MIB
# A spec may raise (or lower) that limit for one of its documents with the document option
# ``max_mib``: it knows which documents grow with the run (a log holding every record of a
# long run), where a packet must not choose its own bound. Never beyond this ceiling: the
# worst shapes cost about 25 times their bytes once parsed.
MAX_MIB_OPTION = "max_mib"
MAX_DOCUMENT_CEILING_MIB = 256
# The head of a ``bytes`` document (its option ``head_bytes``): the first bytes, read and
# held as text of one character per byte for rules such as ``starts_with``. A head is for a
# magic number or a header, never the file: at most 1 MiB (a larger one is refused when the
# spec loads, as a negative one; 10^12 was a MemoryError once a packet was validated).
DEFAULT_HEAD_BYTES = 64
MAX_HEAD_BYTES = 1 << 20
# Events of one event stream: each costs an event dict (about 0.35-0.65 KB with its data).
MAX_SSE_EVENTS = 1 << 20
# An SSE ``retry:`` value: WHATWG sets the reconnection time to any all-digit value; browsers
# keep it in a 64-bit integer and ignore a value that overflows it. So do we (it also bounds
# the work of int() on a field of thousands of digits).
MAX_SSE_RETRY = (1 << 63) - 1
# Samples of one exposition: each costs a sample dict and its labels (about 0.5 KB).
MAX_SAMPLES = 1 << 20
# Records of one CSV document: each costs an object (about 0.2 KB without its cells), and a
# blank line is a record of a one-column table, so 32 MiB of line ends would be 33 million.
MAX_CSV_ROWS = 1 << 20


def document_limit(options: dict) -> int:
    """The bytes a document may have: its spec option ``max_mib`` (checked when the spec is
    compiled: a positive integer up to MAX_DOCUMENT_CEILING_MIB), else MAX_DOCUMENT_BYTES."""
    mib = options.get(MAX_MIB_OPTION)
    return MAX_DOCUMENT_BYTES if mib is None else mib * MIB


def check_document_size(data: bytes, what: str, limit: int = MAX_DOCUMENT_BYTES) -> None:
    """Refuse a document longer than ``limit`` bytes before parsing it."""
    if len(data) > limit:
        raise too_large(what, len(data), limit)


def too_large(what: str, size: int | None = None, limit: int = MAX_DOCUMENT_BYTES) -> LoadError:
    """The error for a document over ``limit``; the default limit keeps its wording (it is in
    receipts), any other one is a spec's ``max_mib`` and says so."""
    has = f"is {size} bytes" if size is not None else "is larger"
    if limit == MAX_DOCUMENT_BYTES:
        applies = f"the limit for a parsed document is {limit} bytes ({limit // MIB} MiB)"
    else:
        applies = (f"the limit for this document is {limit} bytes "
                   f"({limit / MIB:g} MiB, spec option {MAX_MIB_OPTION})")
    return LoadError("too-large", f"the {what} {has}; {applies}")


def gc_paused(parse):
    """Run ``parse`` with the cyclic garbage collector paused (restored after, also on error).

    A parse builds only acyclic containers, so a collection during it never frees anything;
    but collections are triggered by allocations and each one walks the containers built so
    far. For documents of millions of small values they took 60-85% of the parse time
    (a 32 MiB JSON array of empty lists: 14.5 s with the collector, 2.2 s without).
    """
    @functools.wraps(parse)
    def paused(*args, **kwargs):
        if not gc.isenabled():  # already paused by an outer parse
            return parse(*args, **kwargs)
        gc.disable()
        try:
            return parse(*args, **kwargs)
        finally:
            gc.enable()
    return paused
