"""The HTML of the review pages: plain pages, no script, every value from a file escaped.

Each function takes plain data (what :mod:`.app` read through the layer, the writer and the
services) and returns a whole page.  Text from the files, the proposals and the traces goes
through :func:`_t` (escaped, invisible and direction-changing characters shown); the only
markup is written here.  Actions are ``<form method="post">`` with the token in a hidden field.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from ..layer.status import LayerStatus
from ..render.formats import counted
from ..core.text import decode
from ..render.diff_html import side_by_side_html, unified_text_html, visible_text_html

TYPE_CHECKING = False  # the types of the pages' arguments, for the type checker only
if TYPE_CHECKING:
    from ..core.diagnostics import CodeInfo, Diagnostic
    from ..render.activity import ActivityItem
    from ..render.activity_query import ActivityPage, ActivityQuery
    from ..render.proposal_change import ProposalChange
    from ..writer import Proposal

DASH = "\u2014"
PAGES = (("activity", "Activity"), ("proposals", "Proposals"), ("modules", "Modules"), ("graph", "Graph"),
         ("check", "Check"))


def _t(value: object) -> str:
    """Text for the page: escaped, invisible characters shown."""
    return visible_text_html("" if value is None else str(value))


def _a(value: str) -> str:
    """An attribute value (ours: URLs, ids)."""
    return html.escape(value, quote=True)


_BREAK_AFTER = frozenset("/[]_-.")


def _name(value: str) -> str:
    """A file name or path for the page, with a break opportunity (``<wbr>``) after ``/ [ ] _ - .`` (RV22)."""
    pieces, start = [], 0
    for k, char in enumerate(value):
        if char in _BREAK_AFTER and k + 1 < len(value):
            pieces.append(value[start:k + 1])
            start = k + 1
    pieces.append(value[start:])
    return "<wbr>".join(_t(piece) for piece in pieces)


@dataclass(frozen=True)
class Note:
    """What the last action did: ``ok`` or ``refused``, its text and the writer's code when it gave one."""

    kind: str
    text: str
    code: str | None = None


class Site:
    """Links of one run: every address carries the token."""

    def __init__(self, token: str, layer_name: str):
        self.token = token
        self.layer_name = layer_name

    def url(self, route: str, /, **params: object) -> str:
        query = {"token": self.token, **{k: v for k, v in params.items() if v is not None}}
        return f"{route}?{urlencode(query)}"

    def file_link(self, rel: str, line: int | None = None, label: str | None = None) -> str:
        text = label if label is not None else (rel if line is None else f"{rel}:{line}")
        href = self.url("/file", path=rel, line=line) + (f"#L{line}" if line else "")
        return f'<a href="{_a(href)}">{_name(text)}</a>'

    def form(self, action: str, fields: dict[str, str], button: str, *, css: str = "", extra: str = "",
             label: str | None = None) -> str:
        hidden = "".join(f'<input type="hidden" name="{_a(k)}" value="{_a(v)}">' for k, v in
                         {"token": self.token, **fields}.items())
        aria = f' aria-label="{_a(label)}"' if label else ""
        return (f'<form method="post" action="{_a(self.url(action))}" class="action">{hidden}{extra}'
                f'<button type="submit" class="{_a(css)}"{aria}>{_t(button)}</button></form>')

    def page(self, current: str, title: str, body: str, *, note: Note | None = None,
             counts: dict[str, int] | None = None, wide: bool = False) -> str:
        counts = counts or {}
        items = []
        for key, label in PAGES:
            extra = f' <span class="badge">{counts[key]}</span>' if counts.get(key) else ""
            here = ' aria-current="page"' if key == current else ""
            items.append(f'<li><a href="{_a(self.url("/" + key))}"{here}>{label}{extra}</a></li>')
        note_html = ""
        if note is not None:
            role = "status" if note.kind == "ok" else "alert"
            code = f'<span class="code">{_t(note.code)}</span> ' if note.code else ""
            note_html = f'<div class="note note-{_a(note.kind)}" role="{role}" id="note">{code}{_t(note.text)}</div>'
        return (
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            '<meta name="referrer" content="same-origin">\n'
            f"<title>{_t(title)} \u2014 {_t(self.layer_name)} \u2014 zonemark review</title>\n"
            f'<link rel="stylesheet" href="{_a(self.url("/static/review.css"))}">\n'
            f'<link rel="icon" type="image/svg+xml" href="{_a(self.url("/static/favicon.svg"))}">\n</head>\n'
            f'<body class="page-{_a(current)}{" wide" if wide else ""}">\n'
            '<a class="skip" href="#main">Skip to content</a>\n'
            f'<header class="top"><p class="brand">zonemark review <span class="layer">{_t(self.layer_name)}</span></p>'
            f'<nav aria-label="Pages"><ul>{"".join(items)}</ul></nav></header>\n'
            f'<main id="main" tabindex="-1">\n<h1>{_t(title)}</h1>\n{note_html}\n{body}\n</main>\n</body>\n</html>\n')


def _time(timestamp: str) -> str:
    """A stored time in the machine's local time with its age ("23 min ago"), the exact UTC on hover (RV21)."""
    from ..render.times import age, local_time, parse_time, utc_time
    if parse_time(timestamp) is None:
        return f'<time>{_t(timestamp)}</time>'
    return (f'<time datetime="{_a(timestamp)}" title="{_a(utc_time(timestamp))}">{_t(local_time(timestamp))} '
            f'<span class="age">({_t(age(timestamp))} ago)</span></time>')


def _facts(rows: list[tuple[str, str]]) -> str:
    return '<dl class="facts">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows) + "</dl>"


# -- Activity --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Summary:
    """The top of the first Activity page (RV20): what is new since the last visit, what waits, what check finds."""

    visit: str | None  # the last visit (ISO 8601), None when none is recorded
    new_ai: tuple[tuple[str, int], ...]  # the AI's writes since then, per container ('' unknown), most first
    new_user: int  # the user's own writes since then
    pending: int
    stale: int
    errors: int
    warnings: int


def _summary(site: Site, summary: Summary) -> str:
    since = f"since your last visit ({_time(summary.visit)})" if summary.visit else \
        "since zonemark kept the history (no earlier visit is recorded)"
    wrote = sum(n for _, n in summary.new_ai)
    if wrote:
        where = ", ".join(f"{_t(label) if label else 'a container not found'} ({n})" for label, n in summary.new_ai)
        ai = (f'<li><strong>The AI wrote {counted(wrote, "time")}</strong> {since}: {where}. '
              f'<a href="{_a(site.url("/activity", actor="ai", new="1"))}">Show them</a></li>')
    else:
        ai = f"<li>The AI wrote nothing {since}.</li>"
    user = f"<li>You wrote {counted(summary.new_user, 'time')} yourself.</li>" if summary.new_user else ""
    stale = f" ({summary.stale} stale)" if summary.stale else ""
    waiting = (f'<li><a href="{_a(site.url("/proposals"))}">{counted(summary.pending, "proposal")} '
               f'{"waits" if summary.pending == 1 else "wait"} for a decision</a>{stale}.</li>'
               if summary.pending else "<li>No proposal waits for a decision.</li>")
    found = (f'<li><a href="{_a(site.url("/check"))}"><code>check</code> finds {counted(summary.errors, "error")} '
             f'and {counted(summary.warnings, "warning")}</a>.</li>' if summary.errors or summary.warnings else
             "<li><code>check</code> finds nothing: every file checks clean.</li>")
    return (f'<section class="summary" aria-labelledby="summary-title"><h2 id="summary-title">At a glance</h2>'
            f'<ul>{ai}{user}{waiting}{found}</ul></section>')


def _select(name: str, label: str, choices: Sequence[tuple[str, str]], chosen: str) -> str:
    options = "".join(f'<option value="{_a(value)}"{" selected" if value == chosen else ""}>{_t(text)}</option>'
                      for value, text in choices)
    return (f'<span class="field"><label for="f-{name}">{label}</label><select id="f-{name}" name="{name}">'
            f'{options}</select></span>')


def _filters(site: Site, query: ActivityQuery, page: ActivityPage, visit: str | None) -> str:
    """The filter form (RV15): a plain GET form, the token in a hidden field like every address."""
    files = [("", "every file"), *((f, f) for f in page.files)]
    if query.file and query.file not in page.files:
        files.append((query.file, query.file))
    containers = [("", "every container"), *((c, c) for c in page.containers)]
    if query.container and query.container not in page.containers:
        containers.append((query.container, query.container))
    since = query.since.isoformat() if query.since else ""
    until = query.until.isoformat() if query.until else ""
    new_label = f"only since my last visit ({_time(visit)})" if visit else "only since my last visit (none recorded)"
    return (f'<form method="get" action="/activity" class="filters" aria-label="Filter the writes">'
            f'<input type="hidden" name="token" value="{_a(site.token)}">'
            + _select("actor", "Who", [("", "everyone"), ("ai", "the AI\u2019s writes"), ("user", "my own")],
                      query.actor)
            + _select("file", "File", files, query.file) + _select("container", "Container", containers,
                                                                   query.container)
            + f'<span class="field"><label for="f-since">From</label><input type="date" id="f-since" name="since" '
            f'value="{_a(since)}"></span><span class="field"><label for="f-until">To</label><input type="date" '
            f'id="f-until" name="until" value="{_a(until)}"></span>'
            f'<label class="check"><input type="checkbox" name="new" value="1"{" checked" if query.new else ""}> '
            f'{new_label}</label>'
            f'<button type="submit" id="f-show">Show</button>'
            f'<a href="{_a(site.url("/activity"))}" class="clear">Clear</a></form>')


def _pager(site: Site, query: ActivityQuery, page: ActivityPage) -> str:
    if page.pages <= 1:
        return ""
    links = []
    if page.page > 1:
        links.append(f'<a rel="prev" href="{_a(site.url("/activity", **query.params(page=page.page - 1)))}">'
                     '\u2190 Newer</a>')
    links.append(f'<span>page {page.page} of {page.pages}</span>')
    if page.page < page.pages:
        links.append(f'<a rel="next" href="{_a(site.url("/activity", **query.params(page=page.page + 1)))}">'
                     'Older \u2192</a>')
    return f'<nav class="pager" aria-label="Pages of writes">{"".join(links)}</nav>'


def activity_page(site: Site, page: ActivityPage, query: ActivityQuery, *, note: Note | None,
                  counts: dict[str, int], visit: str | None = None, summary: Summary | None = None) -> str:
    intro = ('<p class="lead">zonemark\u2019s writes to the files of this layer, newest first: who wrote, where, '
             'when; open one to see what changed. <strong>Undo</strong> restores the version before a write, as '
             '<code>zonemark undo FILE --as user</code> does: only the newest write of a file can be undone, '
             'and only while the file is still what zonemark wrote.</p>')
    out = [_summary(site, summary) if summary is not None else "", intro]
    if not page.total:
        return site.page("activity", "Activity", "".join(out) + '<p class="empty">No write yet: zonemark has kept '
                         'no history for the files of this layer.</p>', note=note, counts=counts)
    out.append(_filters(site, query, page, visit))
    shown = (f"{counted(page.matched, 'write')} of {page.total} match" if query.filtered
             else counted(page.total, "write"))
    first = page.start
    if page.items:
        shown += f"; {first + 1}\u2013{first + len(page.items)} shown"
    out.append(f'<p class="hint" id="shown">{shown}.</p>')
    if not page.items:
        out.append('<p class="empty">No write matches these filters.</p>')
    pager = _pager(site, query, page)
    out.append(pager)
    out.append('<ol class="cards">')
    for n, item in enumerate(page.items, first + 1):
        entry = item.entry
        heading_id = f"write-{n}"
        actor = entry.actor if entry.actor in ("ai", "user") else "other"
        undoes = f" (undoes {_t(entry.undoes)})" if entry.undoes else ""
        where = _t(entry.container) if entry.container else '<span class="hint">container not recorded</span>'
        facts = [("File", site.file_link(item.file)),
                 ("Time", _time(entry.timestamp)),
                 ("History", f"{_t(entry.id)}{undoes}")]
        diff = (f'<p class="diff-link"><a href="{_a(site.url("/activity/diff", file=item.file, id=entry.id))}">'
                f'Show what write {_t(entry.id)} changed</a></p>')
        action = ""
        if item.undoable:
            action = ('<div class="actions">' + site.form(
                "/activity/undo", {"file": item.file, "id": entry.id}, "Undo this write",
                label=f"Undo write {entry.id} to {item.file}") +
                '<span class="hint">restores the version before it (kept in history too)</span></div>')
        out.append(f'<li><article class="card write actor-{actor}" aria-labelledby="{heading_id}">'
                   f'<details><summary><h2 id="{heading_id}"><span class="actor">{_t(entry.who)}</span> '
                   f'{_t(entry.action)}</h2> <span class="line"><span class="where">{_name(item.file)} \u00b7 '
                   f'{where}</span> <span class="when">{_time(entry.timestamp)}</span></span></summary>'
                   f'{_facts(facts)}{diff}</details>{action}</article></li>')
    out.append("</ol>")
    out.append(pager)
    return site.page("activity", "Activity", "".join(out), note=note, counts=counts)


def write_page(site: Site, item: ActivityItem, diff: str | None, container: str | None, *,
               counts: dict[str, int]) -> str:
    """One write of the history with the diff of the region it changed (RV8)."""
    entry = item.entry
    undoes = f" (undoes {_t(entry.undoes)})" if entry.undoes else ""
    facts = [("File", site.file_link(item.file)),
             ("Container", _t(container) if container else '<span class="hint">unknown</span>'),
             ("Time", _time(entry.timestamp)),
             ("History", f"{_t(entry.id)}{undoes}")]
    if diff is None:
        diff = ('<p class="hint">The version this write produced is no longer kept (the file was changed '
                'since, or the history was trimmed): no diff to show.</p>')
    actor = entry.actor if entry.actor in ("ai", "user") else "other"
    body = (f'<p class="lead"><a href="{_a(site.url("/activity"))}">Activity</a>: what one write changed, with a few '
            'lines around the change.</p>'
            f'<article class="card write actor-{actor}" aria-labelledby="write-title">'
            f'<h2 id="write-title"><span class="actor">{_t(entry.who)}</span> {_t(entry.action)}</h2>'
            f'{_facts(facts)}{diff}</article>')
    return site.page("activity", f"Write {entry.id} of {item.file}", body, counts=counts)


# -- Proposals -------------------------------------------------------------------------------

DECIDED_SHOWN = 50


def _batch_form(site: Site) -> str:
    """One form for the ticked proposals (RV18): each checkbox below belongs to it by ``form="batch"``."""
    return (f'<form method="post" action="{_a(site.url("/proposals/batch"))}" id="batch" class="batch">'
            f'<input type="hidden" name="token" value="{_a(site.token)}">'
            '<span class="hint">Tick proposals below, then decide them together; each is checked on its own, '
            'and one that cannot be applied is refused and named.</span>'
            '<button type="submit" name="decision" value="apply" class="primary" id="batch-apply">'
            'Apply selected</button>'
            '<label for="batch-reason">Why (for a rejection, optional)</label>'
            '<input type="text" id="batch-reason" name="reason" maxlength="500" autocomplete="off">'
            '<button type="submit" name="decision" value="reject" class="danger" id="batch-reject">'
            'Reject selected</button></form>')

def proposals_page(site: Site, changes: Sequence[ProposalChange], decided: Sequence[Proposal], *,
                   note: Note | None, counts: dict[str, int]) -> str:
    out = ['<p class="lead">Changes the AI asked for in zones it may not write itself ([P3] long-term memory, '
           'and [P1]/[P2]/[P4] where it may only ask). <strong>Apply</strong> runs the same checks as '
           '<code>zonemark apply ID --as user</code>: a proposal whose zone changed since it was made is '
           '<em>stale</em> and is not applied. <strong>Reject</strong> leaves the file untouched and keeps the '
           'record.</p>']
    if not changes:
        out.append('<p class="empty">No proposal is waiting.</p>')
    else:
        out.append(_batch_form(site))
    for change in changes:
        p = change.proposal
        anchor = f"proposal-{p.id}"
        zone = f"[P{p.zone_level}] at line {p.zone_line}"
        if change.pending.zone_now is not None and change.pending.zone_now != p.zone_line:
            zone += f" (now at line {change.pending.zone_now})"
        facts = [("File", site.file_link(change.file, change.pending.zone_now or p.zone_line, change.file)),
                 ("Zone", _t(zone)),
                 ("Container", _t(change.container.label) if change.container else
                  '<span class="hint">\u2014</span>'),
                 ("Proposed by", _t(p.who)), ("Created", _time(p.created))]
        if p.would_add:
            facts.append(("Would add", "<ul>" + "".join(f"<li>{_t(x)}</li>" for x in p.would_add) + "</ul>"))
        parts = [f'<article class="card proposal{" stale" if change.stale else ""}" id="{_a(anchor)}" '
                 f'aria-labelledby="{_a(anchor)}-title">',
                 f'<h2 id="{_a(anchor)}-title">Proposal <span class="mono">{_t(p.id)}</span></h2>'
                 f'<p class="pick"><input type="checkbox" name="id" value="{_a(p.id)}" form="batch" '
                 f'id="pick-{_a(p.id)}"><label for="pick-{_a(p.id)}">select for the batch</label></p>',
                 f'<p class="reason"><strong>Reason:</strong> <span class="reason-text">{_t(p.reason)}</span></p>',
                 _facts(facts)]
        if change.data is None:
            parts.append('<p class="stale-note" role="note">The file cannot be read; nothing can be applied.</p>')
        elif change.stale or change.window is None:
            parts.append('<p class="stale-note" role="note"><strong>Stale:</strong> the zone changed since the '
                         'proposal was made (or is gone), so it cannot be applied. Below is the change as it was '
                         'proposed; ask for a new proposal, or reject this one.</p>')
            parts.append(unified_text_html(p.diff))
        elif change.window is not None:
            w = change.window
            parts.append(side_by_side_html(w.old, w.new, old_label=f"{change.file} now", new_label="after applying",
                                           caption=f"Proposal {p.id}: the file now and after applying",
                                           first_line=w.first, head=w.head, tail=w.tail))
        buttons = []
        if not change.stale and change.window is not None:
            buttons.append(site.form("/proposals/apply", {"id": p.id}, "Apply", css="primary",
                                     label=f"Apply proposal {p.id}"))
        field = f"reject-reason-{p.id}"
        buttons.append(site.form(
            "/proposals/reject", {"id": p.id}, "Reject", css="danger", label=f"Reject proposal {p.id}",
            extra=(f'<label for="{_a(field)}">Why (optional)</label>'
                   f'<input type="text" id="{_a(field)}" name="reason" maxlength="500" autocomplete="off">')))
        parts.append('<div class="actions">' + "".join(buttons) + "</div></article>")
        out.append("".join(parts))
    if decided:
        out.append('<h2 class="section">Already decided</h2><table class="grid decided"><thead><tr>'
                   '<th scope="col">Proposal</th><th scope="col">Decision</th><th scope="col">File</th>'
                   '<th scope="col">When</th><th scope="col">By</th><th scope="col">Your reason</th>'
                   '<th scope="col">The AI\u2019s reason</th></tr></thead><tbody>')
        for p in decided[:DECIDED_SHOWN]:
            when = _time(p.decided) if p.decided else '<span class="hint">not recorded</span>'
            mine = _t(p.rejection_reason) if p.rejection_reason else DASH
            out.append(f'<tr class="status-{_a(p.status)}"><td class="mono">{_t(p.id)}</td><td>{_t(p.status)}</td>'
                       f'<td>{_name(p.target.name)}</td><td>{when}</td><td>{_t(p.decided_by or "user")}</td>'
                       f'<td class="mine">{mine}</td><td>{_t(p.reason)}</td></tr>')
        out.append("</tbody></table>")
        if len(decided) > DECIDED_SHOWN:
            out.append(f'<p class="hint">The newest {DECIDED_SHOWN} of {len(decided)} decisions are shown.</p>')
    return site.page("proposals", "Proposals", "".join(out), note=note, counts=counts)


# -- Modules ---------------------------------------------------------------------------------

def modules_page(site: Site, status: LayerStatus, *, note: Note | None, counts: dict[str, int]) -> str:
    reminder = status.reminder
    where = (f"the registry of {site.file_link(reminder)}" if reminder else "the layer's registry")
    out = [f'<p class="lead">Every module of the layer with its declared state (its <code>STATE</code> field) and '
           f'its effective state (after the <code>MODULE_STATE_REGISTRY</code>, \u00a77.3.1). A toggle rewrites '
           f'{where} as <code>zonemark state LAYER --as user</code> does; a permanent module cannot be '
           f'toggled.</p>']
    modules = [m for m in status.modules if not m.ignored]
    if not modules:
        out.append('<p class="empty">This layer declares no module.</p>')
        return site.page("modules", "Modules", "".join(out), note=note, counts=counts)
    out.append('<table class="grid modules"><caption>Modules of the layer</caption><thead><tr>'
               '<th scope="col">Id</th><th scope="col">Name</th><th scope="col">Declared in</th>'
               '<th scope="col">Declared state</th><th scope="col">Effective state</th>'
               '<th scope="col">Nuclei</th><th scope="col">Change</th></tr></thead><tbody>')
    for m in modules:
        ident = m.id or ""
        effective = m.effective_state
        source_text = "" if m.state_source is None else "declared" if m.state_source.declared else "registry"
        state_cell = (f'<span class="state state-{_a(effective or "none")}">{_t(effective or "no state")}</span>'
                      + (f' <span class="hint">({source_text})</span>' if source_text else ""))
        if m.permanent:
            change = '<span class="permanent">permanent \u2014 cannot be toggled</span>'
        elif m.temporary or not ident:
            change = '<span class="hint">no declared id: the registry cannot name it</span>'
        else:
            forms = []
            if effective != "active":
                forms.append(site.form("/modules/state", {"module": ident, "state": "active"}, "Activate",
                                       label=f"Activate module {ident}"))
            if effective != "inactive":
                forms.append(site.form("/modules/state", {"module": ident, "state": "inactive"}, "Deactivate",
                                       label=f"Deactivate module {ident}"))
            change = "".join(forms)
        nuclei = ", ".join(str(n) for n in m.nuclei) or DASH
        declared = m.declared_state or DASH
        out.append(f'<tr id="module-{_a(ident)}"><th scope="row" class="mono">{_t(ident)}</th>'
                   f'<td>{_t(m.name)}</td>'
                   f'<td>{site.file_link(m.file, m.line)}</td>'
                   f'<td>{_t(declared)}</td><td>{state_cell}</td>'
                   f'<td>{_t(nuclei)}</td><td class="change">{change}</td></tr>')
    out.append("</tbody></table>")
    return site.page("modules", "Modules", "".join(out), note=note, counts=counts)


# -- Graph -----------------------------------------------------------------------------------

def graph_page(site: Site, *, note: Note | None, counts: dict[str, int]) -> str:
    body = (
        '<div class="graph-layout"><div class="graph-side">'
        '<form method="get" action="/graph/frame" target="graph-frame" class="graph-search" role="search">'
        f'<input type="hidden" name="token" value="{_a(site.token)}">'
        '<label for="graph-q">Search the graph: labels and module ids, collapsed entries too</label>'
        '<span class="row"><input type="search" id="graph-q" name="q" maxlength="200" spellcheck="false">'
        '<button type="submit" id="graph-search">Search</button></span></form>'
        f'<form method="post" action="{_a(site.url("/graph/trace"))}" target="graph-frame" class="trace-form">'
        f'<input type="hidden" name="token" value="{_a(site.token)}">'
        '<h2>Light up a trace</h2>'
        '<label for="trace-text">Paste an answer that holds a Deferred Neural Trace (<code>[NTRACE: v1]</code> '
        '\u2026 <code>[/NTRACE]</code>, \u00a7N.18)</label>'
        '<textarea id="trace-text" name="text" rows="12" spellcheck="false" required></textarea>'
        '<label class="check"><input type="checkbox" name="record" value="1" checked> record it for the heat view '
        '(as <code>zonemark trace</code> does)</label>'
        '<button type="submit" class="primary" id="light-up">Light up</button>'
        '<p class="hint">The traced nodes light up in activation order; the trace\u2019s warnings are listed '
        'beside the graph. Once traces are recorded, tick <em>heat</em> above the graph to see how often each '
        'node lit up.</p></form></div>'
        f'<iframe name="graph-frame" id="graph-frame" title="Layer graph" src="{_a(site.url("/graph/frame"))}">'
        '</iframe></div>')
    return site.page("graph", "Graph", body, note=note, counts=counts, wide=True)


# -- Check -----------------------------------------------------------------------------------

def check_page(site: Site, diagnostics: Sequence[Diagnostic], catalogue: Mapping[str, CodeInfo], *,
               note: Note | None, counts: dict[str, int]) -> str:
    errors = sum(1 for d in diagnostics if d.severity.value == "error")
    warnings = len(diagnostics) - errors
    out = [f'<p class="lead">What <code>zonemark check LAYER</code> reports for this layer: '
           f'<strong>{errors}</strong> error{"s" if errors != 1 else ""} and <strong>{warnings}</strong> '
           f'warning{"s" if warnings != 1 else ""}. Each links to its file and line; open the explanation for '
           f'what the code means and how to fix it.</p>']
    if not diagnostics:
        out.append('<p class="empty">No diagnostic: every file of the layer checks clean.</p>')
    current = None
    for n, d in enumerate(diagnostics, 1):
        path = d.path or "."
        if path != current:
            if current is not None:
                out.append("</ul>")
            current = path
            out.append(f'<h2 class="section">{_t(path if path != "." else "the layer as a whole")}</h2>'
                       '<ul class="diagnostics">')
        place = f"{path}:{d.line}:{d.column}"
        link = site.file_link(path, d.line, place) if path != "." else _t(place)
        info = catalogue.get(d.code)
        explain = ""
        if info is not None:
            explain = (f'<details><summary>Explain {_t(d.code)}</summary><p class="summary">{_t(info.summary)} '
                       f'<span class="hint">(\u00a7{_t(info.section.lstrip("§"))})</span></p>'
                       f'<p class="explanation">{_t(info.explanation)}</p></details>')
        out.append(f'<li class="diagnostic severity-{_a(d.severity.value)}" id="d{n}">{link} '
                   f'<span class="severity">{_t(d.severity.value)}</span> <span class="code">{_t(d.code)}</span> '
                   f'<span class="message">{_t(d.message)}</span>{explain}</li>')
    if current is not None:
        out.append("</ul>")
    return site.page("check", "Check", "".join(out), note=note, counts=counts)


# -- one file --------------------------------------------------------------------------------

FILE_PAGE_LINES = 1000  # lines of a file one page of the file view shows (RV11)


def _line_start(data: bytes, line: int) -> int:
    """The offset of line ``line`` (from 1) of ``data``: newlines counted a chunk at a time, no list of lines."""
    need, pos, chunk = line - 1, 0, 1 << 16
    while need > 0 and pos < len(data):
        end = min(len(data), pos + chunk)
        found = data.count(b"\n", pos, end)
        if found < need:
            need, pos = need - found, end
            continue
        for _ in range(need):
            pos = data.index(b"\n", pos) + 1
        need = 0
    return pos


def file_page(site: Site, rel: str, data: bytes, line: int | None, page: int | None, *,
              counts: dict[str, int]) -> str:
    """One page of :data:`FILE_PAGE_LINES` lines of a file (the one holding ``line`` when given), with links to
    the pages before and after (RV11): a 10 MB file is never one page."""
    total = data.count(b"\n") + (not data.endswith(b"\n") and bool(data))
    pages = max(1, -(-total // FILE_PAGE_LINES))
    if line is not None and 1 <= line <= total:
        page = (line - 1) // FILE_PAGE_LINES + 1
    page = min(max(page or 1, 1), pages)
    first = (page - 1) * FILE_PAGE_LINES + 1
    start = _line_start(data, first)
    stop = start
    for _ in range(FILE_PAGE_LINES):
        found = data.find(b"\n", stop)
        if found < 0:
            stop = len(data)
            break
        stop = found + 1
    shown = data[start:stop].split(b"\n")
    if shown and shown[-1] == b"":
        shown.pop()
    rows = []
    for n, raw in enumerate(shown, first):
        content = decode(raw)
        here = ' class="here" aria-current="location"' if n == line else ""
        rows.append(f'<tr id="L{n}"{here}><td class="num"><a href="#L{n}">{n}</a></td>'
                    f'<td class="text">{_t(content.rstrip(chr(13)))}</td></tr>')
    last = first + len(shown) - 1
    nav = ""
    if pages > 1:
        links = []
        for label, target, rel_name in (("First", 1, None), ("Previous", page - 1, "prev"), ("Next", page + 1, "next"),
                                        ("Last", pages, None)):
            if 1 <= target <= pages and target != page:
                rel_attr = f' rel="{rel_name}"' if rel_name else ""
                links.append(f'<a href="{_a(site.url("/file", path=rel, page=target))}"{rel_attr}>{label}</a>')
        nav = (f'<nav class="pager" aria-label="Pages of {_a(rel)}"><span>lines {first:,}\u2013{last:,} of '
               f'{total:,} (page {page} of {pages})</span> ' + " ".join(links) + "</nav>")
    body = (f'<p class="lead">{_t(rel)} as it is on disk ({counted(total, "line")}). This page only reads.</p>'
            f'{nav}<table class="source"><caption class="sr">Lines of {_t(rel)}</caption><tbody>{"".join(rows)}'
            f'</tbody></table>{nav}')
    return site.page("file", rel, body, counts=counts)


def message_page(site: Site, title: str, text: str, *, counts: dict[str, int]) -> str:
    return site.page("message", title, f'<p class="lead">{_t(text)}</p>', counts=counts)


__all__ = ["DECIDED_SHOWN", "FILE_PAGE_LINES", "Note", "PAGES", "Site", "Summary", "activity_page", "check_page",
           "file_page", "graph_page", "message_page", "modules_page", "proposals_page", "write_page"]
