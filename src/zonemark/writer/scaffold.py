"""New files and new containers in the canonical shape of §14 (§3.4, §7.1.2, §7.1.3, §7.2, §7.3.1).

:func:`new_file` writes a ``[reminder]``, ``[external_module]`` or ``[external_memory]`` file that
``zonemark check`` passes with no warning, named by the §3.4 convention (``name[ext_memory].md``,
only for files zonemark creates), and never replaces a file: the new file appears whole or not
at all (a hard link of a finished temporary file, which fails if the name is taken).

:func:`add_container` adds a topic or sub-topic to a memory, or a module skeleton to a reminder
or an external module.  Each new container is its header in a ``[P1]`` zone followed by its own
empty ``[P4]`` journal — the pairing that makes entries land under it (§7.1.2, §7.1.3).  It is a
structural change, so only the user may make it (§5.5); it goes through the store (lock, atomic
write, history, undo) and is accepted only if the file then has no diagnostic it did not have,
the new container resolves to the new header with a journal of its own, and every existing entry
keeps its owner.  Rulings (``docs/conformance.md``, "Scaffolding"):

* a sub-topic becomes the **last child** of its parent: it is inserted before the next header of
  the parent's level or higher (a topic, or a module, at the end of the file); a module goes
  before a ``MODULE_STATE_REGISTRY`` zone that ends the file, else at the end;
* the parent of a sub-topic must exist (nothing is created on the way) and the new path must
  not; ``SUBTOPIC3`` (H5) is the deepest container;
* where the header that follows does not open its own zone (a file that does not pair its
  containers with zones), the change is refused rather than guessed;
* names are the user's, but a name that would make structure — a line break, a zone tag, a
  ``[NUCLEI: …]`` or file-type tag, ``[/LOG]``, an HTML comment, closing ``#`` — is refused;
* a module without an id gets one: in a reminder the next free three-digit number of the layer,
  in an external module the name in capitals (§7.1: alphanumeric ids for external modules);
  ``[NUCLEI: ]`` (governed by no nucleus yet) and ``STATE: active`` are written for the user to
  change.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..core import syntax as sx
from ..core.document import Document
from ..core.headers import container_keyword
from ..core.parser import parse
from ..core.text import decode, encode, name_key
from .atomic import sync_dir, unlink_quietly, write_temp
from .observe import record_written
from .locate import HeaderInfo, ZoneIndex, journal_zones, resolve_container
from .offsets import ByteOffset, chars_before
from .refusals import RefusedWrite
from .snapshot import FileSnapshot, Plan
from .store import Store
from .verify import Edit, Expect, compare

#: kind given on the command line -> (H1 tag, filename tag) (§3.1, §3.4)
KINDS = {"reminder": ("reminder", "reminder"), "module": ("external_module", "ext_module"),
         "memory": ("external_memory", "ext_memory")}
DEFAULT_TOPIC = "General"
MAX_NAME_CHARS = 120
MAX_SUBTOPIC_LEVEL = 5  # SUBTOPIC3 lives at H5 (§7.1.3)
#: Codes after which a file's zones cannot be trusted to place a new container.
_BROKEN = ("UNCLOSED_PERMISSION_BLOCK", "MISMATCHED_PERMISSION_BLOCK", "NESTED_PERMISSION_BLOCK",
           "UNCLOSED_CODE_FENCE", "UNCLOSED_HTML_COMMENT", "UNCLOSED_FRONTMATTER", "MISSING_FILE_TYPE",
           "MULTIPLE_FILE_TYPES")
_BREAKS = re.compile(r"[\n\r\u2028\u2029\x85\x0b\x0c]")
_ZONE_TAG = re.compile(r"\[\s*/?\s*[Pp]\s*\d+\s*\]")
_ID = re.compile(r"[^\s:\[\],]+")
_SEGMENT_KEYWORD = re.compile(r"(?:TOPIC|SUBTOPIC\d*)[ \t]*:[ \t]*(.*)")
_MODULE_SPEC = re.compile(r"(?:MODULE\b[ \t]*)?(?:([^\s:\[\],]+)[ \t]*)?:[ \t]*(.+)")
_UNSAFE_FILENAME = re.compile(r'[\s/\\:*?"<>|\x00-\x1f]+')


@dataclass(frozen=True)
class NewFile:
    """A file :func:`new_file` created: its path, H1 tag and the containers it holds."""

    path: Path
    file_type: str
    title: str
    containers: tuple[str, ...]


@dataclass(frozen=True)
class AddedContainer:
    """What :func:`add_container` wrote: the header, its line, its journal's line, the history id."""

    path: Path
    header: str
    line: int
    journal_line: int
    address: str
    history_id: str | None


def _refuse(message: str, rule: str, code: str) -> RefusedWrite:
    return RefusedWrite(f"refused: {message} ({rule})", code=code, rule=rule)


def check_name(name: object, what: str = "name") -> str:
    """A user's name for a file, topic or module, stripped; refused when it would make structure (§5.5)."""
    if not isinstance(name, str):
        raise TypeError(f"{what} must be str, not {type(name).__name__}")
    text = name.strip()
    if not text:
        raise _refuse(f"the {what} is empty", "§7.1", "BAD_NAME")
    if _BREAKS.search(text):
        raise _refuse(f"the {what} is one line of a header; it contains a line break", "§4.1", "BAD_NAME")
    bad = sx.CONTROL_CHARS.search(text) or re.search("[\ud800-\udfff]", text)
    if bad:
        raise _refuse(f"the {what} contains the control character U+{ord(bad.group()):04X}", "§4.1", "BAD_NAME")
    if len(text) > MAX_NAME_CHARS:
        raise _refuse(f"the {what} has {len(text)} characters (at most {MAX_NAME_CHARS})", "§4.1", "BAD_NAME")
    checks = ((_ZONE_TAG, "a zone tag such as [P1]", "§5.5"),
              (re.compile(r"\[\s*NUCLEI\s*:", re.IGNORECASE), "a [NUCLEI: ...] tag", "§7.1.2, §7.4.4"),
              (sx.LOOSE_FILE_TAG, "a file-type tag", "§3.2"),
              (re.compile(r"\[/LOG\]", re.IGNORECASE), "the [/LOG] transport marker", "§N.19.3.4"),
              (re.compile(r"<!--|-->"), "an HTML comment marker", "§4"))
    for pattern, label, rule in checks:
        if pattern.search(text):
            raise _refuse(f"the {what} '{text}' contains {label}, which would be read as structure", rule, "BAD_NAME")
    if sx.CLOSING_HASHES.search(" " + text):
        raise _refuse(f"the {what} '{text}' ends in '#', which a header drops as closing hashes", "§4.1", "BAD_NAME")
    return text


def filename_for(kind: str, name: str) -> str:
    """``name[tag].md`` by the §3.4 convention (whitespace and characters unsafe in file names become '_')."""
    stem = _UNSAFE_FILENAME.sub("_", check_name(name)).strip("._") or "untitled"
    return f"{stem}[{KINDS[kind][1]}].md"


def module_id_for(name: str) -> str:
    """An alphanumeric module id from a name, for external modules (§7.1: ``CURIOSITY_ENGINE``)."""
    return re.sub(r"\W+", "_", name).strip("_").upper() or "MODULE"


def _check_id(module_id: str) -> str:
    if not isinstance(module_id, str) or not _ID.fullmatch(module_id.strip()):
        raise _refuse(f"'{module_id}' is not a module id (letters, digits, '_' or '-', no spaces or ':')",
                      "§7.1", "INVALID_MODULE_ID")
    if sx.TEMPORARY_ID.fullmatch(module_id.strip()):
        raise _refuse(f"'{module_id}' is in the temporary-id namespace ~Tn, never written to a file",
                      "§7.1.1", "INVALID_MODULE_ID")
    return module_id.strip()


# -- the blocks ---------------------------------------------------------------------------------

def _container_block(header: str) -> str:
    """A container's declaration in [P1] and its own empty [P4] journal (§7.1.2, §7.1.3)."""
    return f"[P1]\n{header}\n[/P1]\n\n[P4]\n[/P4]\n"


def _module_block(module_id: str | None, name: str) -> str:
    ident = f" {module_id}" if module_id else ""
    return (f"[P1]\n## MODULE{ident}: {name} [NUCLEI: ]\n**STATE:** active\n\n### FUNCTION\n"
            f"<!-- What this module does, when it fires (### TRIGGER) and how (### ROUTINE). -->\n[/P1]\n\n"
            f"[P4]\n[/P4]\n")


def _topic_header(name: str, level: int) -> str:
    return f"{'#' * level} {container_keyword(level)}: {name}"


def render_new(kind: str, name: str, *, topics: Iterable[str] = (),
               module_id: str | None = None) -> tuple[str, tuple[str, ...]]:
    """The text of a new file and the addresses of its containers (see :func:`new_file`)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    title = check_name(name)
    tag = KINDS[kind][0]
    head = f"# {title} [{tag}]\n\n"
    if kind == "reminder":
        body = ("[P1]\n## Center of Gravity\n<!-- Who the AI is and what it stands on, in your words. -->\n\n"
                "## RULES:\n<!-- One rule per line, for example:  * R1: Answer in the language of the question. -->\n\n"
                "## NUCLEUS 1: CORE\n### FUNCTION\n<!-- What this nucleus drives across every module. -->\n[/P1]\n\n"
                "[P4]\n## MODULE_STATE_REGISTRY:\n* ACTIVE:\n* INACTIVE:\n[/P4]\n")
        return head + body, ("Center of Gravity", "RULES:", "NUCLEUS 1")
    if kind == "module":
        mid = _check_id(module_id) if module_id is not None else module_id_for(title)
        return head + _module_block(mid, title), (mid,)
    blocks, addresses, seen = [], [], set()
    for raw in (list(topics) or [DEFAULT_TOPIC]):
        if not isinstance(raw, str):
            raise TypeError("topics must be str")
        segments = [check_name(_strip_keyword(s), "topic name") for s in raw.strip().strip("/").split("/")]
        if len(segments) > MAX_SUBTOPIC_LEVEL - 1:
            raise _refuse(f"'{raw}' is {len(segments)} levels deep; SUBTOPIC3 (H5) is the deepest container",
                          "§7.1.3", "BAD_PARENT")
        for depth in range(1, len(segments) + 1):
            address = "/".join(segments[:depth])
            if address in seen:
                continue
            seen.add(address)
            addresses.append(address)
            blocks.append(_container_block(_topic_header(segments[depth - 1], depth + 1)))
    return head + "\n".join(blocks), tuple(addresses)


def _strip_keyword(segment: str) -> str:
    m = _SEGMENT_KEYWORD.fullmatch(segment.strip())
    return m.group(1) if m else segment


# -- new files ----------------------------------------------------------------------------------

def new_file(kind: str, name: str, folder: str | os.PathLike[str] = ".", *, topics: Iterable[str] = (),
             module_id: str | None = None) -> NewFile:
    """Create a new file of ``kind`` ('reminder', 'module', 'memory') named ``name`` in ``folder``.

    ``topics`` (memory only) are paths such as 'Maintenance/Tyres': every level becomes a container
    with its journal (default: one topic, 'General').  ``module_id`` (module only) overrides the id
    made from the name.  Refused (:class:`RefusedWrite`) when the file exists, when the folder's
    layer already has a reminder (§3: exactly one), or when the module id is already declared there.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    if topics and kind != "memory":
        raise ValueError("topics are for a memory (kind 'memory')")
    if module_id is not None and kind != "module":
        raise ValueError("a module id is for an external module (kind 'module')")
    text, containers = render_new(kind, name, topics=topics, module_id=module_id)
    doc = parse(text)
    if doc.diagnostics:  # the templates are clean; a name that is not would show here
        d = doc.diagnostics[0]
        raise _refuse(f"the name '{name.strip()}' would make the new file report {d.code}: {d.message}",
                      "§14", "BAD_NAME")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder} is not a folder")
    target = folder / filename_for(kind, name)
    if target.exists() or target.is_symlink():
        raise _refuse(f"{target} already exists; zonemark never overwrites a file", "§3.4", "FILE_EXISTS")
    if folder.is_dir():
        _check_layer(folder, kind, doc)
    folder.mkdir(parents=True, exist_ok=True)
    _create_exclusive(target, encode(text))
    return NewFile(target, KINDS[kind][0], doc.title or "", containers)


def _create_exclusive(target: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``target``, whole, or fail if the name is taken (never replace)."""
    folder = target.parent
    temp = write_temp(folder, "." + target.name + ".zonemark-new.", data, mode=0o644)
    try:
        try:
            os.link(temp, target)  # atomic, and fails with FileExistsError if the name is taken
        except FileExistsError:
            raise _refuse(f"{target} already exists; zonemark never overwrites a file", "§3.4",
                          "FILE_EXISTS") from None
        except OSError:  # a file system without hard links: exclusive create, then write
            try:
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o644)
            except FileExistsError:
                raise _refuse(f"{target} already exists; zonemark never overwrites a file",
                              "§3.4", "FILE_EXISTS") from None
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        unlink_quietly(temp)
    sync_dir(folder)
    record_written(target, action="new")


def _layer_docs(folder: Path) -> Iterator[tuple[str, bytes]]:
    """(relative path, parsed head) of every ``.md`` file under ``folder`` — enough to see H1 and ids."""
    for path in sorted(folder.rglob("*.md")):
        if not path.is_file() or any(part.startswith(".zonemark") for part in path.relative_to(folder).parts):
            continue
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        yield path.relative_to(folder).as_posix(), data


def _check_layer(folder: Path, kind: str, new_doc: Document) -> None:
    """§3: one reminder per layer; §7.1.1: no declared id twice."""
    new_ids = {m.id for m in new_doc.modules if m.id is not None and m.keyword is None}
    for rel, data in _layer_docs(folder):
        if kind == "reminder" and b"[reminder]" in data[:1 << 16]:
            head = decode(data[:1 << 16])
            if parse(head[:head.rfind("\n") + 1] or head).file_type == "reminder":
                raise _refuse(f"the layer in {folder} already has a reminder, {rel}; a layer has exactly one",
                              "§3", "SECOND_REMINDER")
        if new_ids and any(i.encode() in data for i in new_ids):
            for m in parse(decode(data)).modules:
                if m.id in new_ids and m.keyword is None:
                    raise _refuse(f"MODULE {m.id} is already declared in {rel}:{m.line}; give another id "
                                  f"(--id)", "§7.1.1", "ID_TAKEN")


# -- new containers ------------------------------------------------------------------------------

def _eol(data: bytes) -> bytes:
    first = data.find(b"\n")
    return b"\r\n" if first > 0 and data[first - 1:first] == b"\r" else b"\n"


def _insertion(index: ZoneIndex, parent: HeaderInfo, data: bytes) -> int:
    """Byte offset where a new last child of ``parent`` goes.

    Before the zone that opens with the next header of the parent's level or higher; the end of
    the file when there is none.  Refused when that header does not open its zone (§7.1.2 pairing).
    """
    headers = index.headers
    for h in range(parent.index + 1, len(headers)):
        if headers.level[h] <= parent.level:
            line = index.header_line(h)
            zone = index.zone_at_line(line)
            if zone is None or zone.level not in (1, 2, 3) or zone.inline or \
                    data[zone.inner_start:index.h_start[h]].strip():
                raise _refuse(f"the header at line {line} does not open a [P1]-[P3] zone of its own, so the new "
                              f"container cannot be placed before it; add it by hand", "§7.1.2", "FILE_BROKEN")
            return zone.start
    return len(data)


def _splice(data: bytes, at: int, block: str) -> tuple[bytes, int, int]:
    """``data`` with ``block`` at ``at``, one blank line on each side.

    Also returns the first old line that moves (the one starting at ``at``) and the new line where
    the block starts.
    """
    eol = _eol(data)
    before, after = data[:at], data[at:]
    lead = b""
    if before and not before.endswith(b"\n"):
        lead += eol
    if before.rstrip(b"\r\n") and not before.endswith(eol + eol) and not before.endswith(b"\n\n"):
        lead += eol
    body = encode(block).replace(b"\n", eol)
    trail = eol if after.strip() else b""
    new = before + lead + body + trail + after
    moves_from = before.count(b"\n") + (1 if not before or before.endswith(b"\n") else 2)
    return new, moves_from, before.count(b"\n") + lead.count(b"\n") + 1


def _owners(doc: Document) -> dict[int, int]:
    return dict(doc.h6_owner)


def _check_result(before: Document, after: Document, at_line: int, added_lines: int, address: str,
                  header_line: int) -> int:
    """The re-check of a new container; returns its journal's line."""
    def moved(n: int) -> int:
        return n if n < at_line else n + added_lines

    new = Counter(d.code for d in after.diagnostics) - Counter(d.code for d in before.diagnostics)
    if new:
        code = next(iter(new))
        d = next(x for x in after.diagnostics if x.code == code)
        raise _refuse(f"the new container would add {code} at line {d.line}: {d.message}",
                      "§5.5, re-check", "NEW_DIAGNOSTIC")
    want = {moved(e): (moved(o) if o else 0) for e, o in _owners(before).items()}
    got = {e: o for e, o in _owners(after).items() if e in want}
    if got != want:
        raise _refuse("the new container would take entries from another container",
                      "§7.1.3, re-check", "STRUCTURE_CHANGED")
    index = ZoneIndex.build(after)
    cid = resolve_container(index, address)
    if index.header_line(cid) != header_line:
        raise _refuse(f"'{address}' would not name the new container", "§7.1.3, re-check", "STRUCTURE_CHANGED")
    journals = journal_zones(index, cid, (4,))
    if not journals:
        raise _refuse(f"the new container '{address}' would have no journal of its own",
                      "§7.1.2, re-check", "STRUCTURE_CHANGED")
    return journals[-1].line


def add_container(path: str | os.PathLike[str], container_path: str, *, actor: str = "user",
                  module_id: str | None = None, store: Store | None = None) -> AddedContainer:
    """Add a topic or sub-topic (memory) or a module skeleton (reminder, external module) to ``path``.

    ``container_path``: in a memory a path of names, 'Maintenance' (a new topic) or
    'Maintenance/Tyres' (a new sub-topic of an existing container); in a reminder or an external
    module 'ID: NAME', 'MODULE ID: NAME' or a NAME alone (the id is then chosen, see the module
    docstring).  'user' only: the file's structure changes (§5.5).
    """
    if actor not in ("ai", "user"):
        raise ValueError(f"actor must be 'ai' or 'user', not {actor!r}")
    if actor != "user":
        raise _refuse("adding a container changes the file's structure; only the user may (use --as user)",
                      "§5.5", "USER_ONLY")
    if not isinstance(container_path, str):
        raise TypeError(f"container path must be str, not {type(container_path).__name__}")
    done = (store or Store()).commit(path, lambda snap: plan_container(snap, container_path, module_id),
                                     actor=actor, action=f"add container {container_path.strip()}")
    r = done.result
    return AddedContainer(Path(path), r.header, r.line, r.journal_line, r.address, done.history_id)


def plan_container(snap: FileSnapshot, container_path: str, module_id: str | None = None) -> Plan[AddedContainer]:
    """What adding the container ``container_path`` does to ``snap`` (:func:`add_container`); pure."""
    path, data = snap.path, snap.data
    before = snap.document
    broken = [d for d in before.diagnostics if d.code in _BROKEN]
    if before.file_type is None or broken:
        why = (f"{broken[0].code} at line {broken[0].line}" if broken else "no file type in its H1")
        raise _refuse(f"{path} cannot take a new container until it is fixed ({why}; see 'zonemark check')",
                      "§3.2, §5.4", "FILE_BROKEN")
    index = ZoneIndex.build(before)
    if before.file_type == "external_memory":
        header, address, at = _plan_topic(index, container_path, data)
    else:
        header, address, at, block = _plan_module(index, before, container_path, module_id, path, data)
    block = _container_block(header) if before.file_type == "external_memory" else block
    new, at_line, line = _splice(data, at, block)
    after = parse(decode(new), path=str(path), tree=True)
    added = new.count(b"\n") - data.count(b"\n")
    start = chars_before(data, ByteOffset(at))
    edit = Edit(start, 0, len(after.source) - len(before.source), at_line, 0, added)
    verdict = compare(before, after, edit, Expect(entries=0, structure=True))
    if not verdict.ok:  # the writer's own barrier: nothing outside the insertion, no new error
        raise _refuse(f"adding '{address}': {verdict.reason()}",
                      "§5.5, re-check", "STRUCTURE_CHANGED" if verdict.problems else "NEW_DIAGNOSTIC")
    header_line = line + 1
    journal = _check_result(before, after, at_line, added, address, header_line)
    return Plan(new, AddedContainer(Path(path), header, header_line, journal, address, None), verdict)


def _plan_topic(index: ZoneIndex, container_path: str, data: bytes) -> tuple[str, str, int]:
    segments = [s.strip() for s in container_path.strip().strip("/").split("/")]
    if not segments or not segments[-1]:
        raise _refuse("give a topic name, or a path such as 'Maintenance/Tyres'", "§7.1.2", "BAD_NAME")
    name = check_name(_strip_keyword(segments[-1]), "topic name")
    parent: HeaderInfo | None = None
    if len(segments) > 1:
        parent_address = "/".join(segments[:-1])
        parent = index.headers[resolve_container(index, parent_address)]
        if parent.keyword not in ("TOPIC", "SUBTOPIC"):
            raise _refuse(f"'{parent_address}' is not a topic or sub-topic; sub-topics go under topics",
                          "§7.1.3", "BAD_PARENT")
        if parent.level >= MAX_SUBTOPIC_LEVEL:
            raise _refuse(f"'{parent_address}' is a SUBTOPIC3 (H5), the deepest container; nothing goes under it",
                          "§7.1.3", "BAD_PARENT")
    level = 2 if parent is None else parent.level + 1
    siblings = index.container_indexes(parent.index if parent else None)
    if any(name_key(index.headers.name_of(h)) == name_key(name) for h in siblings):
        where = "at the top of the file" if parent is None else f"under '{'/'.join(segments[:-1])}'"
        raise _refuse(f"a container '{name}' already exists {where}", "§7.1.2", "CONTAINER_EXISTS")
    address = "/".join(segments[:-1] + [name])
    at = len(data) if parent is None else _insertion(index, parent, data)
    return _topic_header(name, level), address, at


def _plan_module(index: ZoneIndex, doc: Document, spec: str, module_id: str | None, path: str | os.PathLike[str],
                 data: bytes) -> tuple[str, str, int, str]:
    text = spec.strip()
    if "/" in text:
        raise _refuse("sub-modules are added by hand; give 'ID: NAME' for a module", "§7.3", "BAD_NAME")
    m = _MODULE_SPEC.fullmatch(text)
    if m:
        ident, name = m.group(1), m.group(2)
    else:
        bare = re.fullmatch(r"(?:MODULE[ \t]+)?(.+)", text)
        ident, name = None, bare.group(1) if bare else text
    if module_id is not None:
        if ident is not None and ident != module_id:
            raise ValueError(f"two ids given: '{ident}' in the path and '{module_id}'")
        ident = module_id
    name = check_name(name, "module name")
    taken = _layer_ids(Path(path), doc)
    if ident is None:
        ident = _next_number(taken) if doc.file_type == "reminder" else module_id_for(name)
    ident = _check_id(ident)
    if ident in taken:
        raise _refuse(f"MODULE {ident} is already declared in {taken[ident]}; give another id", "§7.1.1", "ID_TAKEN")
    return f"## MODULE {ident}: {name} [NUCLEI: ]", ident, _module_insertion(index, data), _module_block(ident, name)


def _module_insertion(index: ZoneIndex, data: bytes) -> int:
    """Before a MODULE_STATE_REGISTRY zone that follows every module and nucleus, else the end of the file."""
    headers = index.headers
    registry = [h for h in range(len(headers)) if headers.type_of(h) == "state_registry"]
    if not registry:
        return len(data)
    last = registry[-1]
    line = index.header_line(last)
    if any(index.header_line(h) > line for h in range(len(headers))
           if headers.type_of(h) in ("module", "sub_module", "nucleus")):
        return len(data)
    zone = index.zone_at_line(line)
    if zone is None or zone.inline or data[zone.inner_start:index.h_start[last]].strip():
        return len(data)
    return zone.start


def _layer_ids(path: Path, doc: Document) -> dict[str, str]:
    """Declared module ids of the file and of the other files of its folder: id -> 'file:line'."""
    taken = {m.id: f"{path.name}:{m.line}" for m in doc.modules if m.id is not None and m.keyword is None}
    folder = Path(os.path.realpath(os.fspath(path))).parent
    me = Path(os.path.realpath(os.fspath(path)))
    for rel, data in _layer_docs(folder):
        if (folder / rel).resolve() == me or b"MODULE" not in data:
            continue
        for m in parse(decode(data)).modules:
            if m.id is not None and m.keyword is None:
                taken.setdefault(m.id, f"{rel}:{m.line}")
    return taken


def _next_number(taken: Iterable[str]) -> str:
    numbers = [int(i) for i in taken if i.isdigit()]
    return f"{(max(numbers, default=0) + 1):03d}"
