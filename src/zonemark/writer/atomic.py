"""The one atomic file write of zonemark: a new file beside the target, fsynced, renamed over it.

A process killed at any instant leaves the old file or the new one, never a mix.  The
store (:mod:`.store`) uses the two steps separately, because it checks the target again
between writing the temporary file and renaming it; everything else (proposals, trace
records, the search cache, a graph written with ``-o``) calls :func:`replace_file`.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from .observe import record_written

#: Temporary files carry this mark in their name (and never end in ``.md``).
TEMP_MARK = ".zonemark-tmp."


def unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def write_temp(folder: Path, prefix: str, data: bytes, *, mode: int = 0o644, owner: tuple[int, int] | None = None,
               fsync: bool = True) -> Path:
    """Write ``data`` to a new, uniquely named file in ``folder`` with ``mode`` (and ``owner`` where permitted)."""
    temp = folder / f"{prefix}{os.getpid()}.{secrets.token_hex(6)}"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if owner is not None:
                st = os.fstat(fd)
                if (st.st_uid, st.st_gid) != owner:
                    try:
                        os.fchown(fd, *owner)
                    except PermissionError:
                        pass  # only the owner or root may give a file away; the mode is still kept
            os.fchmod(fd, mode)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        unlink_quietly(temp)
        raise
    return temp


def sync_dir(folder: Path) -> None:
    """fsync a folder, so that a rename inside it survives a crash."""
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_file(path: str | os.PathLike[str], data: bytes, *, mode: int | None = None, fsync: bool = True,
                 make_parents: bool = False) -> None:
    """Write ``data`` to ``path`` atomically (``make_parents``: create a missing parent folder).

    An existing file keeps its mode unless ``mode`` is given; a new one gets ``mode`` or 0o644.
    """
    target = Path(path)
    if make_parents:
        target.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = os.stat(target).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o644
    temp = write_temp(target.parent, f".{target.name}{TEMP_MARK}", data, mode=mode, fsync=fsync)
    try:
        os.replace(temp, target)
    except BaseException:
        unlink_quietly(temp)
        raise
    if fsync:
        sync_dir(target.parent)
    record_written(target)
