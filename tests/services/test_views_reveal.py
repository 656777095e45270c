"""Every view a user reads or approves from shows invisible and direction-changing characters (W30).

A file written by the user, or a proposal record made before the writer removed such characters,
can still hold a bidi override, a zero-width character, a tag character, NUL or ESC.  The CLI's
``proposals``, ``--show`` and ``history`` and every page of the review page (proposals, activity,
modules, check, one file, the graph frame) show each as a visible ``⟨U+202E⟩`` mark, through one
function, :func:`zonemark.core.text.reveal`.
"""

from __future__ import annotations

import json
import re

import pytest

from review_support import MEMORY_NAME, make_layer
from zonemark.cli.main import main
from zonemark.core.text import HIDDEN, reveal
from zonemark.writer import Store, append_entry, propose
from zonemark.writer import snapshot as snapshot_module

#: One of each kind: override, isolate, zero-width, word joiner, BOM, tag letter, NUL, ESC, C1, soft hyphen.
HIDDEN_SAMPLE = "\u202e\u2066\u200b\u2060\ufeff\U000e0041\x00\x1b\x9b\u00ad\ufe0f"
TROJAN = "Helper\u202eSSECCA_TOOR_WOLLA"

PLANS = """# Piani — 計画 [external_memory]

[P1]
## TOPIC: Plans
[/P1]

[P3]
###### LOG: 2026-01-01 — perché
Tokyo — 東京.
[/P3]
"""


def _raw_hidden(text: str) -> list[str]:
    """The hidden characters that reached ``text`` as themselves (line feed and tab are not hidden)."""
    return sorted({f"U+{ord(c):04X}" for c in HIDDEN.findall(text) if c not in "\n\t"})


@pytest.fixture(autouse=True)
def fresh_writer_cache():
    snapshot_module.forget()
    yield
    snapshot_module.forget()


def run(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_reveal_marks_every_kind_of_hidden_character_and_keeps_the_rest():
    text = f"perché — 東京 {HIDDEN_SAMPLE}\tfine\n"
    shown = reveal(text)
    assert _raw_hidden(shown) == []
    for c in HIDDEN_SAMPLE:
        assert f"\u27e8U+{ord(c):04X}\u27e9" in shown
    assert shown.startswith("perché — 東京 ") and shown.endswith("\tfine\n")
    assert reveal("perché — 東京") == "perché — 東京"
    assert reveal("a\u202eb", mark=lambda c: "[X]", plain=str.upper) == "A[X]B"


def _old_record(tmp_path, store):
    """A proposal as one made before the sanitiser removed hidden characters: its content and reason hold them."""
    f = tmp_path / "piani.md"
    f.write_text(PLANS.replace("Tokyo — 東京.", f"Tokyo — 東京, {TROJAN}."), encoding="utf-8")
    p = propose(f, "Plans", "###### LOG: 2026-01-01 — perché\nKyōto — 京都.\n", reason="perché — 理由", store=store)
    record = json.loads(p.path.read_text(encoding="utf-8"))
    record["new_content"] = f"###### LOG: 2026-01-01 — perché\nKyōto — 京都 {HIDDEN_SAMPLE} {TROJAN}.\n"
    record["reason"] = f"innocuo \u2066{TROJAN}\u2069 — 無害"
    p.path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    return f, p


def test_proposals_show_marks_the_hidden_characters_of_an_old_record_and_of_the_file(tmp_path, capsys,
                                                                                      monkeypatch):
    store = Store(fsync=False)
    f, p = _old_record(tmp_path, store)
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, ["proposals", str(tmp_path), "--show", p.id])
    assert code == 0, err
    assert _raw_hidden(out) == [], ascii(out)
    # the diff is of what apply would write: the old record's content cleaned as every AI text (W23)
    added = [ln for ln in out.splitlines() if ln.startswith("+Kyōto — 京都 ")]
    assert len(added) == 1 and added[0].endswith("HelperSSECCA_TOOR_WOLLA."), ascii(out)
    assert "\u27e8U+" not in added[0] and "\\x" not in added[0]
    assert "-Tokyo — 東京, Helper\u27e8U+202E\u27e9SSECCA_TOOR_WOLLA." in out  # the user's own line, marked
    code, out, err = run(capsys, ["proposals", str(tmp_path)])
    assert code == 0, err
    assert _raw_hidden(out + err) == []
    assert "innocuo \u27e8U+2066\u27e9Helper\u27e8U+202E\u27e9SSECCA_TOOR_WOLLA\u27e8U+2069\u27e9 — 無害" in out


def test_history_marks_hidden_characters_of_what_it_prints(tmp_path, capsys):
    f = tmp_path / "piani.md"
    f.write_text(PLANS.replace("Plans", "Pia\u200bni — 計画") + "\n[P4]\n[/P4]\n", encoding="utf-8")
    append_entry(f, "Pia\u200bni — 計画", "voce — perché", "Kyoto — 京都.", actor="ai", date="2026-01-02",
                 store=Store(fsync=False))
    code, out, err = run(capsys, ["history", str(f)])
    assert code == 0, err
    assert _raw_hidden(out) == [] and "Pia\u27e8U+200B\u27e9ni — 計画" in out, ascii(out)


# -- the review page -------------------------------------------------------------------------

class _Request:
    query_params: dict[str, str] = {}


def _review_layer(tmp_path):
    layer = make_layer(tmp_path)
    aria = layer / "aria[reminder].md"
    aria.write_text(aria.read_text(encoding="utf-8").replace("## MODULE 002: PROJECT_MANAGER",
                                                             f"## MODULE 002: {TROJAN}\U000e0041"), encoding="utf-8")
    memory = layer / MEMORY_NAME
    store = Store(fsync=False)
    p = propose(memory, "Viaggi", "###### LOG: 2026-01-03 — città\nKyoto — 京都, in autunno.\n",
                reason="stagione — 季節", actor="ai", store=store)
    record = json.loads(p.path.read_text(encoding="utf-8"))
    record["new_content"] = f"###### LOG: 2026-01-03 — città\nKyoto — 京都 {HIDDEN_SAMPLE} {TROJAN}.\n"
    record["reason"] = f"stagione \u2066{TROJAN}\u2069 — 季節"
    p.path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    # the user's own text next to an entry the AI appends: the activity diff shows it as context
    memory.write_text(memory.read_text(encoding="utf-8").replace(
        "[P4]\n[/P4]\n", f"[P4]\nscritto a mano — 手書き {TROJAN}\u200d\n[/P4]\n"), encoding="utf-8")
    append_entry(memory, "Lavoro", "voce — perché", "testo — 東京.", actor="ai", date="2026-03-02", store=store)
    snapshot_module.forget()
    return layer


def _pages(layer):
    from zonemark.review.app import Review
    review = Review(layer, token="t" * 32)
    request = _Request()
    pages = {name: getattr(review, name)(request).body.decode("utf-8")
             for name in ("activity", "proposals", "modules", "check", "graph_frame")}
    request.query_params = {"path": MEMORY_NAME}
    pages["file"] = review.file(request).body.decode("utf-8")
    request.query_params = {"path": "aria[reminder].md"}
    pages["file aria"] = review.file(request).body.decode("utf-8")
    newest = Store().history(layer / MEMORY_NAME)[0]  # a write's diff is its own page (RV8)
    request.query_params = {"file": MEMORY_NAME, "id": newest.id}
    pages["write"] = review.write_diff(request).body.decode("utf-8")
    return pages


def test_every_review_page_marks_hidden_characters(tmp_path):
    pytest.importorskip("starlette")
    pages = _pages(_review_layer(tmp_path))
    marked = '<span class="mark">\u27e8U+202E\u27e9</span>'
    for name, body in pages.items():
        if name != "graph_frame":
            assert _raw_hidden(body) == [], name
    assert f"Helper{marked}SSECCA_TOOR_WOLLA" in pages["modules"]
    assert '<span class="mark">\u27e8U+E0041\u27e9</span>' in pages["modules"]
    proposals = pages["proposals"]
    assert "stagione " + '<span class="mark">\u27e8U+2066\u27e9</span>' + f"Helper{marked}" in proposals
    # the diff is of what Apply would write: the old record's content cleaned as every AI text (W23)
    assert "京都<ins>  HelperSSECCA_TOOR_WOLLA</ins>." in proposals
    for c in HIDDEN_SAMPLE:
        if c not in "\u2066\u202e":  # the reason's marks
            assert f'<span class="mark">\u27e8U+{ord(c):04X}\u27e9</span>' not in proposals, f"U+{ord(c):04X}"
    assert f"Helper{marked}SSECCA_TOOR_WOLLA" in pages["write"]
    assert '<span class="mark">\u27e8U+200D\u27e9</span>' in pages["write"]
    assert f"Helper{marked}SSECCA_TOOR_WOLLA" in pages["file"] and "手書き" in pages["file"]
    assert f"Helper{marked}SSECCA_TOOR_WOLLA" in pages["file aria"]


def test_the_graph_frame_shows_a_module_name_with_its_hidden_characters_marked(tmp_path):
    pytest.importorskip("starlette")
    frame = _pages(_review_layer(tmp_path))["graph_frame"]
    data = re.search(r'<script type="application/json" id="graph-data">(.*?)</script>', frame, re.S)
    assert data is not None
    graph = json.loads(data.group(1))  # what the page script reads (JSON.parse)
    labels = [n.get("label") or "" for n in graph["nodes"]]
    assert any("Helper\u27e8U+202E\u27e9SSECCA_TOOR_WOLLA\u27e8U+E0041\u27e9" in x for x in labels), labels
    assert _raw_hidden(json.dumps(graph, ensure_ascii=False)) == []
    ids = {n["id"] for n in graph["nodes"]}
    assert all(link["source"] in ids and link["target"] in ids for link in graph["links"])
