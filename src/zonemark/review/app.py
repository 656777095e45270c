"""The review page's routes (Starlette): read through the layer and the services, act through the writer.

GET pages only read (no file, lock or folder is created); every action is a POST that calls
the very function the CLI calls with ``--as user``:

=====================  ==================================================================
POST /activity/undo    :func:`zonemark.writer.undo` (the write named must be the one undo reverts)
POST /proposals/apply  :func:`zonemark.writer.apply_proposal`
POST /proposals/reject :func:`zonemark.writer.reject_proposal`
POST /proposals/batch  either of the two, on each ticked proposal in turn (RV18)
POST /modules/state    :func:`zonemark.writer.set_states` on the layer folder (§7.3.1)
POST /graph/trace      :func:`zonemark.interchange.trace.read_trace` (and ``record_trace`` when asked)
=====================  ==================================================================

A refused action is shown as the writer's own message (and its ``code`` when it has one) on
the page it came from; the page never decides a rule itself.  Actions run one at a time.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from importlib import resources
from pathlib import Path
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from ..core.diagnostics import CATALOGUE
from ..core.document import Document
from ..core.parser import parse_bytes
from ..core.text import printable
from ..layer.cache import LayerCache
from ..layer.check import reported_diagnostics
from ..layer.loader import Layer, LayerError, left_out
from ..layer.status import layer_status
from . import pages
from .pages import Note, Site
from .security import Gate

TYPE_CHECKING = False  # types for the type checker only: each is imported where it is used
if TYPE_CHECKING:
    from ..core.diagnostics import Diagnostic
    from ..interchange.trace import TraceResult
    from ..render.activity import ActivityItem
    from ..writer.proposals import Proposal

ACTIVITY_LIMIT = 50  # writes on one page of Activity (RV15: older ones are on the next pages)
BATCH_LIMIT = 50  # proposals decided in one batch (RV18)
#: bytes of the files a batch's applies rewrite, in all (RV18): each apply parses its file twice, about 0.35 s a MB
#: here, so a batch at the limit takes about 2 s; a batch of one proposal is always allowed (its own button is)
BATCH_BYTES = 6 * 1024 * 1024
PAGE_THREADS = 8  # pages built at once; a page is built in a daemon thread (RV25)
STATIC = {"review.css": "text/css; charset=utf-8", "favicon.svg": "image/svg+xml"}
NOTES_KEPT = 100
DIFFS_KEPT = 64  # rendered write diffs kept, keyed by the checksums of the two versions (RV8)
#: A saved version larger than this that is not the file now is not parsed to name the container of a write
#: (RV8: a 10 MB parse takes seconds; the file now is parsed already, in the layer cache).
VERSION_PARSE_LIMIT = 1_000_000
TRACE_SOURCE = "pasted answer"


def _committed(note: Note, paths: list[Path]) -> Note:
    """Commit what a page action wrote (G25); a failed commit's warning is added to the page's note."""
    from .. import __version__
    from ..gitlayer.commits import commit_written
    outcome = commit_written(paths, f"zonemark: user {note.text}", actor="user",
                             client=f"zonemark-review {__version__}")
    if outcome is None or outcome.warning is None:
        return note
    return Note(note.kind, f"{note.text}; {outcome.warning}", note.code)


def _refusal(exc: BaseException) -> Note:
    """A refused action as the page shows it: the writer's one-line text and its code, when it has one."""
    code = getattr(exc, "code", None)
    text = printable(str(exc)) or type(exc).__name__
    return Note("refused", text.replace("\n", " "), code if isinstance(code, str) else None)


class Review:
    """One run of ``zonemark review``: the layer folder, the token, the notes of the last actions."""

    def __init__(self, root: Path, token: str):
        self.root = Path(root)
        self.site = Site(token, self.root.resolve().name or str(self.root))
        self.notes: OrderedDict[str, Note] = OrderedDict()
        self.note_count = 0
        self.action_lock = threading.Lock()
        self.cache = LayerCache(self.root, confined=False)
        from .visit import read_visit
        self.visit = read_visit(self.root)  # RV16: the last visit, read once for the whole run
        self.seen: dt.datetime | None = None  # when this run last showed the newest writes
        self.page_slots = asyncio.Semaphore(PAGE_THREADS)
        self.building: set[asyncio.Future[Response]] = set()  # the pages being built now

        self.diffs: OrderedDict[tuple[str, str, str], tuple[str, str | None]] = OrderedDict()
        self.badges: tuple[Layer, tuple[tuple[str, int, int], ...], dict[str, int]] | None = None
        self.found: tuple[Layer, list[Diagnostic]] | None = None  # the layer's diagnostics, kept while it is the same

    def abandon_pages(self) -> None:
        """The server stops (RV25): every page still being built is answered now with one line, not awaited."""
        for future in list(self.building):
            if not future.done():
                future.set_result(PlainTextResponse("zonemark review: stopped before this page was ready",
                                                    status_code=503))

    def end_visit(self) -> None:
        """Record this run as the last visit, when it showed the newest writes (RV16); one line if it cannot."""
        if self.seen is None:
            return
        from .visit import write_visit
        try:
            write_visit(self.root, self.seen)
        except OSError as exc:
            print(printable(f"zonemark review: the visit could not be recorded: {exc.strerror or exc}"),
                  file=sys.stderr)

    # -- helpers ---------------------------------------------------------------------------

    def layer(self) -> Layer:
        """The layer as its files are now: parsed again only where their bytes changed (RV1: as ``check`` reads it)."""
        return self.cache.layer()

    def read(self, path: Path) -> tuple[bytes, Document]:
        """A file's bytes now and their parse, from the layer cache (parsed again only when its bytes changed)."""
        return self.cache.snapshot(path)

    def diagnostics(self, layer: Layer) -> list[Diagnostic]:
        """What ``check`` reports for the layer, found once per layer object (the cache's layer is the same object
        while no file changed): the badges, Activity's summary and the Check page read the one list."""
        kept = self.found
        if kept is not None and kept[0] is layer:
            return kept[1]
        found = reported_diagnostics(layer, single_file=False)
        self.found = (layer, found)
        return found

    def counts(self, layer: Layer | None = None) -> dict[str, int]:
        """The badges: open proposals and the layer's errors, counted again only when a file or a proposal
        changed (RV10: the layer from the cache is the same object while no file changed)."""
        from ..writer.proposals import stored_proposals
        try:
            stored = stored_proposals(self.root)
        except (OSError, ValueError):
            stored = []
        key = tuple(sorted((p.id, p.status == "open", p.zone_line) for p in stored))
        kept = self.badges
        if layer is not None and kept is not None and kept[0] is layer and kept[1] == key:
            return dict(kept[2])
        errors = 0
        if layer is not None:
            errors = sum(1 for d in self.diagnostics(layer) if d.severity.value == "error")
        counts = {"proposals": sum(1 for p in stored if p.status == "open"), "check": errors}
        if layer is not None:
            self.badges = (layer, key, counts)
        return dict(counts)

    def note(self, request: Request) -> Note | None:
        key = request.query_params.get("note")
        return self.notes.get(key) if key else None

    def remember(self, note: Note) -> str:
        self.note_count += 1
        key = str(self.note_count)
        self.notes[key] = note
        while len(self.notes) > NOTES_KEPT:
            self.notes.popitem(last=False)
        return key

    def back(self, page: str, note: Note, anchor: str = "") -> RedirectResponse:
        url = self.site.url("/" + page, note=self.remember(note)) + ("#main" if not anchor else anchor)  # RV24
        return RedirectResponse(url, status_code=303)

    def act(self, page: str, action: Callable[[], Note]) -> RedirectResponse:
        """Run ``action`` (a writer call returning a Note) alone; a refusal becomes the note."""
        from ..gitlayer.commits import writes_to_commit
        with self.action_lock, writes_to_commit(self.root) as seen:
            try:
                note = action()
            except Exception as exc:  # the writer's refusals and any failure: one line on the page
                note = _refusal(exc)
            if seen:  # G25: the write is one git commit of what it wrote
                note = _committed(note, [w.path for w in seen])
            return self.back(page, note)

    # -- pages ----------------------------------------------------------------------------

    def activity(self, request: Request) -> Response:
        from ..render.activity import layer_activity
        from ..render.activity_query import ActivityQuery, QueryError, read_query, select
        layer = self.layer()
        try:
            query = read_query(request.query_params)
        except QueryError as exc:  # RV15: a bad filter is one line, status 400
            return HTMLResponse(pages.message_page(self.site, "Activity", str(exc), counts=self.counts(layer)),
                                status_code=400)
        served = dt.datetime.now(dt.timezone.utc)
        items = layer_activity(layer)
        shown = select(items, query, page_size=ACTIVITY_LIMIT, visit=self.visit)
        first = query == ActivityQuery()
        summary = self.summary(layer, items) if first else None
        if first:
            self.seen = served
        visit = self.visit.isoformat() if self.visit else None
        return HTMLResponse(pages.activity_page(self.site, shown, query, note=self.note(request),
                                                counts=self.counts(layer), visit=visit, summary=summary))

    def summary(self, layer: Layer, items: list[ActivityItem]) -> pages.Summary:
        """RV20: the AI's writes since the last visit per container, the proposals waiting, what check finds."""
        from ..render.activity_query import after_visit, new_entries
        from ..render.proposal_change import pending_changes
        try:  # the parses the layer cache holds (RV9), as the Proposals page reads them: no file is parsed again
            pending = pending_changes(self.root, read=self.read)
        except (OSError, ValueError):
            pending = []
        found = self.diagnostics(layer)
        errors = sum(1 for d in found if d.severity.value == "error")
        return pages.Summary(self.visit.isoformat() if self.visit else None, tuple(new_entries(items, self.visit)),
                             sum(1 for i in items if i.entry.actor == "user" and after_visit(i, self.visit)),
                             len(pending), sum(1 for p in pending if p.stale), errors, len(found) - errors)

    def proposals(self, request: Request) -> Response:
        from ..render.proposal_change import decided_proposals, pending_changes
        layer = self.layer()
        return HTMLResponse(pages.proposals_page(self.site, pending_changes(self.root, read=self.read),
                                                 decided_proposals(self.root), note=self.note(request),
                                                 counts=self.counts(layer)))

    def modules(self, request: Request) -> Response:
        layer = self.layer()
        return HTMLResponse(pages.modules_page(self.site, layer_status(layer), note=self.note(request),
                                               counts=self.counts(layer)))

    def graph(self, request: Request) -> Response:
        layer = self.layer()
        return HTMLResponse(pages.graph_page(self.site, note=self.note(request), counts=self.counts(layer)))

    def check(self, request: Request) -> Response:
        layer = self.layer()
        found = sorted(self.diagnostics(layer),
                       key=lambda d: (d.path or ".", d.line, d.column, d.code))
        return HTMLResponse(pages.check_page(self.site, found, CATALOGUE, note=self.note(request),
                                             counts=self.counts(layer)))

    def _layer_file(self, layer: Layer, rel: str) -> Path | None:
        match = [f for f in layer.files if f.rel == rel and left_out(self.root, rel) is None]  # W40
        return match[0].path if match else None

    def file(self, request: Request) -> Response:
        layer = self.layer()
        rel = request.query_params.get("path", "")
        path = self._layer_file(layer, rel)
        if path is None:
            return HTMLResponse(pages.message_page(self.site, "No such file", "This layer has no file by that name.",
                                                   counts=self.counts(layer)), status_code=404)
        try:
            data = path.read_bytes()
        except OSError as exc:
            return HTMLResponse(pages.message_page(self.site, rel, f"The file cannot be read: {exc.strerror}",
                                                   counts=self.counts(layer)), status_code=404)
        line, page = request.query_params.get("line", ""), request.query_params.get("page", "")
        wanted = int(line) if line.isdigit() and len(line) < 10 else None
        number = int(page) if page.isdigit() and len(page) < 10 else None
        return HTMLResponse(pages.file_page(self.site, rel, data, wanted, number, counts=self.counts(layer)))

    def write_diff(self, request: Request) -> Response:
        """One write of the history and what it changed (RV8): its two versions read now, the diff of their
        changed region, kept by their checksums so that a second view reads no version."""
        from ..render.activity import file_activity, write_change
        from ..render.diff_html import unified_html
        layer = self.layer()
        rel, ident = request.query_params.get("file", ""), request.query_params.get("id", "")
        path = self._layer_file(layer, rel)
        items = [] if path is None else [i for i in file_activity(path, rel) if i.id == ident]
        if not items:
            return HTMLResponse(pages.message_page(self.site, "No such write", "This layer's history has no write by "
                                                   "that name.", counts=self.counts(layer)), status_code=404)
        item = items[0]
        key = (rel, item.entry.sha256, item.entry.written_sha256)
        kept = self.diffs.get(key)
        if kept is None:
            def document(data: bytes, where: Path) -> Document | None:
                now, doc = self.read(where)
                if now == data:
                    return doc
                return parse_bytes(data, path=str(where)) if len(data) <= VERSION_PARSE_LIMIT else None
            change = write_change(item, document=document)
            if change.before is not None and change.after is not None:
                label = change.container.label if change.container else (
                    f"not looked up: the version is over {VERSION_PARSE_LIMIT:,} bytes and is not the file now "
                    "(the action above names where the write went)")
                kept = (unified_html(change.before, change.after,
                                     caption=f"What write {item.id} changed in {item.file}"), label)
                self.diffs[key] = kept
                while len(self.diffs) > DIFFS_KEPT:
                    self.diffs.popitem(last=False)
        else:
            self.diffs.move_to_end(key)
        return HTMLResponse(pages.write_page(self.site, item, None if kept is None else kept[0],
                                             None if kept is None else kept[1], counts=self.counts(layer)))

    def graph_frame(self, request: Request) -> Response:
        from ..render.graph_html import ID_LIMIT, QUERY_LIMIT
        expand = request.query_params.get("expand") if request is not None else None
        query = request.query_params.get("q", "") if request is not None else ""
        return self._graph_response(self.layer(), None, expand=expand if expand and len(expand) <= ID_LIMIT else None,
                                    query=query if len(query) <= QUERY_LIMIT else "")

    def _graph_response(self, layer: Layer, trace: TraceResult | None, *, expand: str | None = None,
                        query: str = "") -> Response:
        from ..interchange.illuminate import with_recorded_traces
        from ..layer.graph import build_graph
        from ..render.graph_html import FrameView, content_security_policy, frame_html
        graph = with_recorded_traces(build_graph(layer), layer, trace,
                                     source=TRACE_SOURCE if trace is not None else None)
        view = FrameView(self.site.url("/graph/frame"), self.site.url("/file"), expand, query)  # W86
        headers = {"content-security-policy": content_security_policy() + "; frame-ancestors 'self'",
                   "x-frame-options": "SAMEORIGIN"}
        return HTMLResponse(frame_html(graph, view), headers=headers)

    # -- actions --------------------------------------------------------------------------

    @staticmethod
    async def form(request: Request) -> dict[str, str]:
        body = (await request.body()).decode("utf-8", "replace")
        return {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items() if len(v) == 1}

    async def undo(self, request: Request) -> Response:
        fields = await self.form(request)
        return await run_in_threadpool(self.act, "activity", lambda: self._undo(fields.get("file", ""),
                                                                                 fields.get("id", "")))

    def _undo(self, rel: str, history_id: str) -> Note:
        from ..render.activity import file_activity
        from ..writer import undo
        layer = self.layer()
        match = [f for f in layer.files if f.rel == rel and left_out(self.root, rel) is None]  # W40
        if not match:
            return Note("refused", f"refused: this layer has no file {rel!r}")
        items = file_activity(match[0].path, rel)
        wanted = [i for i in items if i.id == history_id]
        if not wanted:
            return Note("refused", f"refused: {rel} has no write {history_id!r} in its history")
        if not wanted[0].undoable:
            return Note("refused", f"refused: write {history_id} of {rel} is not the one undo would revert now "
                                   "(a newer write, or the file changed since); reload the page")
        result = undo(match[0].path, actor="user")
        return Note("ok", f"undone: {rel} is back to the version before write {history_id} "
                          f"(kept in history as {result.history_id})")

    async def apply(self, request: Request) -> Response:
        fields = await self.form(request)
        return await run_in_threadpool(self.act, "proposals", lambda: self._apply(fields.get("id", "")))

    def _proposal(self, ident: str, stored: list[Proposal] | None = None) -> Proposal:
        from ..writer.proposals import stored_proposals
        found = [p for p in (stored_proposals(self.root) if stored is None else stored) if p.id == ident]
        if not found:
            raise ValueError(f"refused: no proposal {ident!r} in this layer")
        root = self.root.resolve()
        if root in found[0].target.parents:  # W40: a file the layer leaves out is no face's to change
            why = left_out(root, found[0].target.relative_to(root).as_posix())
            if why is not None:
                raise ValueError(f"refused: proposal {ident} is for {why}: not a file of this layer")
        return found[0]

    def _apply(self, ident: str, stored: list[Proposal] | None = None) -> Note:
        from ..writer import apply_proposal
        proposal = self._proposal(ident, stored)
        result = apply_proposal(proposal.path, actor="user")
        if not result.changed:
            return Note("ok", f"proposal {ident} applied: the zone already held that text; nothing written")
        return Note("ok", f"proposal {ident} applied to {proposal.target.name} (history {result.history_id})")

    async def reject(self, request: Request) -> Response:
        fields = await self.form(request)
        return await run_in_threadpool(self.act, "proposals",
                                       lambda: self._reject(fields.get("id", ""), fields.get("reason", "")))

    async def batch(self, request: Request) -> Response:
        body = (await request.body()).decode("utf-8", "replace")
        fields = parse_qs(body, keep_blank_values=True)
        ids = list(dict.fromkeys(fields.get("id", [])))
        decision = fields.get("decision", [""])
        reason = fields.get("reason", [""])
        return await run_in_threadpool(self.act, "proposals", lambda: self._batch(
            ids, decision[0] if len(decision) == 1 else "", reason[0] if len(reason) == 1 else ""))

    def _batch(self, ids: list[str], decision: str, reason: str) -> Note:
        """RV18: each ticked proposal applied (or rejected) on its own; the refused ones named with their reason."""
        if decision not in ("apply", "reject"):
            return Note("refused", "refused: a batch decision is apply or reject")
        if not ids:
            return Note("refused", f"refused: tick at least one proposal to {decision}")
        if len(ids) > BATCH_LIMIT:
            return Note("refused", f"refused: {len(ids)} proposals ticked; a batch decides at most {BATCH_LIMIT}")
        from ..writer.proposals import stored_proposals
        stored = stored_proposals(self.root)  # read once: each one is still checked by the writer when decided
        if decision == "apply" and len(ids) > 1:
            wanted = set(ids)
            size = 0
            for p in stored:
                if p.id in wanted:
                    try:
                        size += p.target.stat().st_size
                    except OSError:
                        pass  # the apply itself says what is wrong with that file
            if size > BATCH_BYTES:
                return Note("refused", f"refused: applying these {len(ids)} proposals rewrites {size / 2**20:.1f} MB "
                                       f"of files in all; a batch applies at most {BATCH_BYTES // 2**20} MB (tick "
                                       "fewer, or apply them one by one)")
        done: list[str] = []
        refused: list[str] = []
        for ident in ids:
            try:
                if decision == "apply":
                    self._apply(ident, stored)
                else:
                    self._reject(ident, reason, stored)
            except Exception as exc:  # each one refused on its own, as its single button would be
                why = _refusal(exc)
                refused.append(f"{ident} ({why.code}: {why.text})" if why.code else f"{ident} ({why.text})")
            else:
                done.append(ident)
        verb = "applied" if decision == "apply" else "rejected"
        text = f"{verb} {len(done)} of {len(ids)} proposals" + (f": {', '.join(done)}" if done else "")
        if refused:
            text += f"; refused {len(refused)}: " + "; ".join(refused)
        return Note("refused" if refused else "ok", text)

    def _reject(self, ident: str, reason: str, stored: list[Proposal] | None = None) -> Note:
        from ..writer import reject_proposal
        proposal = self._proposal(ident, stored)
        reject_proposal(proposal.path, actor="user", reason=reason.strip() or None)
        return Note("ok", f"proposal {ident} rejected; {proposal.target.name} was not touched")

    async def set_state(self, request: Request) -> Response:
        fields = await self.form(request)
        return await run_in_threadpool(self.act, "modules",
                                       lambda: self._set_state(fields.get("module", ""), fields.get("state", "")))

    def _set_state(self, module: str, state: str) -> Note:
        from ..writer import set_states
        if state not in ("active", "inactive") or not module:
            return Note("refused", "refused: give a module id and the state active or inactive")
        result = set_states(self.root, activate=[module] if state == "active" else [],
                            deactivate=[module] if state == "inactive" else [], actor="user")
        if not result.changed:
            return Note("ok", f"module {module}: the registry already says {state}; nothing written")
        return Note("ok", f"module {module} is now {state}: MODULE_STATE_REGISTRY of {result.path.name} rewritten "
                          f"(history {result.history_id})")

    async def trace(self, request: Request) -> Response:
        fields = await self.form(request)
        return await _page_errors(lambda _request: self._trace(fields.get("text", ""),
                                                               fields.get("record") == "1"))(request)

    def _trace(self, text: str, record: bool) -> Response:
        from ..interchange.trace import read_trace
        layer = self.layer()
        result = read_trace(text.replace("\r\n", "\n"), layer)
        if record and result.illuminated:
            from ..interchange.records import record_trace
            with self.action_lock:
                try:
                    record_trace(layer, text.replace("\r\n", "\n"), result)
                except OSError as exc:
                    print(printable(f"zonemark review: the trace could not be recorded: {exc}"), file=sys.stderr)
        return self._graph_response(layer, result)

    # -- static ---------------------------------------------------------------------------

    def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC:
            return PlainTextResponse("zonemark review: no such file", status_code=404)
        data = resources.files("zonemark.review").joinpath("static", name).read_bytes()
        return Response(data, media_type=STATIC[name])

    def home(self, request: Request) -> Response:
        return RedirectResponse(self.site.url("/activity"), status_code=303)


async def _in_daemon_thread(slots: asyncio.Semaphore, building: set[asyncio.Future[Response]],
                            handler: Callable[[Request], Response], request: Request) -> Response:
    """``handler(request)`` in a daemon thread of its own (RV25): a page that only reads never holds up the
    server's stop; actions stay in the worker threads, which the process waits for, so a write ends whole."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Response] = loop.create_future()

    def settle(outcome: Response | BaseException) -> None:
        if future.done():
            return
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def work() -> None:
        outcome: Response | BaseException
        try:
            outcome = handler(request)
        except Exception as exc:
            outcome = exc
        try:
            loop.call_soon_threadsafe(settle, outcome)
        except RuntimeError:  # the server stopped meanwhile: nobody waits for this page
            pass

    async with slots:
        building.add(future)
        try:
            threading.Thread(target=work, name="zonemark review page", daemon=True).start()
            return await future
        finally:
            building.discard(future)


def _page_errors(handler: Callable[[Request], Response],
                 review: Review | None = None) -> Callable[[Request], Awaitable[Response]]:
    """A page that cannot be built (the layer folder is gone, …) is one line on the page, not a traceback.

    With ``review`` the page is built in a daemon thread (:func:`_in_daemon_thread`), else in a worker thread."""

    async def endpoint(request: Request) -> Response:
        try:
            if review is not None:
                return await _in_daemon_thread(review.page_slots, review.building, handler, request)
            return await run_in_threadpool(handler, request)
        except LayerError as exc:
            return PlainTextResponse(printable(f"zonemark review: {exc}"), status_code=500)
        except Exception as exc:  # a defect: still one line for the user; the server keeps running
            print(printable(f"zonemark review: {request.url.path}: {type(exc).__name__}: {exc}"), file=sys.stderr)
            return PlainTextResponse(printable(f"zonemark review: this page failed: {type(exc).__name__}: {exc}"),
                                     status_code=500)

    return endpoint


def build_app(root: str | os.PathLike[str], *, token: str, port: int, review: Review | None = None) -> Gate:
    """The ASGI application of the review page of the layer folder ``root``, behind the :class:`Gate`
    (``review``: the run's state, made here unless the caller keeps it to end the visit)."""
    review = review or Review(Path(root), token)
    get = ["GET", "HEAD"]
    def page(handler: Callable[[Request], Response]) -> Callable[[Request], Awaitable[Response]]:
        return _page_errors(handler, review)

    routes = [
        Route("/", page(review.home), methods=get),
        Route("/activity", page(review.activity), methods=get),
        Route("/activity/diff", page(review.write_diff), methods=get),
        Route("/proposals", page(review.proposals), methods=get),
        Route("/modules", page(review.modules), methods=get),
        Route("/graph", page(review.graph), methods=get),
        Route("/graph/frame", page(review.graph_frame), methods=get),
        Route("/check", page(review.check), methods=get),
        Route("/file", page(review.file), methods=get),
        Route("/static/{name}", page(review.static), methods=get),
        Route("/activity/undo", review.undo, methods=["POST"]),
        Route("/proposals/apply", review.apply, methods=["POST"]),
        Route("/proposals/reject", review.reject, methods=["POST"]),
        Route("/proposals/batch", review.batch, methods=["POST"]),
        Route("/modules/state", review.set_state, methods=["POST"]),
        Route("/graph/trace", review.trace, methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    return Gate(app, token=token, port=port)


__all__ = ["Review", "build_app"]
