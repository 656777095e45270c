"""``zonemark lsp``: start the language server over stdio (needs the ``zonemark[lsp]`` extra)."""

from __future__ import annotations

import sys

from .common import EXIT_OK, CliError


def register(sub) -> None:
    p = sub.add_parser("lsp", help="run the language server on stdin/stdout (for editors; needs zonemark[lsp])",
                       description="Speak the Language Server Protocol on stdin/stdout. Editors start it; "
                                   "see the README section 'In your editor'.")
    p.add_argument("--stdio", action="store_true", help="accepted for editors that pass it (stdio is the only transport)")
    p.set_defaults(func=cmd_lsp)


def cmd_lsp(args) -> int:
    try:
        import lsprotocol  # noqa: F401
        import pygls  # noqa: F401
    except ImportError:
        raise CliError("zonemark lsp: the language server needs the lsp extra: pip install 'zonemark[lsp]'") from None
    from ..lsp.server import main
    if sys.stdin.isatty():
        print("zonemark lsp: speaking the Language Server Protocol on stdin/stdout; start it from your editor"
              " (README: 'In your editor'); Ctrl-D ends it", file=sys.stderr)
    main()
    return EXIT_OK
