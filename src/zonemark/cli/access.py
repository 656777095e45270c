"""``zonemark access LAYER ...``: who may reach the layer over HTTP (issue 20 §2).

``pair`` prints a fresh pairing code alone on stdout (the owner types it on the authorization page of
``zonemark mcp LAYER --http``); ``add-token NAME --scope read,append`` makes a bearer token and prints it once,
alone on its last line; ``list`` shows the clients and tokens (names, scopes, last use); ``revoke NAME`` removes
a token or an OAuth client with every credential it holds, from the next request on.  The rules live in the
service :mod:`zonemark.access`; this module only parses and prints.
"""

from __future__ import annotations

import argparse
import datetime
import sys

from .common import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, CliError, Command, layer_folder, one_line


def _arguments_access(a: argparse.ArgumentParser) -> None:
    from ..access.scopes import SCOPES
    a.add_argument("layer", metavar="LAYER", help="the layer folder")
    sub = a.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("pair", help="print a fresh pairing code (10 minutes, 5 tries) alone on stdout")
    add = sub.add_parser("add-token", help="make a bearer token NAME; it is printed once, on the last line")
    add.add_argument("name", metavar="NAME", help="the token's name (what list and history show)")
    add.add_argument("--scope", required=True, metavar="SCOPES",
                     help=f"comma-separated scopes of {', '.join(SCOPES)}: read every read tool and resource, "
                          f"append append_entry and ingest_log, propose propose_change, edit edit_volatile and "
                          f"set_module_state")
    sub.add_parser("list", help="the clients and tokens: names, scopes, last use")
    rev = sub.add_parser("revoke", help="remove a token or an OAuth client (its name or client id)")
    rev.add_argument("name", metavar="NAME")


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "never"
    return datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def run_access(args: argparse.Namespace) -> int:
    from ..access import AccessError, AccessStore, AccessUnavailable, ScopeError
    folder = layer_folder(args.layer, "access")
    store = AccessStore(folder)
    try:
        if args.action == "pair":
            print(store.new_pairing_code())
            return EXIT_OK
        if args.action == "add-token":
            text, grant = store.add_token(args.name, args.scope)
            print(one_line(f"zonemark access: token {args.name} ({grant.token_id}) with scopes "
                           f"{', '.join(grant.scopes)}; it is shown once, keep it secret:"), file=sys.stderr)
            print(text)
            return EXIT_OK
        if args.action == "list":
            rows = store.listing()
            if not rows:
                print("no clients or tokens")
                return EXIT_OK
            for r in rows:
                kind = "token" if r.kind == "token" else "oauth"
                print(one_line(f"{r.name}  {kind}  {','.join(r.scopes) or '-'}  last use {_when(r.last_used)}  "
                               f"live credentials {r.live_tokens}  id {r.client_id}"))
            return EXIT_OK
        count = store.revoke(args.name)
        print(one_line(f"zonemark access: revoked {args.name} ({count} client{'s' if count != 1 else ''}); "
                       f"it is refused from its next request"))
        return EXIT_OK
    except (AccessError, ScopeError) as exc:
        code = EXIT_USAGE if isinstance(exc, AccessUnavailable) else EXIT_REFUSED
        raise CliError(one_line(f"zonemark access: {exc}"), code) from None


#: The commands of this module, in the order ``zonemark --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("access", "who may reach a layer over HTTP: pair, add-token, list, revoke",
            _arguments_access, run_access,
            description="Manage the clients of 'zonemark mcp LAYER --http': a pairing code for the authorization "
                        "page, bearer tokens with scopes, the list of clients, revocation."),
)

__all__ = ["COMMANDS", "run_access"]
