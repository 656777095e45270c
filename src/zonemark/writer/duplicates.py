"""When a new entry is already in its container: one rule, checked under the lock (ruling CL7).

An entry is a *duplicate* when an entry owned by the same container (§7.1.3, in any of its
zones) has the same date, title and body as the new one **as the writer would write it**
(sanitised title and body), comparing bodies without regard to CR LF versus LF or to blank
lines around them.  :func:`zonemark.writer.append_entry` with ``unless_present=True`` runs this
check inside the store's locked transform, on the file's current bytes: two processes filing
the same text at once file it once.

The owned entries of a container are read from the parser's outline of the whole file.  So
that filing N entries in a row does not parse a large file N times, the keys found are kept
by :mod:`.snapshot` (the one owner of what is kept between writes) for the exact bytes they were
read from, and moved forward over the writer's own append (:func:`after_append`: the new entry
added, the lines after it shifted); any other change to the file — another process, the user —
makes the bytes differ, and the file is read again.
"""

from __future__ import annotations

import hashlib

from ..core.document import Document

#: An entry's duplicate key: a digest of its date, title and body as compared (:func:`entry_key`) — 16 bytes, not the
#: strings: a batch of N entries holds N keys beside its plan (B25).
Key = bytes


def normal_body(text: str) -> str:
    """A body as compared: CR LF as LF, blank lines around it dropped."""
    lines = text.replace("\r\n", "\n").split("\n")
    first, last = 0, len(lines)
    while first < last and not lines[first].strip():  # by position: popping the first line is linear each time
        first += 1
    while last > first and not lines[last - 1].strip():
        last -= 1
    return "\n".join(lines[first:last])


def entry_key(date: str | None, title: str, body: str) -> Key:
    """The duplicate key of an entry from its date and its title and body as written (sanitised): equal keys are
    equal (date, stripped title, :func:`normal_body`) triples — each part is given with its length in characters,
    then its UTF-8 a slice at a time (no copy of a long body as bytes)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(b"\x00" if date is None else b"\x01")
    for part in ("" if date is None else date, title.strip(), normal_body(body)):
        h.update(len(part).to_bytes(8, "little"))
        for at in range(0, len(part), _SLICE):
            h.update(part[at:at + _SLICE].encode("utf-8", "surrogatepass"))  # a kept invalid byte included
    return h.digest()


#: How many characters of a part :func:`entry_key` encodes at a time.
_SLICE = 1 << 16


def owned_entries(doc: Document, owner_line: int) -> dict[Key, int]:
    """key -> line of every entry owned by the container declared at ``owner_line`` (the first of each key)."""
    found: dict[Key, int] = {}
    for node in doc.outline().walk():
        if node.line != owner_line or node.kind == "file":
            continue
        for entry in node.entries:
            block = doc.heading_at(entry.line)
            raw = block.raw_markdown if block is not None else ""
            body = raw.split("\n", 1)[1] if "\n" in raw else ""
            found.setdefault(entry_key(entry.date, entry.title or "", body), entry.line)
    return found


def after_append(keys: dict[Key, int], new: Key, line: int, at_line: int, added_lines: int) -> dict[Key, int]:
    """The keys once an entry ``new`` was written at ``line``, ``added_lines`` lines inserted before old ``at_line``."""
    moved = {k: (n + added_lines if n >= at_line else n) for k, n in keys.items()}
    moved.setdefault(new, line)
    return moved

