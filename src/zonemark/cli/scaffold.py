"""``zonemark new`` and ``zonemark add-container``: files and containers in the canonical shape of §14.

``new`` never overwrites a file; ``add-container`` changes structure, so it is for the user only
(``--as user``, §5.5).  A refusal exits 1, a usage problem 2; the message is one line on stderr and
the file is untouched.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from .common import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, CliError, Command

TYPE_CHECKING = False  # not imported from typing: a one-shot command imports only what it uses
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeVar

    _T = TypeVar("_T")

KINDS = ("reminder", "module", "memory")
_LABEL = {"reminder": "reminder", "external_module": "external module", "external_memory": "external memory"}


def _guard(action: Callable[[], _T]) -> _T:
    """Run a scaffold call, turning every failure into one line and an exit code."""
    from ..writer import RefusedWrite, StoreError
    try:
        return action()
    except CliError:
        raise
    except RefusedWrite as exc:
        raise CliError(str(exc), EXIT_REFUSED) from None
    except StoreError as exc:
        raise CliError(f"refused: {exc}", EXIT_REFUSED) from None
    except (ValueError, TypeError) as exc:
        raise CliError(f"zonemark: {exc}", EXIT_USAGE) from None
    except FileNotFoundError as exc:
        raise CliError(f"zonemark: no such file: {exc.filename or exc}", EXIT_USAGE) from None
    except (IsADirectoryError, NotADirectoryError) as exc:
        raise CliError(f"zonemark: {exc.filename or exc}: not the kind of path expected", EXIT_USAGE) from None
    except PermissionError as exc:
        raise CliError(f"zonemark: permission denied: {exc.filename or exc}", EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(f"zonemark: {exc.strerror or exc}", EXIT_USAGE) from None
    except Exception as exc:  # a defect: still one line, never a traceback
        raise CliError(f"zonemark: internal error ({exc.__class__.__name__}: {exc})", EXIT_USAGE) from None


def run_new(args: argparse.Namespace) -> int:
    from ..core.text import printable
    if args.topic and args.kind != "memory":
        raise CliError("zonemark new: --topic is for a memory", EXIT_USAGE)
    if args.id is not None and args.kind != "module":
        raise CliError("zonemark new: --id is for a module", EXIT_USAGE)
    from ..writer import new_file
    made = _guard(lambda: _in_folder(args, lambda: new_file(args.kind, args.name, args.dir, topics=args.topic or (),
                                                            module_id=args.id)))
    what = ", ".join(f"'{c}'" for c in made.containers)
    extra = " and a MODULE_STATE_REGISTRY" if made.file_type == "reminder" else ""
    print(printable(f"created {made.path}: {_LABEL[made.file_type]} with {what}{extra}"))
    return EXIT_OK


def _in_folder(args: argparse.Namespace, make: Callable[[], _T]) -> _T:
    """``make()`` (``new_file`` in ``--dir``); a folder that cannot be created is said as such (never "no such
    file")."""
    try:
        return make()
    except OSError as exc:
        folder = Path(args.dir)
        if folder.is_dir():
            raise
        blocker = next((p for p in (folder, *folder.parents) if p.exists() or p.is_symlink()), None)
        if blocker is not None and blocker.is_symlink() and not blocker.exists():
            why = f"{blocker} is a dangling symbolic link"
        elif blocker is not None and not blocker.is_dir():
            why = f"{blocker} is a file, not a folder"
        elif isinstance(exc, FileNotFoundError):  # the OS's ENOENT where nothing is missing (a /proc, a /sys)
            why = f"the file system does not let a folder be made in {blocker or folder.parent}"
        else:
            why = exc.strerror or str(exc)
        raise CliError(f"zonemark new: cannot create the folder {args.dir} (--dir): {why}", EXIT_USAGE) from None


def run_add_container(args: argparse.Namespace) -> int:
    from ..core.text import printable
    from ..writer import add_container
    path = Path(args.file)
    if not path.exists():
        raise CliError(f"zonemark: no such file: {args.file}", EXIT_USAGE)
    if path.is_dir():
        raise CliError(f"zonemark: {args.file} is a folder; give a file", EXIT_USAGE)
    added = _guard(lambda: add_container(path, args.path, actor=args.actor, module_id=args.id))
    print(printable(f"{path}: added '{added.header}' at line {added.line} with its [P4] journal at line "
                    f"{added.journal_line} (address '{added.address}'; history {added.history_id})"))
    return EXIT_OK


def _arguments_new(n: argparse.ArgumentParser) -> None:
    n.add_argument("kind", choices=KINDS)
    n.add_argument("name", metavar="NAME", help="the name in the H1 (the file is NAME[tag].md, §3.4)")
    n.add_argument("--dir", default=".", metavar="DIR", help="the layer folder (default: the current one)")
    n.add_argument("--topic", action="append", metavar="PATH",
                   help="memory: a topic or 'Topic/Sub-topic' to create (repeatable; default 'General')")
    n.add_argument("--id", metavar="ID", help="module: the module id (default: the name in capitals)")


def _arguments_add_container(a: argparse.ArgumentParser) -> None:
    a.add_argument("file", metavar="FILE")
    a.add_argument("path", metavar="PATH", help="memory: 'Topic' or 'Topic/Sub-topic'; reminder or module: "
                                                "'ID: NAME' or 'NAME'")
    a.add_argument("--id", metavar="ID", help="a module's id (default: the next free number in a reminder, the "
                                              "name in capitals in an external module)")
    a.add_argument("--as", dest="actor", choices=("ai", "user"), default="ai",
                   help="who writes: only 'user' may add structure (§5.5)")


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("new", "create a reminder, external module or memory in the canonical shape (§14)",
            _arguments_new, run_new),
    Command("add-container", "add a topic, sub-topic or module with its [P4] journal "
                             "(--as user)",
            _arguments_add_container, run_add_container),
)

__all__ = ["COMMANDS", "run_add_container", "run_new"]
