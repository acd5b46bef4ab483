"""Finding and reading spec files: YAML with marks, then the meta-schema."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from flarespec.spec.errors import SpecInvalid, SpecIssue
from flarespec.spec.metaschema import shape_errors
from flarespec.spec.yamlmarks import Mark, MarkedDict, SpecYamlError, load_marked, mark_at


@dataclass
class SpecFile:
    path: Path
    data: MarkedDict
    digest: str  # SHA-256 of the file's bytes

    @property
    def id(self) -> str:
        return self.data["id"]


def read_spec_file(path: str | Path) -> SpecFile:
    import hashlib

    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise SpecInvalid([SpecIssue(f"cannot read spec: {error.strerror}",
                                     Mark(str(path), 1, 1), "spec.unreadable")]) from None
    try:
        data = load_marked(raw.decode("utf-8"), str(path))
    except UnicodeDecodeError:
        raise SpecInvalid([SpecIssue("spec is not UTF-8", Mark(str(path), 1, 1),
                                     "spec.yaml")]) from None
    except SpecYamlError as error:
        raise SpecInvalid([SpecIssue(error.reason, error.mark, "spec.yaml")]) from None
    if not isinstance(data, dict):
        raise SpecInvalid([SpecIssue("a spec is a YAML mapping", Mark(str(path), 1, 1),
                                     "spec.shape")])
    issues = [SpecIssue(message, mark_at(data, where), "spec.shape")
              for where, message in shape_errors(data)]
    if issues:
        raise SpecInvalid(issues)
    return SpecFile(path, data, hashlib.sha256(raw).hexdigest())


def bundled_spec_dir() -> Path:
    """specs/ as installed (package flarespec.bundled_specs) or in a source checkout."""
    import flarespec.bundled_specs as bundled

    return Path(next(iter(bundled.__path__)))


class SpecLibrary:
    """Every spec under some directories, indexed by id (for ``extends`` and selection)."""

    def __init__(self, directories: list[Path] | None = None, *, siblings: Path | None = None):
        self.directories = directories if directories is not None else [bundled_spec_dir()]
        # a spec given by path sees the specs beside it (not below: /tmp is no spec tree)
        self.siblings = siblings
        self._by_id: dict[str, SpecFile] | None = None
        # a broken neighbour must not stop a valid spec from loading; all() still reports it
        self.broken: list[SpecIssue] = []

    def _index(self) -> dict[str, SpecFile]:
        if self._by_id is None:
            self._by_id = {}
            paths = sorted(self.siblings.glob("*.yaml")) if self.siblings else []
            for directory in self.directories:
                paths.extend(sorted(Path(directory).rglob("*.yaml")))
            for path in paths:
                try:
                    spec = read_spec_file(path)
                except SpecInvalid as problem:
                    self.broken.extend(problem.issues)
                    continue
                known = self._by_id.get(spec.id)
                if known is None:
                    self._by_id[spec.id] = spec
                elif known.path.resolve() != spec.path.resolve():
                    self.broken.append(SpecIssue(
                        f"spec id {spec.id!r} is also used by {known.path}",
                        spec.data.key_marks.get("id"), "spec.duplicate-id"))
        return self._by_id

    @classmethod
    def for_file(cls, path: str | Path) -> tuple["SpecLibrary", SpecFile]:
        """A library for a spec given by path: the file itself wins, then its siblings (for
        ``extends``), then the bundled specs."""
        path = Path(path).resolve()
        spec_file = read_spec_file(path)
        bundled = bundled_spec_dir()
        library = cls([bundled], siblings=path.parent if path.parent != bundled else None)
        library.add(spec_file)
        return library, spec_file

    def add(self, spec: SpecFile) -> None:
        self._index()[spec.id] = spec

    def get(self, spec_id: str) -> SpecFile | None:
        """The spec with this id; when it is not found and some file is broken, that file's
        issues are the likelier answer than "unknown spec", so they are raised."""
        found = self._index().get(spec_id)
        if found is None and self.broken:
            raise SpecInvalid(self.broken)
        return found

    def all(self) -> list[SpecFile]:
        """Every spec; a broken file among them is an error here (bundled specs must all load)."""
        specs = list(self._index().values())
        if self.broken:
            raise SpecInvalid(self.broken)
        return specs
