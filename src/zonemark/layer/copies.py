"""Conflict copies a sync folder leaves beside a layer file (issue 19 §2, ruling G30).

When two devices change one file while apart, a sync tool keeps both: the original name holds one version,
a copy with a telling name the other.  The forms recognised, for ``NAME.md``:

* Syncthing: ``NAME.sync-conflict-YYYYMMDD-HHMMSS-DEVICE.md``;
* Dropbox: ``NAME (conflicted copy YYYY-MM-DD).md`` and ``NAME (Someone's conflicted copy YYYY-MM-DD).md``;
* Nextcloud: ``NAME (conflicted copy YYYY-MM-DD HHMMSS).md`` and the older ``NAME_conflict-YYYYMMDD-HHMMSS.md``;
* OneDrive: ``NAME-COMPUTERNAME.md`` — only when ``NAME.md`` is beside it and the suffix reads as a
  Windows computer name (at most 15 capitals, digits and hyphens, at least one capital).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SYNCTHING = re.compile(r"(?P<stem>.+)\.sync-conflict-\d{8}-\d{6}(?:-[A-Za-z0-9]+)?\.md\Z", re.S)
_CONFLICTED = re.compile(r"(?P<stem>.+?) \((?P<who>[^()]*?'s )?conflicted copy(?P<when>(?: [0-9][0-9 -]*)?)\)\.md\Z",
                         re.S)
_NEXTCLOUD_OLD = re.compile(r"(?P<stem>.+)_conflict-\d{8}-\d{6}\.md\Z", re.S)
_COMPUTER_NAME = re.compile(r"[A-Z0-9-]{1,15}")


@dataclass(frozen=True)
class ConflictCopy:
    """A file that is a conflict copy: the original it copies (relative path) and the tool that made it."""

    rel: str
    original: str
    tool: str


def conflict_copy(rel: str, present: frozenset[str] | set[str]) -> ConflictCopy | None:
    """Whether the layer file ``rel`` (a relative posix path) is a conflict copy; ``present`` holds the relative
    paths of the layer's files (the OneDrive form needs its original beside it).  Linear in ``rel``."""
    folder, _, name = rel.rpartition("/")
    prefix = folder + "/" if folder else ""
    m = _SYNCTHING.match(name)
    if m:
        return ConflictCopy(rel, prefix + m["stem"] + ".md", "Syncthing")
    m = _CONFLICTED.match(name)
    if m:
        tool = "Nextcloud" if len(m["when"].replace(" ", "").replace("-", "")) > 8 else "Dropbox"
        return ConflictCopy(rel, prefix + m["stem"] + ".md", tool)
    m = _NEXTCLOUD_OLD.match(name)
    if m:
        return ConflictCopy(rel, prefix + m["stem"] + ".md", "Nextcloud")
    if name.endswith(".md"):
        stem = name[:-3]
        start = max(0, len(stem) - 16)  # a computer name has at most 15 characters: look at the tail only
        for cut in (i for i in range(start, len(stem)) if stem[i] == "-" and i > 0):
            suffix = stem[cut + 1:]
            if _COMPUTER_NAME.fullmatch(suffix) and any(c.isalpha() for c in suffix) \
                    and prefix + stem[:cut] + ".md" in present:
                return ConflictCopy(rel, prefix + stem[:cut] + ".md", "OneDrive")
    return None


__all__ = ["ConflictCopy", "conflict_copy"]
