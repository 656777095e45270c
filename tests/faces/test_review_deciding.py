"""Deciding quickly on the review page (issue 18 §2): Activity's filters, pages and last visit, the summary, batch
decisions on proposals, the decided table, and times in local time with their age.  Over real HTTP, with the
writer's own files checked on disk; the browser's view of the same is in test_review_browser_deciding.py."""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from types import SimpleNamespace

import pytest

from review_support import (CARS_NAME, MEMORY_NAME, ReviewServer, add_ai_activity, make_layer, serve_with_activity,
                            tree_state)
from zonemark.render.activity_query import ActivityQuery, QueryError, new_entries, read_query, select
from zonemark.render.times import age, local_time, utc_time
from zonemark.writer import HistoryEntry, append_entry
from zonemark.writer.proposals import stored_proposals

TOKYO = dt.timezone(dt.timedelta(hours=9))


@pytest.fixture
def server(tmp_path):
    yield from serve_with_activity(tmp_path)


def _html(server, route: str, **params) -> str:
    status, _, body = server.get(route, **params)
    assert status == 200, (route, params, body[:200])
    return body.decode("utf-8")


def _cards(page: str) -> list[str]:
    """The one-line headings of the write cards: actor and action."""
    return [html.unescape(re.sub(r"<[^>]+>", "", h)) for h in re.findall(r'<h2 id="write-\d+">(.*?)</h2>', page)]


def _note(server, location: str) -> tuple[str, str]:
    status, _, body = server.request("GET", location.split("#")[0])
    assert status == 200
    match = re.search(r'<div class="note note-(\w+)" role="\w+" id="note">(.*?)</div>', body.decode("utf-8"))
    assert match, "no note on the page"
    return match.group(1), html.unescape(re.sub(r"<[^>]+>", "", match.group(2)))


# -- times -----------------------------------------------------------------------------------

def test_age_local_time_and_utc_are_one_rule_for_the_cli_and_the_page():
    """RV21: the age ``zonemark proposals`` prints is the page's; local time is the machine's zone."""
    from zonemark.cli.write import _age
    stamp = "2026-10-12T08:00:00.123456+00:00"
    now = dt.datetime(2026, 10, 12, 8, 23, 30, tzinfo=dt.timezone.utc)
    assert age(stamp, now) == "23 min"
    assert age(stamp, now + dt.timedelta(hours=5)) == "5 h"
    assert age(stamp, now + dt.timedelta(days=3)) == "3 d"
    assert age(stamp, now - dt.timedelta(hours=1)) == "0 s"  # a time ahead (another device's clock)
    assert age("ieri — 昨日", now) == "?" == _age("ieri — 昨日")
    assert local_time(stamp, TOKYO) == "2026-10-12 17:00"
    assert utc_time(stamp) == "2026-10-12 08:00:00 UTC"
    assert local_time("ieri — 昨日") == "ieri — 昨日"


def test_the_page_shows_local_time_with_its_age_and_the_exact_utc_on_hover(tmp_path, monkeypatch):
    layer = make_layer(tmp_path)
    add_ai_activity(layer)
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    with ReviewServer(layer) as server:
        page = _html(server, "/activity")
        proposals = _html(server, "/proposals")
    times = re.findall(r'<time datetime="([^"]+)" title="([^"]+)">([^<]+) <span class="age">\((.+?) ago\)</span>',
                       page + proposals)
    assert len(times) >= 4
    for stamp, title, shown, ago in times:
        then = dt.datetime.fromisoformat(stamp)
        assert title == then.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        assert shown == then.astimezone(TOKYO).strftime("%Y-%m-%d %H:%M")  # the server's zone: the user's
        assert re.fullmatch(r"\d+ (s|min|h|d)", ago)


# -- Activity: filters, pages, last visit ----------------------------------------------------------

def test_read_query_refuses_each_bad_field_in_one_line():
    for params, words in (({"actor": "robot"}, "actor must be ai, user or empty"),
                          ({"since": "2026-13-01"}, "since '2026-13-01' is not a day"),
                          ({"until": "ieri"}, "until must be a date YYYY-MM-DD"),
                          ({"since": "2026-10-12", "until": "2026-10-01"}, "is empty (since is after until)"),
                          ({"page": "0"}, "page must be a number from 1"),
                          ({"page": "9" * 40}, "page must be a number from 1"),
                          ({"new": "sì"}, "new must be 1 or empty"),
                          ({"file": "x" * 501}, "file is longer than 500 characters")):
        with pytest.raises(QueryError) as refused:
            read_query(params)
        assert words in str(refused.value) and "\n" not in str(refused.value), params
    assert read_query({}) == ActivityQuery()
    assert read_query({"actor": "ai", "since": "2026-10-01", "page": "3"}).params(page=4) == {
        "actor": "ai", "since": "2026-10-01", "page": "4"}


def _item(n: int, actor: str, file: str, label: str | None, stamp: str):
    entry = HistoryEntry(f"{n:08d}", stamp, actor, f"append — {n}", 10, container=label)
    return SimpleNamespace(file=file, entry=entry)


def test_select_filters_on_one_pass_and_pages_the_rest():
    day = dt.datetime(2026, 10, 1, 22, 30, tzinfo=dt.timezone.utc)  # 07:30 the next day in Tokyo
    items = [_item(n, "ai" if n % 3 else "user", CARS_NAME if n % 2 else MEMORY_NAME, f"TOPIC: Città {n % 4}",
                   (day - dt.timedelta(hours=n)).isoformat()) for n in range(120)]
    everything = select(items, ActivityQuery(), page_size=50)
    assert (everything.matched, everything.pages, len(everything.items)) == (120, 3, 50)
    last = select(items, ActivityQuery(page=9), page_size=50)  # past the last page: the last one
    assert (last.page, last.start, len(last.items)) == (3, 100, 20) and last.items[-1] is items[-1]
    ai = select(items, ActivityQuery(actor="ai", file=CARS_NAME, container="TOPIC: Città 1"), page_size=50)
    assert ai.items and all(i.entry.actor == "ai" and i.file == CARS_NAME and i.entry.container == "TOPIC: Città 1"
                            for i in ai.items)
    assert ai.matched == sum(1 for n in range(120) if n % 3 and n % 2 and n % 4 == 1)
    tokyo_day = select(items, ActivityQuery(since=dt.date(2026, 10, 2), until=dt.date(2026, 10, 2)),
                       page_size=500, tz=TOKYO)
    assert [i.entry.id for i in tokyo_day.items] == [f"{n:08d}" for n in range(8)]  # 07:30 back to 00:30
    visit = day - dt.timedelta(hours=4, minutes=30)
    since = select(items, ActivityQuery(new=True), page_size=50, visit=visit)
    assert [i.entry.id for i in since.items] == [f"{n:08d}" for n in range(5)]
    assert new_entries(items[:5], visit) == [("TOPIC: Città 0", 1), ("TOPIC: Città 1", 1), ("TOPIC: Città 2", 1)]
    assert new_entries(items[:5], visit, actor="user") == [("TOPIC: Città 0", 1), ("TOPIC: Città 3", 1)]
    assert everything.files == tuple(sorted({CARS_NAME, MEMORY_NAME}))
    assert everything.containers == tuple(f"TOPIC: Città {k}" for k in range(4))


def test_activity_filters_by_actor_file_container_and_date(server):
    layer = server.layer
    append_entry(layer / MEMORY_NAME, "Viaggi", "nota dell'utente — メモ", "scritta da me — 私.", actor="user",
                 date="2026-10-13")
    everyone = _cards(_html(server, "/activity"))
    assert len(everyone) == 2
    assert _cards(_html(server, "/activity", actor="user")) == ["user append to Viaggi: nota dell'utente — メモ"]
    assert _cards(_html(server, "/activity", actor="ai")) == ["ai append to Maintenance/Tyres: pressione controllata "
                                                            "— 空気圧"]
    assert _cards(_html(server, "/activity", file=MEMORY_NAME)) == ["user append to Viaggi: nota dell'utente — メモ"]
    page = _html(server, "/activity", container="SUBTOPIC1: Tyres")
    assert _cards(page) == ["ai append to Maintenance/Tyres: pressione controllata — 空気圧"]
    assert "1 write of 2 match" in page
    assert '<option value="SUBTOPIC1: Tyres" selected>' in page  # the form shows what was asked
    today = dt.datetime.now().date()
    assert len(_cards(_html(server, "/activity", since=today.isoformat(), until=today.isoformat()))) == 2
    tomorrow = (today + dt.timedelta(days=1)).isoformat()
    assert "No write matches these filters." in _html(server, "/activity", since=tomorrow)


def test_a_bad_filter_is_one_line_and_no_page_of_writes(server):
    before = tree_state(server.layer)
    status, _, body = server.get("/activity", since="2026-02-30")
    text = body.decode("utf-8")
    assert status == 400 and "refused: since &#x27;2026-02-30&#x27; is not a day of the calendar" in text
    assert "<article" not in text and "Traceback" not in text
    assert tree_state(server.layer) == before


def test_activity_pages_beyond_the_newest_fifty(tmp_path):
    layer = make_layer(tmp_path)
    for n in range(53):  # two files: the history keeps 50 versions of each
        file, container = (CARS_NAME, "Maintenance/Tyres") if n % 2 else (MEMORY_NAME, "Lavoro")
        append_entry(layer / file, container, f"misura {n} — 測定", f"pressione {n}, perché sì.", actor="ai",
                     date="2026-10-12")
    with ReviewServer(layer) as server:
        first = _html(server, "/activity")
        assert len(_cards(first)) == 50 and "misura 52 — 測定" in _cards(first)[0]
        older = re.search(r'<a rel="next" href="([^"]+)">Older', first).group(1).replace("&amp;", "&")
        status, _, body = server.request("GET", older)
        second = body.decode("utf-8")
        assert status == 200 and _cards(second)[-1].endswith("misura 0 — 測定") and len(_cards(second)) == 3
        assert "page 2 of 2" in second and 'rel="prev"' in second and 'rel="next"' not in second
        assert "51\u201353 shown" in second


def test_since_my_last_visit_is_read_once_and_written_when_the_run_stops(tmp_path):
    """RV16: no GET writes the mark; the run that showed the newest writes records it when it stops."""
    layer = make_layer(tmp_path)
    add_ai_activity(layer)
    mark = layer / ".zonemark" / "review-visit.json"
    with ReviewServer(layer) as server:
        assert 'value="1"> only since my last visit (none recorded)' in _html(server, "/activity")
        assert not mark.exists()  # a GET writes nothing
        _html(server, "/proposals")
    seen = json.loads(mark.read_text(encoding="utf-8"))
    assert seen["format"] == "zonemark-review-visit/1"
    with ReviewServer(layer) as server:  # nothing new since: the AI's write is not counted again
        page = _html(server, "/activity")
        assert "The AI wrote nothing since your last visit" in page
        assert _cards(_html(server, "/activity", new="1")) == []
        append_entry(layer / CARS_NAME, "Maintenance/Tyres", "nuova misura — 新しい", "2,6 — perché no.",
                     actor="ai", date="2026-10-13")
        page = _html(server, "/activity")
        assert re.search(r"<strong>The AI wrote 1 time</strong> since your last visit \(<time", page)
        assert "SUBTOPIC1: Tyres (1)" in page
        assert _cards(_html(server, "/activity", new="1")) == ["ai append to Maintenance/Tyres: nuova misura — 新しい"]
        reloaded = _html(server, "/activity")  # a reload in the same run still counts from the last visit
        assert "SUBTOPIC1: Tyres (1)" in reloaded
    mark.write_text("{not json — 壊れた", encoding="utf-8")  # a mark that cannot be read: everything is new
    with ReviewServer(layer) as server:
        assert "since zonemark kept the history (no earlier visit is recorded)" in _html(server, "/activity")


def test_a_run_that_showed_no_activity_page_records_no_visit(tmp_path):
    layer = make_layer(tmp_path)
    add_ai_activity(layer)
    with ReviewServer(layer) as server:
        _html(server, "/proposals")
        _html(server, "/activity", actor="user")  # a filtered page does not show the newest writes
    assert not (layer / ".zonemark" / "review-visit.json").exists()


def test_the_summary_says_what_was_written_what_waits_and_what_check_finds(server):
    page = _html(server, "/activity")
    summary = re.search(r'<section class="summary".*?</section>', page).group(0)
    text = re.sub(r"<[^>]+>", "", summary)
    assert "The AI wrote 1 time since zonemark kept the history" in text
    assert "SUBTOPIC1: Tyres (1)" in text
    assert "3 proposals wait for a decision." in text
    assert "check finds 0 errors and 1 warning." in text
    assert '<section class="summary"' not in _html(server, "/activity", actor="ai")  # the first page only


# -- Proposals: batch decisions and the decided table ------------------------------------------------

def test_batch_apply_checks_each_and_names_the_stale_one(server):
    memory = server.layer / MEMORY_NAME
    a = server.activity
    memory.write_text(memory.read_text(encoding="utf-8").replace("ragù, tre ore.", "ragù, tre ore e mezza."),
                      encoding="utf-8")  # the zone of reject_id changed by hand: that proposal is stale now
    body = f"token={server.token}&id={a.apply_id}&id={a.reject_id}&id={a.hostile_id}&decision=apply"
    status, headers, _ = server.request("POST", f"/proposals/batch?token={server.token}", body=body.encode(),
                                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 303 and headers["location"].endswith("#main")
    kind, text = _note(server, headers["location"])
    assert kind == "refused"
    assert text.startswith(f"applied 2 of 3 proposals: {a.apply_id}, {a.hostile_id}; refused 1: {a.reject_id} "
                           "(STALE_PROPOSAL: refused: proposal")
    after = memory.read_text(encoding="utf-8")
    assert "foglie rosse" in after and "Il parser è pronto.\n" in after and "tre ore e mezza" in after
    status = {p.id: p.status for p in stored_proposals(server.layer)}
    assert status == {a.apply_id: "applied", a.reject_id: "open", a.hostile_id: "applied"}


def test_batch_reject_keeps_the_users_reason_and_the_decided_table_shows_it(server):
    a = server.activity
    before = tree_state(server.layer)
    status, headers, _ = server.post("/proposals/batch", {"id": a.reject_id, "decision": "reject",
                                                          "reason": "non serve — 不要"})
    body = f"token={server.token}&id={a.reject_id}&id={a.hostile_id}&decision=reject&reason=doppio+—+二重"
    status, headers, _ = server.request("POST", f"/proposals/batch?token={server.token}", body=body.encode(),
                                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    kind, text = _note(server, headers["location"])
    assert (kind, text.split(";")[0]) == ("refused", f"rejected 1 of 2 proposals: {a.hostile_id}")
    assert f"{a.reject_id} (PROPOSAL_CLOSED: refused: proposal {a.reject_id} is already rejected)" in text
    assert tree_state(server.layer)[MEMORY_NAME] == before[MEMORY_NAME]  # a rejection writes no file of the layer
    page = _html(server, "/proposals")
    rows = {m.group(1): m.group(0) for m in re.finditer(r'<tr class="status-\w+"><td class="mono">([\w-]+)</td>.*?</tr>',
                                                        page)}
    assert set(rows) == {a.reject_id, a.hostile_id}
    for pid, reason in ((a.reject_id, "non serve — 不要"), (a.hostile_id, "doppio — 二重")):
        cells = re.findall(r"<td[^>]*>(.*?)</td>", rows[pid])
        assert cells[1] == "rejected" and cells[4] == "user" and cells[5] == reason
        assert re.match(r'<time datetime="[^"]+" title="[^"]+ UTC">', cells[3])
    assert "&lt;img src=x" in rows[a.hostile_id] and "<img" not in rows[a.hostile_id]  # the AI's reason, escaped


def test_a_batch_refuses_no_ids_an_unknown_decision_and_more_than_the_limit(server):
    from zonemark.review.app import BATCH_LIMIT
    before = tree_state(server.layer)
    too_many = "&".join(f"id=p{n}" for n in range(BATCH_LIMIT + 1))
    for body, words in (("decision=apply", "refused: tick at least one proposal to apply"),
                        (f"id={server.activity.apply_id}&decision=erase", "refused: a batch decision is apply or "
                                                                           "reject"),
                        (f"{too_many}&decision=reject", f"a batch decides at most {BATCH_LIMIT}")):
        status, headers, _ = server.request("POST", f"/proposals/batch?token={server.token}",
                                            body=f"token={server.token}&{body}".encode(),
                                            headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 303
        kind, text = _note(server, headers["location"])
        assert kind == "refused" and words in text
    assert tree_state(server.layer) == before


def test_the_batch_form_has_the_gates_protection(server):
    """The new form is an action like the others: the token in its body, the page's own origin."""
    before = tree_state(server.layer)
    fields = {"id": server.activity.apply_id, "decision": "apply"}
    assert server.post("/proposals/batch", fields, body_token=False)[0] == 403
    assert server.post("/proposals/batch", fields, headers={"Origin": "http://evil.example"})[0] == 403
    assert server.post("/proposals/batch", fields, headers={"Sec-Fetch-Site": "cross-site"})[0] == 403
    assert server.request("GET", f"/proposals/batch?token={server.token}&id={server.activity.apply_id}"
                                 "&decision=apply")[0] == 405
    assert tree_state(server.layer) == before
    page = _html(server, "/proposals")
    form = re.search(r'<form method="post" action="([^"]+)" id="batch" class="batch">'
                     r'<input type="hidden" name="token" value="([^"]+)">', page)
    assert form and form.group(2) == server.token
    picks = re.findall(r'<input type="checkbox" name="id" value="([\w-]+)" form="batch" id="pick-\1">', page)
    assert sorted(picks) == sorted([server.activity.apply_id, server.activity.reject_id, server.activity.hostile_id])


def test_old_records_without_decided_by_are_shown_as_decided_by_the_user(server):
    """Only the user decides (§5.2): a record made before ``decided_by`` was kept still reads as the user's."""
    from zonemark.writer import reject_proposal
    pid = server.activity.reject_id
    proposal = next(p for p in stored_proposals(server.layer) if p.id == pid)
    reject_proposal(proposal.path, actor="user", reason="vecchio — 古い")
    record = json.loads(proposal.path.read_text(encoding="utf-8"))
    assert record["decided_by"] == "user"
    del record["decided_by"]
    proposal.path.write_text(json.dumps(record), encoding="utf-8")
    row = re.search(rf'<tr class="status-rejected"><td class="mono">{pid}</td>.*?</tr>', _html(server, "/proposals"))
    assert re.findall(r"<td[^>]*>(.*?)</td>", row.group(0))[4:6] == ["user", "vecchio — 古い"]



def test_a_batch_of_applies_over_the_byte_budget_is_refused_before_any_write(tmp_path, monkeypatch):
    """RV18: the applies of one batch rewrite at most BATCH_BYTES of files in all; one proposal alone always may."""
    from zonemark.review import app
    layer = make_layer(tmp_path)
    a = add_ai_activity(layer)
    size = (layer / MEMORY_NAME).stat().st_size
    monkeypatch.setattr(app, "BATCH_BYTES", 2 * size)  # two applies to that file fit, three do not
    review = app.Review(layer, "t" * 43)
    before = tree_state(layer)
    note = review._batch([a.apply_id, a.reject_id, a.hostile_id], "apply", "")
    assert note.kind == "refused" and note.text.startswith("refused: applying these 3 proposals rewrites ")
    assert "MB of files in all; a batch applies at most 0 MB (tick fewer, or apply them one by one)" in note.text
    assert tree_state(layer) == before
    monkeypatch.setattr(app, "BATCH_BYTES", 1)
    assert review._batch([a.apply_id], "apply", "").text == f"applied 1 of 1 proposals: {a.apply_id}"
    assert "foglie rosse" in (layer / MEMORY_NAME).read_text(encoding="utf-8")
    rejected = review._batch([a.reject_id, a.hostile_id], "reject", "troppi — 多すぎ")  # rejections write no file
    assert rejected.kind == "ok" and rejected.text.startswith("rejected 2 of 2 proposals")
