"""Receipts: the machine contract of a run, where they may go, and how they are written.

Schema ``flarespec-receipt-v1`` is documented in docs/receipt.md. A receipt holds a metric
value only when its status is "pass" and its spec declares a metric (``measure`` requires
one); a rejection carries every violation and no metric, no samples, no per-packet values.

The output path is checked before any packet is read (:func:`check_output`): never inside a
packet root, never over anything but a regular file, never through a symlink. The receipt is
then written to a fresh temporary file beside the target, fsynced and renamed over it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import platform
import secrets
import signal
import stat
from collections import Counter
from pathlib import Path

import flarespec
from flarespec.engine.hooks import module_digest

RECEIPT_SCHEMA = "flarespec-receipt-v1"
RECEIPT_MODE = 0o666  # like any file a user writes: the umask (or a default ACL) decides
TEMPORARY_ATTEMPTS = 16  # fresh random temporary names tried before giving up
_TEMPORARY_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                    | getattr(os, "O_CLOEXEC", 0))
# Every signal whose default action ends the process and that may be blocked: held from
# the temporary file's creation until it is renamed or removed, so a kill never leaves one.
# (SIGKILL cannot be caught; fault signals such as SIGSEGV are never blocked.)
HELD_SIGNALS = frozenset(getattr(signal, name) for name in (
    "SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGPIPE", "SIGALRM",
    "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGPOLL", "SIGPWR", "SIGSTKFLT")
    if hasattr(signal, name))
_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


class OutputRefused(Exception):
    """The receipt path is not a safe place for a receipt: nothing is written anywhere."""


class ReceiptUnwritable(Exception):
    """The receipt could not be serialized or written; nothing is left behind."""


def nest(dotted_key: str, value) -> dict:
    """``a.b.c`` -> {"a": {"b": {"c": value}}}."""
    result = value
    for part in reversed(dotted_key.split(".")):
        result = {part: result}
    return result


def validator_identity(results) -> dict:
    specs = {}
    hooks = {}
    for result in results:
        spec = result.spec
        if spec is None:
            continue
        specs[spec.id] = {
            "id": spec.id,
            "resolved_sha256": spec.resolved.digest(),
            "files": [{"path": str(f.path), "id": f.id, "sha256": f.digest}
                      for f in spec.resolved.chain],
        }
        for module in sorted(spec.hook_modules):
            hooks[module] = {"module": module, "sha256": module_digest(module)}
    return {"name": "flarespec", "version": flarespec.__version__,
            "python": platform.python_version(),
            "specs": list(specs.values()), "hooks": list(hooks.values())}


def packet_record(result, *, with_values: bool) -> dict:
    """One packet's record. ``entry`` is absolute but not resolved: a packet is the root
    directory its path names (a symlinked packet.json does not move it), and abspath never
    touches the file system, so a broken entry (a loop, a directory) cannot make it fail."""
    entry = Path(result.entry)
    record = {
        "role": result.role,
        "entry": os.path.abspath(entry),
        "valid": result.ok,
        "spec": result.spec.id if result.spec else None,
    }
    report = result.report
    entry_digest = report.files.get(entry.name)
    record["entry_sha256"] = entry_digest
    record["files"] = {path: digest for path, digest in sorted(report.files.items())
                       if path != entry.name}
    record["identities"] = report.identities
    if with_values and report.metric is not None:
        record["metric"] = {key: report.metric[key]
                            for key in ("key", "unit", "value", "contract", "samples",
                                        "details")}
    return record


def _violations(results, pair_violations) -> tuple[list, list]:
    violations, warnings = [], []
    for result in results:
        for violation in result.violations:
            violations.append({"packet": result.role, **violation.as_dict()})
        for warning in result.report.warnings:
            warnings.append({"packet": result.role, **warning.as_dict()})
    violations.extend({"packet": "pair", **v.as_dict()} for v in pair_violations)
    return violations, warnings


def _limits(results) -> str:
    for result in results:
        if result.spec is not None and result.spec.resolved.data.get("limits"):
            return " ".join(result.spec.resolved.data["limits"].split())
    return ("An offline contract check of captured evidence; not a measurement of service "
            "quality or performance.")


def _unique(first, second) -> list:
    return [first] if second is first else [first, second]


def _header(command: str, passed: bool) -> dict:
    return {"receipt_schema": RECEIPT_SCHEMA, "command": command,
            "status": "pass" if passed else "rejected"}


def _truncated(results) -> list[dict]:
    """Rules whose violations were not all kept (the report caps them per rule): how many
    the receipt lists and how many there were. Counted only when something was cut."""
    rows = []
    for result in results:
        suppressed = result.report.suppressed
        if not suppressed:
            continue
        kept = Counter(v.rule for v in (*result.violations, *result.report.warnings))
        rows.extend({"packet": result.role, "rule": rule, "kept": kept[rule],
                     "total": kept[rule] + extra} for rule, extra in suppressed.items())
    return rows


def _trailer(results, pair_violations) -> dict:
    violations, warnings = _violations(results, pair_violations)
    return {"violations": violations, "violations_truncated": _truncated(results),
            "warnings": warnings, "validator": validator_identity(results),
            "limits": _limits(results)}


def _metric_value(result) -> dict:
    """``{"metrics": {KEY: value}}`` of a passing packet; ``{}`` when its spec declares no
    metric (``metric`` is optional in a spec, and so in a receipt: docs/receipt.md)."""
    metric = result.report.metric
    return {} if metric is None else nest(metric["key"], metric["value"])


def measure_receipt(own, peer, pair_violations, passed: bool) -> dict:
    receipt = _header("measure", passed)
    if passed:
        receipt.update(_metric_value(own))
    receipt["packet"] = packet_record(own, with_values=passed)
    receipt["peer"] = packet_record(peer, with_values=False)
    receipt["peer"]["same_as_packet"] = peer is own
    receipt.update(_trailer(_unique(own, peer), pair_violations))
    return receipt


def pair_receipt(baseline, candidate, pair_violations, passed: bool) -> dict:
    receipt = _header("validate-pair", passed)
    receipt["pair"] = {}
    for role, result in (("baseline", baseline), ("candidate", candidate)):
        receipt["pair"][role] = packet_record(result, with_values=passed)
        if passed:
            receipt["pair"][role].update(_metric_value(result))
    receipt.update(_trailer(_unique(baseline, candidate), pair_violations))
    return receipt


def check_receipt(results, passed: bool) -> dict:
    """``flarespec check``: one record per entry file under ``entries``, in argument order
    (roles ``entry 1``, ``entry 2``, ...); on pass each record also holds its metric when
    its spec declares one (there is no top-level ``metrics``: entries may follow several
    specs); on rejection no record holds a metric."""
    receipt = _header("check", passed)
    receipt["entries"] = []
    for result in results:
        record = packet_record(result, with_values=passed)
        if passed:
            record.update(_metric_value(result))
        receipt["entries"].append(record)
    receipt.update(_trailer(results, []))
    return receipt


# ------------------------------------------------------------------ where a receipt goes


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def packet_roots(entry: str | Path) -> set[str]:
    """Every directory through which a packet's files are reached: its root as named
    (absolute, not resolved), that root resolved, and the directory of the resolved entry
    file (a symlinked packet.json may live in a subfolder, or elsewhere)."""
    given = os.fspath(Path(entry).parent)
    try:
        return {os.path.abspath(given), os.path.realpath(given),
                os.path.dirname(os.path.realpath(entry))}
    except (UnicodeEncodeError, ValueError):  # a name no file can have: nothing to resolve
        return {os.path.abspath(given)}


def directory_ending(path: str | os.PathLike) -> str | None:
    """How a path's spelling names a directory, its last component empty or ``.``
    (``"/"`` for ``A/f.json/``, ``"/."`` for ``A/f.json/.``), or None. ``Path`` drops such an
    ending (``Path("A/f.json/")`` is ``A/f.json``), so it is looked for in the text given."""
    text = os.fspath(path)
    if not isinstance(text, str):
        return None
    if os.altsep:
        text = text.replace(os.altsep, os.sep)
    parts = text.rsplit(os.sep, 1)
    return os.sep + parts[1] if len(parts) == 2 and parts[1] in ("", ".") else None


def _non_directory_parent(given: Path) -> str | None:
    """The nearest existing ancestor of ``given`` when it is not a directory (a regular
    file, say: ``file.txt/receipt.json``), else None (creating missing folders is fine)."""
    for parent in (given.parent, *given.parent.parents):
        try:
            mode = os.stat(parent).st_mode
        except FileNotFoundError:
            continue
        except NotADirectoryError:
            continue  # a file further up: found on a later iteration
        except (OSError, ValueError):
            return None  # cannot tell here: the writer reports what goes wrong
        return None if stat.S_ISDIR(mode) else os.fspath(parent)
    return None


def _kind_problem(target: Path) -> str | None:
    """Why ``target`` may not be replaced by a receipt, or None when it may (absent, or a
    regular file). A symlink is refused whatever it points to, even nothing or itself."""
    try:
        mode = os.lstat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None  # nothing there yet; the writer reports a parent it cannot create
    except OSError as problem:
        reason = "a symlink loop" if problem.errno == errno.ELOOP else problem.strerror
        return f"it cannot be inspected ({reason})"
    if stat.S_ISLNK(mode):
        return "it is a symbolic link (receipts are never written through one)"
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _FILE_KINDS if test(mode)), "an unknown file type")
    return f"it is not a regular file ({kind})"


def _identity(path: str) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino


def _root_holding(named: str, target: str, roots: set[str]) -> str | None:
    """The root that the output lies in, if any: by path (the output as named and with its
    directory resolved), then by identity of every existing directory above the target
    (the same directory reached another way, e.g. through a bind mount)."""
    for root in sorted(roots):
        if _inside(named, root) or _inside(target, root):
            return root
    by_identity = {identity: root for root in sorted(roots) if (identity := _identity(root))}
    directory = os.path.dirname(target)
    while True:
        root = by_identity.get(_identity(directory))
        if root is not None:
            return root
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def check_output(output: str | Path, *entries: str | Path) -> Path:
    """The path a receipt for these packets will be written to: ``output`` with its
    directory resolved. Refused (:class:`OutputRefused`) when the output lies inside any
    root of any packet (:func:`packet_roots`, :func:`_root_holding`), or when something
    other than a regular file is there (:func:`_kind_problem`)."""
    given = Path(output)
    ending = directory_ending(output)
    if not given.name or ending is not None:
        raise OutputRefused(f"output {str(output)!r} names no file"
                            + (f" (it ends with {ending!r})" if ending else ""))
    blocker = _non_directory_parent(given)
    if blocker is not None:
        raise OutputRefused(f"output {output}: {blocker} is not a directory")
    target = Path(os.path.realpath(given.parent)) / given.name
    roots = set().union(*(packet_roots(entry) for entry in entries))
    root = _root_holding(os.path.abspath(given), os.fspath(target), roots)
    if root is not None:
        raise OutputRefused(f"output {output} lies inside the packet root {root}; "
                            f"receipts are written outside packets")
    problem = _kind_problem(target)
    if problem is not None:
        raise OutputRefused(f"output {output}: {problem}")
    return target


def refuse_inputs(output: str | Path, target: Path, inputs) -> None:
    """Refused (:class:`OutputRefused`) when the output names a file this command reads:
    ``inputs`` are (path, what it is) pairs (the ``--spec`` file and its parents, a packet's
    entry file, a catalog, a hook module, ...). Compared by identity (``samefile``: a hard
    link or another spelling of one file) and by resolved path. An output that does not
    exist yet is no input."""
    for path, what in inputs:
        if path is None:
            continue
        try:
            same = os.path.samefile(target, path)
        except (OSError, ValueError):
            same = False
        try:
            same = same or os.path.realpath(target) == os.path.realpath(path)
        except (OSError, ValueError):
            pass
        if same:
            raise OutputRefused(f"output {output} names {what} that this command reads "
                                f"({path}); it would be replaced: choose another output path")


def spec_inputs(spec) -> list[tuple[str, str]]:
    """The files a compiled spec was read from (itself and every parent) and the source
    files of the hook modules it runs: what a receipt must never replace."""
    found = [(str(layer.path), "a spec file" if i == 0 else f"a parent spec file (of "
              f"{spec.resolved.chain[i - 1].id})") for i, layer in enumerate(spec.resolved.chain)
             if getattr(layer, "path", None)]
    import sys

    for module in sorted(spec.hook_modules):
        source = getattr(sys.modules.get(module), "__file__", None)
        if source:
            found.append((source, f"the source of the hook module {module}"))
    return found


# ------------------------------------------------------------------ writing


def _serialize(receipt: dict) -> bytes:
    try:
        return (json.dumps(receipt, indent=2, allow_nan=False) + "\n").encode("utf-8")
    except (TypeError, ValueError, RecursionError) as problem:  # a bug, never a partial file
        raise ReceiptUnwritable(f"the receipt cannot be serialized as JSON: {problem}") from None


def _create_temporary(directory: Path, name: str) -> tuple[int, Path]:
    """A new file beside the target, created with RECEIPT_MODE so the umask applies."""
    for _ in range(TEMPORARY_ATTEMPTS):
        temporary = directory / f".{name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(temporary, _TEMPORARY_FLAGS, RECEIPT_MODE), temporary
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(directory))


@contextlib.contextmanager
def _signals_held():
    """Block :data:`HELD_SIGNALS` in this thread for the block's duration; one that arrives
    meanwhile is delivered (with its usual effect and exit status) when the block ends.
    The receipt is written by the thread that runs the command, normally the only one; a
    library caller running other threads should not leave those signals unblocked there."""
    block = getattr(signal, "pthread_sigmask", None)
    if block is None:  # no POSIX signal masks (Windows): nothing to hold
        yield
        return
    previous = block(signal.SIG_BLOCK, HELD_SIGNALS)
    try:
        yield
    finally:
        block(signal.SIG_SETMASK, previous)


def write_atomically(target: Path, receipt: dict) -> None:
    """Write to a temporary file beside the target, fsync, then rename over it.
    Raises :class:`ReceiptUnwritable` when that fails, with no temporary file left and no
    earlier file at the target either (:func:`_clear_earlier`: after a failed run the path
    never holds a receipt of another run); the message says which. From the temporary
    file's creation to its rename (or removal), terminating signals are held
    (:func:`_signals_held`): SIGTERM, SIGHUP, SIGINT... never leave a ``.NAME.HEX.tmp``."""
    try:
        _write(target, _serialize(receipt))
    except ReceiptUnwritable as problem:
        raise ReceiptUnwritable(f"{problem}; {_clear_earlier(target)}") from None


def _write(target: Path, data: bytes) -> None:
    temporary = None
    with _signals_held():
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = _create_temporary(target.parent, target.name)
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, target)
        except OSError as problem:
            _discard(temporary)
            raise ReceiptUnwritable(f"cannot write the receipt {target}: "
                                    f"{_reason(problem, target)}") from None
        except BaseException:
            _discard(temporary)
            raise


def _clear_earlier(target: Path) -> str:
    """Remove the regular file an earlier run left at ``target`` (the receipt would have
    replaced it): a runner reading the path after a failed run finds no receipt rather than
    an old one. Says what is at the path now."""
    try:
        if not stat.S_ISREG(os.lstat(target).st_mode):
            return f"the non-file at {target} is left as it was"
        os.unlink(target)
    except (FileNotFoundError, NotADirectoryError):
        return f"no file is at {target}"
    except OSError as problem:
        return (f"the earlier file at {target} could not be removed ({_reason(problem, target)}) "
                f"and is not this run's receipt")
    return f"the earlier file at {target} was removed (it was not this run's receipt)"


def _reason(problem: OSError, target: Path) -> str:
    """The error in words, naming the path it concerns when that is not the target."""
    reason = problem.strerror or str(problem)
    if problem.filename and os.fspath(problem.filename) != os.fspath(target):
        reason += f" ({problem.filename})"
    return reason


def _discard(temporary: Path | None) -> None:
    if temporary is not None:
        with contextlib.suppress(OSError):
            temporary.unlink()
