"""The continuity layer: every ``.md`` file of a folder read as one whole (§3, §7.1.1, §7.3.1, §7.4, §7.6).

A layer is one ``[reminder]`` plus any number of ``[external_module]`` and
``[external_memory]`` files (§3.1).  :meth:`Layer.load` parses each file once
and then resolves what no single file can: ids across files, nucleus
assignments, CONNECTIONS edges and effective module states.

Rulings (where the standard leaves the application to decide):

* **File type** comes from the H1 tag only, never from the filename (§3.4).
* **Layer order** is: the ``[reminder]`` file(s) first, then every other file,
  each group sorted by relative path.  This order decides which of two files
  declaring the same id is merged (the reminder is never pushed out by an
  external file) and the numbering of temporary ids.
* **Id conflicts** (§7.1.1, "declared vs declared"): a file declaring a MODULE
  id or a NUCLEUS id already declared by an earlier merged file is *not merged*:
  its modules, nuclei, registry and edges stay out of the layer until the user
  resolves the conflict (``LAYER_ID_CONFLICT`` at each colliding declaration).
  Nothing slides.
* **Temporary ids** ``~T1``, ``~T2``, ... go to every MODULE, TOPIC and
  SUBTOPIC declared without an id in a merged file, in layer order then
  document order.  They skip any id declared anywhere in the layer (a declared
  id always wins, even one that literally reads ``~Tn``, which the parser
  reports as ``RESERVED_ID``).  They live in this object only and are never
  written to disk.  Sub-modules get none: nothing addresses them (§7.3).
* **Nucleus assignments** (§7.4.3, §7.4.4): the parser checks ``[NUCLEI: ...]``
  against the nuclei of the same file and reports
  ``UNRESOLVED_NUCLEUS_REFERENCE`` otherwise.  In a layer a nucleus may live in
  another file (the reminder, or a nucleus file, §7.4.3), so that file-level
  warning is dropped whenever the nucleus is declared by a merged file of the
  layer, and kept otherwise.  The ruling applies to every file, the reminder
  included, because §7.4.3 lets nuclei live in external files.  Likewise every
  file-level ``UNRESOLVED_CONNECTION`` (§7.6) of a merged file is dropped: the
  layer looks each CONNECTIONS target up in all its files and reports
  ``LAYER_UNRESOLVED_CONNECTION`` for the ones declared nowhere.  Files that are
  not merged keep all their file-level diagnostics.
* **State registries** (§7.3.1): the reminder's ``MODULE_STATE_REGISTRY``
  governs every module of the layer; a registry in any other file governs only
  that file's modules (an entry naming a module of another file is reported
  ``LAYER_REGISTRY_OUT_OF_SCOPE`` and ignored); for its own modules a file's
  registry wins over the reminder's.  Precedence: own-file registry, reminder
  registry, declared ``STATE``.  ``- permanent`` modules ignore every registry
  entry (``PERMANENT_STATE_OVERRIDE_ATTEMPT`` when the registry is in another
  file; the parser reports the same-file case).  An entry listed both ACTIVE and
  INACTIVE in one registry is ignored (the parser reports it).
* **No state at all**: a MODULE of a reminder or external module with neither a
  declared STATE nor a registry entry is reported ``LAYER_MODULE_WITHOUT_STATE``
  and its effective state is ``None``.  Containers of external memories (topics,
  legacy ``## MODULE`` memories) are not reported: a memory is not refused over a
  recommended section.
* **Selection**: ``only``/``exclude`` are glob patterns on relative paths,
  chosen by the application and never written into files.  ``*`` and ``?``
  stay inside one folder, ``**`` crosses folders, ``[`` and ``]`` are literal
  (layer filenames carry ``[ext_memory]``-style tags, §3.4).  A pattern
  without ``/`` is matched against the file name alone.  A pattern that names a
  folder selects everything under it (``drafts``, ``drafts/``, ``a/drafts``); a
  trailing ``/`` names folders only.
"""

from __future__ import annotations

import os
import shlex
import re
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Literal, TypeVar, cast

from ..core import gcpause
from ..core.diagnostics import Diagnostic, Pending, placed, severity_counts
from ..core.document import Document
from ..core.facts import ContainerTable
from ..core.nodes import Connection, ModuleInfo, NucleusInfo, State, TargetKind
from ..core.parser import parse_file
from ..core.rows import RowSequence

StrPath = str | os.PathLike[str]
_T = TypeVar("_T", bound=tuple[str, Path])
#: Declared module ids of the merged files: id -> (relative path, its declaration).
_Declared = dict[str, tuple[str, ModuleInfo]]


class LayerError(Exception):
    """The layer cannot be loaded at all (missing path, no ``.md`` file, empty selection).

    The path concerned is a field (``path``), between the words before it (``before``) and after it
    (``after``), so a face names it its own way (:meth:`describe`) without editing the text.
    """

    def __init__(self, before: str, path: str | os.PathLike[str] | None = None, after: str = ""):
        super().__init__(f"{before}{'' if path is None else path}{after}")
        self.before, self.after = before, after
        self.path = None if path is None else Path(path)

    def describe(self, where: str) -> str:
        """The message with the path named as ``where`` (e.g. "the layer folder")."""
        return str(self) if self.path is None else f"{self.before}{where}{self.after}"


@dataclass(frozen=True, slots=True)
class LayerFile:
    """One file of the layer.  ``merged`` is False when an id conflict keeps it out (§7.1.1)."""

    rel: str
    path: Path
    doc: Document
    merged: bool

    @property
    def file_type(self) -> str | None:
        return self.doc.file_type


@dataclass(frozen=True, slots=True)
class StateSource:
    """Where a module's effective state comes from (§7.3.1): its declared STATE, or the
    ``MODULE_STATE_REGISTRY`` of the file ``registry`` (a layer-relative path)."""

    registry: str | None = None  # None: the module's declared STATE

    @property
    def declared(self) -> bool:
        return self.registry is None

    def __str__(self) -> str:
        """The wire form of ``status --json`` (``stateSource``): 'declared' or 'registry:<rel>'."""
        return "declared" if self.registry is None else f"registry:{self.registry}"


DECLARED = StateSource()


@dataclass(frozen=True, slots=True)
class LayerModule:
    """A MODULE, TOPIC or SUBTOPIC of a merged file, with its layer-wide facts."""

    module_id: str | None  # declared id, or ~Tn; None only for ignored duplicates
    temporary: bool
    file: str
    info: ModuleInfo
    effective_state: State | None  # None: topics, modules with no known state
    state_source: StateSource | None  # None: no state (topics, modules without one)

    @property
    def keyword(self) -> str | None:
        return self.info.keyword

    @property
    def is_module(self) -> bool:
        """A ``## MODULE`` declaration (not a topic or sub-topic)."""
        return self.info.type == "module" and self.info.keyword is None


class LayerModules(RowSequence[LayerModule]):
    """The MODULE/TOPIC/SUBTOPIC containers of the merged files, in layer order (``Layer.modules``).

    A :class:`LayerModule` is made when it is read, from its file's ``Document.modules`` (a table of columns,
    B11), its temporary number and its effective state: the layer holds no object per container, which for a
    file of 100,000 topics were 100,000 of them and their ``ModuleInfo`` (B12).  Sub-modules are left out
    (§7.3: nothing addresses them).  Equal to any sequence of the same :class:`LayerModule` values
    and hashed like that tuple."""

    __slots__ = ("_files", "_ends", "_states")

    def __init__(self, files: list[tuple[str, Sequence[ModuleInfo], array[int]]],
                 states: dict[tuple[str, int], tuple[str | None, StateSource | None]]) -> None:
        """``files``: (path, its containers, each container's ~Tn number or 0); ``states``: (path, line) ->
        the effective state and where it comes from."""
        self._files: list[tuple[str, Sequence[ModuleInfo], array[int], array[int]]] = []
        self._ends = array("q")
        total = 0
        for rel, modules, numbers in files:
            rows = array("q", (row for row, m in enumerate(modules) if m.type == "module"))
            self._files.append((rel, modules, numbers, rows))
            total += len(rows)
            self._ends.append(total)
        self._states = states

    def _item(self, index: int) -> LayerModule:
        f = bisect_right(self._ends, index)
        rel, modules, numbers, rows = self._files[f]
        row = rows[index - (self._ends[f - 1] if f else 0)]
        return self._made(rel, modules[row], numbers[row])

    def _made(self, rel: str, m: ModuleInfo, n: int) -> LayerModule:
        """The layer's view of container ``m`` of file ``rel``: its id or ~Tn (``n``, §7.1.1) and effective state."""
        mid = m.id if m.id is not None and not m.ignored else (f"~T{n}" if n else None)
        state, source = self._states.get((rel, m.line), (None, None))
        return LayerModule(mid, m.id is None, rel, m, cast("State | None", state), source)

    def at(self, rel: str, line: int) -> LayerModule | None:
        """The container of file ``rel`` declared on ``line``, or None (bisection in the file's rows)."""
        for f, (frel, modules, _, rows) in enumerate(self._files):
            if frel != rel:
                continue
            if isinstance(modules, ContainerTable):  # integers only: no ModuleInfo made per probe
                row = modules.row_of(line)
                j = bisect_left(rows, row) if row >= 0 else len(rows)
                found = j < len(rows) and rows[j] == row
            else:
                j = bisect_left(rows, line, key=lambda row: modules[row].line)
                found = j < len(rows) and modules[rows[j]].line == line
            return self._item((self._ends[f - 1] if f else 0) + j) if found else None
        return None

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __iter__(self) -> Iterator[LayerModule]:
        for rel, modules, numbers, rows in self._files:
            for row in rows:
                yield self._made(rel, modules[row], numbers[row])


@dataclass(frozen=True, slots=True)
class LayerNucleus:
    nucleus_id: int
    file: str
    info: NucleusInfo


@dataclass(frozen=True, slots=True)
class LayerEdge:
    """A resolved edge: from the container declared at (``file``, ``line``) to a module or nucleus.

    ``kind`` is 'governs' (``[NUCLEI: ...]``, module to nucleus) or 'connects'
    (a CONNECTIONS bullet); ``target_kind`` is 'module' or 'nucleus'.
    """

    kind: Literal["governs", "connects"]
    file: str
    line: int
    target_kind: TargetKind
    target: str


@dataclass(frozen=True)
class Layer:
    """A loaded layer: its files in layer order and everything resolved across them.

    ``diagnostics`` holds the layer-level findings only; :meth:`all_diagnostics`
    adds the files' own (minus the ones the layer resolves).  Temporary ids
    appear as ``LayerModule.module_id`` and nowhere on disk (§7.1.1).
    """

    root: Path
    name: str
    files: tuple[LayerFile, ...]
    diagnostics: tuple[Diagnostic, ...]  # layer-level only; .path is the relative path
    modules: Sequence[LayerModule]  # MODULE/TOPIC/SUBTOPIC of merged files, layer order (LayerModules)
    nuclei: tuple[LayerNucleus, ...]
    edges: tuple[LayerEdge, ...]
    reminder: str | None  # relative path of the layer's reminder
    # (rel, index in doc.diagnostics)
    superseded: frozenset[tuple[str, int]] = field(default_factory=frozenset, repr=False)

    # -- loading ------------------------------------------------------------------------
    @classmethod
    def load(cls, path: StrPath, *, only: Sequence[str] | None = None, exclude: Sequence[str] | None = None,
             confined: bool = False, tree: bool = False, outline: bool = False) -> "Layer":
        """Read every ``.md`` file under ``path`` (or the single file ``path``) as one layer
        (``confined``: only files that resolve inside the folder, see :func:`discover`; ``tree``: each
        file's block tree built as it is parsed, for a caller that walks them; ``outline``: each file's
        outline read in the same scan, for a caller that reads them all, W96)."""
        root, found = discover(path, confined=confined)
        found = select(found, only=only, exclude=exclude)
        if not found:
            raise LayerError("no .md files left in ", path, " after --only/--exclude")
        with gcpause.paused():
            return _Loader(root, found, tree, outline).run()

    @classmethod
    def from_documents(cls, root: StrPath, documents: Iterable[tuple[str, StrPath, Document]]) -> "Layer":
        """A layer of already-parsed files: ``documents`` is ``[(rel, path, doc), ...]``.

        The same resolution as :meth:`load` (ids, states, edges, findings), nothing read
        from disk: a long-running face (an editor's open buffers, a cache of parsed files)
        builds the layer from the texts it holds.  Files are taken in relative-path order,
        as :func:`discover` lists them.
        """
        docs = sorted(((rel, Path(path), doc) for rel, path, doc in documents), key=lambda x: x[0])
        with gcpause.paused():
            return _Loader(Path(root), []).build(docs)

    # -- queries ------------------------------------------------------------------------
    def file(self, rel: str) -> LayerFile:
        for f in self.files:
            if f.rel == rel:
                return f
        raise KeyError(rel)

    def module_at(self, rel: str, line: int) -> LayerModule | None:
        """The MODULE/TOPIC/SUBTOPIC declared on ``line`` of the merged file ``rel``, or None."""
        modules = self.modules
        if isinstance(modules, LayerModules):
            return modules.at(rel, line)
        return next((m for m in modules if m.file == rel and m.info.line == line), None)

    def module(self, module_id: str) -> LayerModule | None:
        for m in self.modules:
            if m.module_id == module_id:
                return m
        return None

    def file_diagnostics(self, rel: str) -> list[Diagnostic]:
        """The parser's diagnostics of one file minus those the layer resolves, path set to ``rel``."""
        f = self.file(rel)
        return [replace(d, path=rel) for i, d in enumerate(f.doc.diagnostics) if (rel, i) not in self.superseded]

    def superseded_diagnostics(self) -> list[Diagnostic]:
        """File-level diagnostics the layer resolves (UNRESOLVED_NUCLEUS_REFERENCE, UNRESOLVED_CONNECTION),
        path = ``rel``."""
        out: list[Diagnostic] = []
        for f in self.files:
            out.extend(replace(d, path=f.rel) for i, d in enumerate(f.doc.diagnostics)
                       if (f.rel, i) in self.superseded)
        return out

    def _kept(self) -> Iterator[tuple[str | None, Diagnostic]]:
        """The findings the layer reports, as they are stored: each file's not superseded (with its path), then
        the layer's own (None: they carry their path)."""
        superseded = self.superseded
        for f in self.files:
            for i, d in enumerate(f.doc.diagnostics):
                if (f.rel, i) not in superseded:
                    yield f.rel, d
        for d in self.diagnostics:
            yield None, d

    def all_diagnostics(self) -> list[Diagnostic]:
        """File-level (after layer resolution) and layer-level diagnostics, in layer order."""
        order = {f.rel: i for i, f in enumerate(self.files)}
        out = [d if rel is None else replace(d, path=rel) for rel, d in self._kept()]
        out.sort(key=lambda d: (order.get(d.path or "", -1), d.line, d.column))
        return out

    def severity_counts(self) -> tuple[int, int]:
        """How many errors and warnings :meth:`all_diagnostics` holds, counted where they are (no copy: a file
        of 100,000 findings made 100,000 of them to count, B17)."""
        return severity_counts(d for _, d in self._kept())

    @property
    def merged_files(self) -> list[LayerFile]:
        return [f for f in self.files if f.merged]


# -- discovery and selection ------------------------------------------------------------

#: Folders never walked into (besides hidden ones, whose name starts with a dot).
SKIPPED_FOLDERS = frozenset(("node_modules", "__pycache__"))
#: The folder zonemark keeps beside the files (history, locks, proposals), compared case-insensitively.
STATE_FOLDER = ".zonemark"
#: Patterns in this file at the layer root (one per line, ``#`` comments) are left out like ``--exclude``.
IGNORE_FILE = ".zonemarkignore"


def discover(path: StrPath, *, confined: bool = False) -> tuple[Path, list[tuple[str, Path]]]:
    """The layer root and its files as (relative posix path, path), sorted by relative path.

    Walking a folder (issue-7 rulings, docs/conformance.md "Which files a folder holds"): hidden
    folders and files (a name starting with ``.``: ``.git``, ``.venv``, ``.zonemark``) and
    ``node_modules`` are skipped; the patterns of a ``.zonemarkignore`` at the root are left
    out; symbolic links to folders are not followed.  A file is its resolved path: a file
    reached twice (through a symbolic link) is read once, under its own name when it is inside
    the layer.  A dangling symbolic link stays in the list, so the loader reports it
    (``LAYER_UNREADABLE_FILE``) and checks the rest.

    ``confined`` (the faces an AI drives: the MCP server) leaves out every file whose resolved
    location, after every symbolic link, is outside the resolved folder: a link inside the
    layer does not lend an agent a file the user keeps elsewhere.
    """
    p = Path(path)
    if not p.exists():
        if p.is_symlink():
            raise LayerError("", path, f" is a dangling symbolic link (to {os.readlink(p)})")
        raise LayerError("no such file or folder: ", path)
    if p.is_file():
        return p.parent, [(p.name, p)]
    if not p.is_dir():
        raise LayerError("not a file or folder: ", path)
    found: list[tuple[str, Path]] = []
    errors: list[OSError] = []
    for folder, dirs, files in os.walk(p, onerror=errors.append):
        dirs[:] = sorted(d for d in dirs if _left_out_folder(d) is None)
        base = Path(folder)
        for name in files:
            if _left_out_name(name) is None:
                q = base / name
                if q.is_file() or (q.is_symlink() and not q.exists()):
                    found.append((q.relative_to(p).as_posix(), q))
    if errors and not found:
        exc = errors[0]
        raise LayerError("cannot list ", path, f": {exc.strerror or exc}")
    patterns = ignore_patterns(p)
    found = select(_one_per_file(p, found), exclude=patterns or None)
    found = [x for x in found if not x[1].is_symlink() or _link_kept(p, x[1], patterns)]
    if confined:
        found = [x for x in found if inside(p, x[1])]
    if not found:
        raise LayerError("no .md files in folder: ", path)
    return p, sorted(found, key=lambda x: x[0])


def left_out(root: StrPath, rel: str, *, confined: bool = False) -> str | None:
    """Why the file ``rel`` (relative to the layer folder ``root``, ``/``-separated) is not a file of the
    layer, or None when it is one: the rule :func:`discover` walks by (W5), decided for one path (W40).

    Every face asks this before it reads or writes a file it is named: the MCP server, the review page,
    the language server and the command line agree on which files a layer holds.  A folder on the way whose
    name starts with ``.`` (``.git``, ``.zonemark`` in any case) or is ``node_modules`` (in any case: a file
    system may ignore case), a hidden file, a file that is not ``.md``, a path the ``.zonemarkignore``
    names, a folder on the way that is a symbolic link (never walked), and a symbolic link to a file inside
    the folder that is itself left out are left out; ``confined`` also leaves out a file whose resolved
    location is outside the folder.  The cost is one ``lstat`` per folder on the way and one match per
    ignore pattern.
    """
    root = Path(root)
    patterns = ignore_patterns(root)
    why = _left_out(root, rel, patterns)
    if why is not None:
        return why
    path = root.joinpath(*rel.split("/"))
    if path.is_symlink():
        real = Path(os.path.realpath(path))
        real_root = Path(os.path.realpath(root))
        if real_root in real.parents:
            target = real.relative_to(real_root).as_posix()
            why = _left_out(real_root, target, patterns)
            if why is not None:
                return f"'{rel}' is a symbolic link to {why}"
        elif confined:
            return f"'{rel}' leads outside the layer folder (a symbolic link)"
    return None


def _left_out(root: Path, rel: str, patterns: list[str]) -> str | None:
    """:func:`left_out` by the names on the path, its folder links and the ignore ``patterns``."""
    parts = rel.split("/")
    if not rel or any(not part for part in parts):
        return f"'{rel}', not a relative path of a file"
    for part in parts[:-1]:
        why = _left_out_folder(part)
        if why is not None:
            return f"'{rel}', {why}"
    why = _left_out_name(parts[-1])
    if why is not None:
        return f"'{rel}', {why}"
    base = root
    for i, part in enumerate(parts[:-1]):
        base = base / part
        if base.is_symlink():
            return f"'{rel}', under {'/'.join(parts[:i + 1])}: a symbolic link to a folder, which is never walked"
    for pattern in patterns:
        if selects(rel, pattern):
            return f"'{rel}', left out by the {IGNORE_FILE} pattern '{pattern.removesuffix('**')}'"
    return None


def _left_out_folder(name: str) -> str | None:
    """Why a folder of this name is not walked (W5, W40), or None."""
    if name.startswith("."):
        if name.casefold() == STATE_FOLDER:
            return f"inside {name}/, zonemark's own folder"
        return f"inside the hidden folder {name}/"
    if name.casefold() in SKIPPED_FOLDERS:
        return f"inside {name}/, a folder never walked"
    return None


def _left_out_name(name: str) -> str | None:
    """Why a file of this name is not a file of the layer (W5), or None."""
    if name.startswith("."):
        return "a hidden file (its name starts with '.')"
    if not name.endswith(".md"):
        return "not a .md file"
    return None


def walked_name(name: str) -> bool:
    """Whether a folder walk reads a file of this name (W5): ``*.md``, not hidden."""
    return _left_out_name(name) is None


def inside(root: StrPath, path: StrPath) -> bool:
    """Whether ``path``, every symbolic link resolved, lies inside the folder ``root`` (resolved)."""
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    return real == real_root or real_root in real.parents


def _link_target(root: Path, link: Path) -> str:
    """Where the symbolic link ``link`` points: relative to the layer folder ``root`` when it points inside it
    (a file of the layer is named by its path in the layer, wherever the folder lies), else as the link says."""
    said = os.readlink(link)
    target = Path(os.path.normpath(link.parent / said))
    real_root = Path(os.path.realpath(root))
    for folder in dict.fromkeys((Path(root), real_root)):
        if folder in target.parents:
            return target.relative_to(folder).as_posix()
    return said


def _link_kept(root: Path, link: Path, patterns: list[str]) -> bool:
    """A symbolic link to a file inside ``root`` is kept only when its target is a file of the layer (W40)."""
    real = Path(os.path.realpath(link))
    real_root = Path(os.path.realpath(root))
    if real_root not in real.parents:
        return True  # a link out (the user's, followed by the CLI; the confined walk drops it) or dangling
    return _left_out(real_root, real.relative_to(real_root).as_posix(), patterns) is None


def _one_per_file(root: Path, found: list[tuple[str, Path]]) -> list[tuple[str, Path]]:
    """One entry per resolved file: the one that is not a symbolic link, else the first by name."""
    chosen: dict[str, tuple[str, Path]] = {}
    for rel, q in sorted(found, key=lambda x: (x[1].is_symlink(), x[0])):
        chosen.setdefault(os.path.realpath(q), (rel, q))
    return list(chosen.values())


def ignore_patterns(root: Path) -> list[str]:
    """The patterns of ``root/.zonemarkignore`` (``dir/`` means everything under ``dir``)."""
    try:
        lines = (root / IGNORE_FILE).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        out.append(line + "**" if line.endswith("/") else line)
    return out


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out))


def matches(rel: str, pattern: str) -> bool:
    """Glob match of a relative path (see the module docstring for the dialect)."""
    pattern = pattern.strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    target = rel if "/" in pattern else PurePosixPath(rel).name
    return _glob_regex(pattern).fullmatch(target) is not None


def selects(rel: str, pattern: str) -> bool:
    """Whether ``pattern`` names the file ``rel`` or a folder it lies under (a trailing ``/``: folders only)."""
    pattern = pattern.strip()
    if pattern.startswith("./"):
        pattern = pattern[2:]
    folders_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if not pattern:
        return False
    if not folders_only and matches(rel, pattern):
        return True
    parts = rel.split("/")[:-1]
    return any(matches("/".join(parts[:i]), pattern) for i in range(1, len(parts) + 1))


def select(found: Iterable[_T], *, only: Sequence[str] | None = None,
           exclude: Sequence[str] | None = None) -> list[_T]:
    """Keep files matching any ``only`` pattern (all when None), then drop any matching ``exclude``."""
    out = list(found)
    if only:
        out = [x for x in out if any(selects(x[0], p) for p in only)]
    if exclude:
        out = [x for x in out if not any(selects(x[0], p) for p in exclude)]
    return out


# -- the loader -------------------------------------------------------------------------

class _Loader:
    def __init__(self, root: Path, found: list[tuple[str, Path]], tree: bool = False,
                 outline: bool = False) -> None:
        self.root = root
        self.found = found
        self.tree = tree
        self.outline = outline
        self.pending: list[Pending] = []
        self.diags: list[Diagnostic] = []

    def diag(self, code: str, rel: str, line: int, column: int, message: str) -> None:
        self.pending.append((code, line, column, message, rel, None, None))

    def run(self) -> Layer:
        docs = []
        for rel, path in self.found:
            try:
                docs.append((rel, path, parse_file(path, tree=self.tree, outline=self.outline)))
            except OSError as exc:
                if path.is_symlink() and not path.exists():
                    self.diag("LAYER_UNREADABLE_FILE", rel, 1, 1,
                              f"a dangling symbolic link (to {_link_target(self.root, path)}): there is no file "
                              f"to read")
                else:
                    self.diag("LAYER_UNREADABLE_FILE", rel, 1, 1, f"cannot read this file: {exc.strerror or exc}")
        return self.build(docs)

    def build(self, docs: list[tuple[str, Path, Document]]) -> Layer:
        """Resolve the layer from parsed files ``[(rel, path, doc), ...]`` in path order."""
        docs = self._without_conflict_copies(docs)
        reminders = [x for x in docs if x[2].file_type == "reminder"]
        others = [x for x in docs if x[2].file_type != "reminder"]
        ordered = reminders + others
        reminder = reminders[0][0] if reminders else None
        if not reminders:
            self.diag("LAYER_NO_REMINDER", ".", 1, 1,
                      "no file of this layer has a [reminder] H1: nuclei and registry of the reminder are missing")
        for rel, _, doc in reminders[1:]:
            self.diag("LAYER_MULTIPLE_REMINDERS", rel, doc.title_line or 1, 1,
                      f"a second [reminder] in the layer (the layer's reminder is {reminder});"
                      " a layer has exactly one")

        files = self._merge(ordered)
        merged = [f for f in files if f.merged]
        nuclei = [LayerNucleus(n.nucleus_id, f.rel, n) for f in merged for n in f.doc.nuclei if not n.ignored]
        nucleus_ids = {n.nucleus_id for n in nuclei}
        temp = self._temporary_ids(merged)
        declared = {m.id: (f.rel, m) for f in merged for m in f.doc.modules
                    if _is_module(m) and not m.ignored and m.id is not None}
        superseded = self._nucleus_references(merged, nucleus_ids)
        # §7.6: a merged file's edges are looked up in the whole layer (LAYER_UNRESOLVED_CONNECTION
        # below), so the file-level UNRESOLVED_CONNECTION is replaced, resolved or not.
        superseded |= {(f.rel, i) for f in merged for i, d in enumerate(f.doc.diagnostics)
                       if d.code == "UNRESOLVED_CONNECTION"}
        edges = self._edges(merged, declared, nucleus_ids, temp)
        states = self._states(merged, declared, reminder, files)
        modules = LayerModules([(f.rel, f.doc.modules, temp[f.rel]) for f in merged], states)
        file_types = {f.rel: f.file_type for f in files}
        for lm in modules:
            if (lm.is_module and not lm.info.ignored and lm.effective_state is None
                    and file_types[lm.file] != "external_memory"):
                self.diag("LAYER_MODULE_WITHOUT_STATE", lm.file, lm.info.line, 1,
                          f"MODULE {lm.module_id} has no STATE and no registry entry: its load state is unknown")
        order = {f.rel: i for i, f in enumerate(files)}
        self.diags = self._placed({f.rel: f.doc.source for f in files})
        self.diags.sort(key=lambda d: (order.get(d.path or "", -1), d.line, d.column))
        return Layer(self.root, self.root.resolve().name or str(self.root), tuple(files), tuple(self.diags),
                     modules, tuple(nuclei), tuple(edges), reminder, frozenset(superseded))

    def _without_conflict_copies(self, docs: list[tuple[str, Path, Document]]) -> list[tuple[str, Path, Document]]:
        """A sync tool's conflict copy is reported once and left out of the layer (G30)."""
        from .copies import conflict_copy
        present = {rel for rel, _, _ in docs}
        kept: list[tuple[str, Path, Document]] = []
        for item in docs:
            copy = conflict_copy(item[0], present)
            if copy is None:
                kept.append(item)
                continue
            command = f"zonemark merge-file --two-way {shlex.quote(copy.original)} {shlex.quote(copy.rel)}"
            self.diag("LAYER_SYNC_CONFLICT_COPY", copy.rel, 1, 1,
                      f"a {copy.tool} conflict copy of {copy.original}, left out of the layer; merge it with: "
                      f"{command} (in the layer's folder), then delete the copy")
        return kept

    def _placed(self, sources: dict[str, str]) -> list[Diagnostic]:
        """The layer's findings with their extent on the lines of their files (a file the layer could not
        read, or the folder itself, has no lines: one character at the column)."""
        by_file: dict[str, list[Pending]] = {}
        for d in self.pending:
            by_file.setdefault(d[4] or "", []).append(d)
        return [p for rel, found in by_file.items() for p in placed(found, sources.get(rel, ""))]

    def _merge(self, ordered: list[tuple[str, Path, Document]]) -> list[LayerFile]:
        """§7.1.1 declared-vs-declared: the later file is not merged, nothing slides."""
        claimed_modules: dict[str, tuple[str, int]] = {}
        claimed_nuclei: dict[int, tuple[str, int]] = {}
        files = []
        for rel, path, doc in ordered:
            mods = [(m.id, m.line) for m in doc.modules if _is_module(m) and not m.ignored and m.id is not None]
            nucs = [(n.nucleus_id, n.line) for n in doc.nuclei if not n.ignored]
            clashes: list[tuple[str, str | int, int, tuple[str, int]]] = [
                ("MODULE", i, ln, claimed_modules[i]) for i, ln in mods if i in claimed_modules]
            clashes += [("NUCLEUS", nid, ln, claimed_nuclei[nid]) for nid, ln in nucs if nid in claimed_nuclei]
            if clashes:
                for what, ident, ln, (other, other_line) in sorted(clashes, key=lambda c: c[2]):
                    self.diag("LAYER_ID_CONFLICT", rel, ln, 1,
                              f"{what} {ident} is already declared in {other}:{other_line}; this file is not"
                              " merged into the layer until one of the two ids is renamed (no silent sliding)")
                files.append(LayerFile(rel, path, doc, False))
                continue
            for i, ln in mods:
                claimed_modules[i] = (rel, ln)
            for nid, ln in nucs:
                claimed_nuclei[nid] = (rel, ln)
            files.append(LayerFile(rel, path, doc, True))
        return files

    @staticmethod
    def _temporary_ids(merged: list[LayerFile]) -> dict[str, array[int]]:
        """§7.1.1: ~Tn for id-less MODULE/TOPIC/SUBTOPIC; declared ids (even '~Tn') are skipped.

        Each file's n by container row (0: the container has an id, or is a sub-module)."""
        taken = {m.id for f in merged for m in f.doc.modules if m.id is not None}
        out: dict[str, array[int]] = {}
        n = 0
        for f in merged:
            numbers = out[f.rel] = array("q", bytes(8 * len(f.doc.modules)))
            for row, m in enumerate(f.doc.modules):
                if m.type != "module" or m.id is not None:
                    continue
                n += 1
                while f"~T{n}" in taken:
                    n += 1
                numbers[row] = n
        return out

    @staticmethod
    def _nucleus_references(merged: list[LayerFile], nucleus_ids: set[int]) -> set[tuple[str, int]]:
        """Indexes of file-level UNRESOLVED_NUCLEUS_REFERENCE diagnostics the layer resolves (§7.4.4)."""
        out: set[tuple[str, int]] = set()
        for f in merged:
            doc = f.doc
            pending = [(i, d) for i, d in enumerate(doc.diagnostics) if d.code == "UNRESOLVED_NUCLEUS_REFERENCE"]
            if not pending:
                continue
            in_file = {n.nucleus_id for n in doc.nuclei}
            by_line: dict[int, list[int]] = {}
            for i, d in pending:
                by_line.setdefault(d.line, []).append(i)
            for m in doc.modules:
                if not _is_module(m) or m.ignored or not m.assigned_nuclei:
                    continue
                missing = [n for n in m.assigned_nuclei if n not in in_file]
                if not missing:
                    continue
                # The tag sits on the declaration line or the line after it (§7.4.4).
                slots = by_line.get(m.line) or by_line.get(m.line + 1) or []
                for index, nid in zip(slots, missing):
                    if nid in nucleus_ids:
                        out.add((f.rel, index))
        return out

    def _edges(self, merged: list[LayerFile], declared: _Declared, nucleus_ids: set[int],
               temp: dict[str, array[int]]) -> list[LayerEdge]:
        """§7.4.4 governs edges and §7.6 connects edges; missing targets warn and draw nothing."""
        edges: list[LayerEdge] = []
        seen: set[tuple[str, str, int, str, str]] = set()

        def add(edge: LayerEdge) -> None:
            key = (edge.kind, edge.file, edge.line, edge.target_kind, edge.target)
            if key not in seen:
                seen.add(key)
                edges.append(edge)

        for f in merged:
            for m in f.doc.modules:
                if m.ignored:
                    continue
                if _is_module(m) and m.assigned_nuclei:
                    for nid in m.assigned_nuclei:
                        if nid in nucleus_ids:
                            add(LayerEdge("governs", f.rel, m.line, "nucleus", str(nid)))
                self._connections(f.rel, m.line, m.connections, declared, nucleus_ids, add)
            for n in f.doc.nuclei:
                if not n.ignored:
                    self._connections(f.rel, n.line, n.connections, declared, nucleus_ids, add)
        return edges

    def _connections(self, rel: str, line: int, connections: Iterable[Connection], declared: _Declared,
                     nucleus_ids: set[int], add: Callable[[LayerEdge], None]) -> None:
        for c in connections:
            if c.kind == "module":
                if c.target in declared:
                    add(LayerEdge("connects", rel, line, "module", c.target))
                    continue
                what = f"MODULE {c.target}"
            else:
                if c.target.isdigit() and int(c.target) in nucleus_ids:
                    add(LayerEdge("connects", rel, line, "nucleus", str(int(c.target))))
                    continue
                what = f"NUCLEUS {c.target}"
            self.diag("LAYER_UNRESOLVED_CONNECTION", rel, c.line, 1,
                      f"{what} is declared nowhere in the layer: no edge")

    def _states(self, merged: list[LayerFile], declared: _Declared, reminder: str | None,
                files: list[LayerFile]) -> dict[tuple[str, int], tuple[str | None, StateSource | None]]:
        """§7.3.1 effective states (see the module docstring for the cross-file ruling)."""
        unmerged_ids = {m.id: f.rel for f in files if not f.merged for m in f.doc.modules
                        if _is_module(m) and m.id is not None}
        from_reminder: dict[str, str] = {}
        from_own: dict[str, tuple[str, str]] = {}
        for f in merged:
            reg = f.doc.registry
            if reg is None:
                continue
            seen_states: dict[str, set[str]] = {}
            for mid, state, _ in reg.entry_lines:
                seen_states.setdefault(mid, set()).add(state)
            governs_all = f.rel == reminder
            for mid, state, ln in reg.entry_lines:
                if len(seen_states[mid]) > 1:
                    continue  # CONTRADICTORY_STATE_REGISTRY, reported by the parser
                target = declared.get(mid)
                if target is None:
                    where = unmerged_ids.get(mid)
                    extra = f" (it is declared in {where}, which is not merged)" if where else ""
                    self.diag("LAYER_UNKNOWN_REGISTRY_ENTRY", f.rel, ln, 1,
                              f"registry entry for module {mid}, declared nowhere in the layer{extra}: ignored")
                    continue
                owner_rel, info = target
                own = owner_rel == f.rel
                if not own and not governs_all:
                    self.diag("LAYER_REGISTRY_OUT_OF_SCOPE", f.rel, ln, 1,
                              f"module {mid} is declared in {owner_rel}: a registry outside the reminder governs"
                              " only its own file's modules; entry ignored")
                    continue
                if info.permanent:
                    if not own:
                        self.diag("PERMANENT_STATE_OVERRIDE_ATTEMPT", f.rel, ln, 1,
                                  f"module {mid} ({owner_rel}) has a permanent STATE: its registry entry is ignored")
                    continue
                if own:
                    from_own[mid] = (state, f.rel)
                else:
                    from_reminder[mid] = state
        out: dict[tuple[str, int], tuple[str | None, StateSource | None]] = {}
        for mid, (rel, info) in declared.items():
            if mid in from_own:
                state, src = from_own[mid]
                out[(rel, info.line)] = (state, StateSource(src))
            elif mid in from_reminder:
                out[(rel, info.line)] = (from_reminder[mid], StateSource(reminder))
            elif info.declared_state is not None:
                out[(rel, info.line)] = (info.declared_state, DECLARED)
        for f in merged:  # id-less modules (external files): only their declared STATE applies
            for m in f.doc.modules:
                if _is_module(m) and m.id is None and m.declared_state is not None:
                    out[(f.rel, m.line)] = (m.declared_state, DECLARED)
        return out


def _is_module(m: ModuleInfo) -> bool:
    return m.type == "module" and m.keyword is None
