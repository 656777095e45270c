"""Which files an agent may name: the ``.md`` files inside the layer folder, and nothing else.

Every ``file`` argument of a tool and every file resource passes :meth:`LayerFolder.file`:
a path relative to the layer folder, with ``/`` between folders, no ``..`` and no ``.``
segment, not absolute, not inside the ``.zonemark`` folder the writer keeps, ending in
``.md``, naming an existing regular file whose *resolved* location — after every symbolic
link — is still inside the resolved layer folder, and that the layer holds (W40:
:func:`zonemark.layer.loader.left_out`, under that name and under its resolved one: not hidden, not
under ``node_modules/``, not named by ``.zonemarkignore``).  The writer is then given that resolved
path, so a link swapped after the check cannot redirect the write.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ..core.parser import parse_file
from ..layer.loader import discover, inside, left_out
from ..writer import STATE_DIR_NAME

MAX_PATH_CHARS = 1024
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class PathRefused(Exception):
    """A ``file`` argument that names nothing the agent may use; ``code`` says why."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class LayerFile:
    """A file of the layer, as the agent names it (``rel``) and as it is on disk (``path``, resolved)."""

    rel: str
    path: Path


class LayerFolder:
    """The layer folder a server was started on (resolved once, at start)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        folder = Path(root)
        if not folder.is_dir():
            raise NotADirectoryError(f"not a folder: {folder}")
        self.root = folder.resolve(strict=True)

    def files(self) -> list[str]:
        """The ``.md`` files of the layer now (relative, ``/``-separated, sorted), as the layer loader finds them."""
        try:
            _root, found = discover(self.root, confined=True)
        except Exception:  # no .md file (yet), or an unreadable folder: nothing to list
            return []
        out = []
        for rel, _path in found:
            try:
                self.file(rel, listed=True)
            except PathRefused:  # a link that leaves the folder is not the layer's to show
                continue
            out.append(rel)
        return out

    def file(self, name: object, *, listed: bool = False) -> LayerFile:
        """The layer file ``name`` names, or :class:`PathRefused` (``listed``: a name the layer's walk gave,
        already a file of the layer by W40, so its ignore patterns are not matched a second time)."""
        if not isinstance(name, str):
            raise PathRefused("BAD_ARGUMENT", f"file must be a string such as 'notes[ext_memory].md', "
                                              f"not {type(name).__name__}")
        if not name.strip():
            raise PathRefused("BAD_ARGUMENT", "file is empty; give a path relative to the layer folder")
        if len(name) > MAX_PATH_CHARS:
            raise PathRefused("BAD_ARGUMENT", f"file has {len(name)} characters (at most {MAX_PATH_CHARS})")
        if _CONTROL.search(name):
            raise PathRefused("BAD_ARGUMENT", "file contains a control character")
        if "\\" in name:
            raise PathRefused("BAD_ARGUMENT", "file contains '\\'; separate folders with '/'")
        if name.startswith("/") or re.match(r"[A-Za-z]:", name):
            raise PathRefused("PATH_OUTSIDE_LAYER", f"'{name}' is an absolute path; give a path relative to "
                                                    f"the layer folder")
        parts = PurePosixPath(name).parts
        if ".." in parts or "." in name.split("/"):
            raise PathRefused("PATH_OUTSIDE_LAYER", f"'{name}' has a '..' or '.' segment; give a plain path "
                                                    f"relative to the layer folder")
        if any(part.casefold() == STATE_DIR_NAME for part in parts):  # a file system may ignore case
            raise PathRefused("PATH_OUTSIDE_LAYER", f"'{name}' is inside {STATE_DIR_NAME}/, zonemark's own "
                                                    f"folder, not a file of the layer")
        if not name.endswith(".md"):
            raise PathRefused("NO_SUCH_FILE", f"'{name}' is not a .md file of the layer")
        candidate = self.root.joinpath(*parts)
        try:
            real = Path(os.path.realpath(candidate, strict=False))
        except (OSError, ValueError) as exc:
            raise PathRefused("NO_SUCH_FILE", f"'{name}' cannot be resolved ({exc.__class__.__name__})") from None
        if not inside(self.root, real):
            raise PathRefused("PATH_OUTSIDE_LAYER", f"'{name}' leads outside the layer folder (a symbolic link); "
                                                    f"zonemark reads and writes only inside it")
        if not real.is_file():
            what = "is a folder" if real.is_dir() else "does not exist"
            raise PathRefused("NO_SUCH_FILE", f"'{name}' {what} in the layer folder")
        rel = "/".join(parts)
        why = None if listed else left_out(self.root, rel, confined=True)
        if why is not None:  # W40: the layer's own rule, the one layer_status, search and context follow
            raise PathRefused("NO_SUCH_FILE", f"{why}: not a file of the layer")
        return LayerFile(rel, real)

    def refuse_outside_reminder(self) -> None:
        """:class:`PathRefused` when a ``[reminder]`` of the folder is a link that leads outside it.

        ``set_module_state`` names no file: the writer rewrites the folder's reminder, which it finds
        among every file the folder lists — links out included — so the server looks first.
        """
        try:
            _root, found = discover(self.root)
        except Exception:  # no .md file: the writer says so in its own words
            return
        for rel, path in found:
            if not inside(self.root, path) and path.exists() and parse_file(path).file_type == "reminder":
                raise PathRefused("PATH_OUTSIDE_LAYER", f"the layer's reminder '{rel}' leads outside the layer "
                                                        f"folder (a symbolic link); zonemark writes only inside it")

    def rel(self, path: str | os.PathLike[str]) -> str:
        """``path`` (inside the layer) relative to the layer folder, ``/``-separated."""
        return Path(os.path.realpath(path)).relative_to(self.root).as_posix()
