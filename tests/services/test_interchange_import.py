"""``zonemark import`` of provider exports (issue 21): ChatGPT, Claude, Claude Code and plain text."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from export_makers import T0, ChatGPTTree, claude_code_lines, claude_conversation, dumps, write_zip
from zonemark import parse
from zonemark.cli.main import main
from zonemark.interchange import importing
from zonemark.interchange.exports import chatgpt, recognise
from zonemark.interchange.exports.model import DamagedExport

MEMORY = """# Viaggi e casa [external_memory]

[P1]
## TOPIC: Viaggi
[/P1]

[P4]
###### LOG: 2026-01-05 — Già nel file
Partenza per 東京 — perché sì.
[/P4]

[P1]
## TOPIC: 日記
[/P1]

[P4]
[/P4]
"""


def entry(date: str | None, title: str, body: str) -> str:
    head = f"###### LOG: {date} — {title}" if date else f"###### LOG: {title}"
    return f"{head}\n{body}\n[/LOG]"


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    path = tmp_path / "layer" / "viaggi[ext_memory].md"
    path.parent.mkdir()
    path.write_text(MEMORY, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    code = main(["import", *argv, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else {}, err


def chatgpt_export() -> list[dict[str, Any]]:
    """A tree with a regenerated answer, an edited user message, tool, system and image parts."""
    t = ChatGPTTree("Viaggio a Tokyo", "c-1")
    t.add("system", [""], content_type="text")
    user = t.add("user", ["Prepara il log, perché parto."])
    t.add("assistant", [entry("2026-01-10", "Scartata", "rigenerata")], keep=False)  # regenerated away
    t.add("assistant", ["Ecco:\n\n" + entry("2026-01-10", "Volo per 東京", "Posto 12A — finestrino.")], parent=user)
    edited = t.add("user", ["testo modificato"], keep=False)
    t.add("assistant", [entry("2026-01-11", "Ramo abbandonato", "mai")], parent=edited, keep=False)
    t.add("assistant", [entry("2026-01-12", "Chiamata a uno strumento", "no")], recipient="python")
    t.add("tool", [entry("2026-01-12", "Uscita di strumento", "no")])
    t.add("assistant", None, content_type="code", language="python", text=entry("2026-01-12", "Codice", "no"))
    t.add("assistant", [{"content_type": "image_asset_pointer", "asset_pointer": "file-service://x"},
                        entry(None, "Senza data", "Prende la data del messaggio.")], content_type="multimodal_text")
    untitled = ChatGPTTree(None, "c-2", time=T0 + 86_400 * 3)
    untitled.add("user", ["ciao"])
    untitled.add("assistant", [entry("2026-01-04", "日記の記録", "東京で雨。")])
    return [t.to_dict(), untitled.to_dict()]


def test_i1_chatgpt_only_the_kept_branch_and_only_assistant_text_is_read(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(dumps(chatgpt_export()), encoding="utf-8")
    code, report, err = run(capsys, str(export), "--into", str(memory), "--container", "Viaggi")
    assert code == 0, err
    first, second = report["conversations"]
    assert (first["title"], first["found"], first["wouldFile"]) == ("Viaggio a Tokyo", 2, 2)
    assert first["skipped"] >= 4  # the system/user turns, the tool call, the tool output, the code, the image
    assert (second["title"], second["id"], second["found"]) == ("", "c-2", 1)
    assert report["totals"]["found"] == 3 and report["dryRun"] and report["actor"] == "user"
    assert memory.read_text(encoding="utf-8") == MEMORY  # the dry run writes nothing


def test_i1_a_tree_with_a_loop_reads_each_node_once() -> None:
    t = ChatGPTTree("loop", "c-3")
    a = t.add("assistant", [entry("2026-01-10", "Uno", "x")])
    t.nodes["root"]["parent"] = a  # damaged: the root points back at its child
    conv = chatgpt.conversation(t.to_dict())
    assert len(conv.messages) == 1


def test_i2_the_format_is_recognised_from_the_content_not_the_name(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    (folder / "dati.bin").write_text(dumps(chatgpt_export()), encoding="utf-8")
    (folder / "conversations.json").write_text(dumps([claude_conversation(
        "k-1", "Progetto", [("human", entry("2026-02-01", "Dell'umano", "no")),
                            ("assistant", entry("2026-02-01", "Di Claude", "perché — sì"))])]), encoding="utf-8")
    (folder / "projects.json").write_text(dumps([{"uuid": "p-1", "name": "Casa", "docs": []}]), encoding="utf-8")
    (folder / "users.json").write_text(dumps([{"uuid": "u", "full_name": "Ada"}]), encoding="utf-8")
    (folder / "memories.json").write_text(dumps([{"conversations_memory": "…"}]), encoding="utf-8")
    (folder / "chat.html").write_text("<!DOCTYPE html><html>" + entry("2026-01-10", "Html", "no"), encoding="utf-8")
    (folder / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00LOG")
    code, report, err = run(capsys, str(folder), "--into", str(memory), "--container", "Viaggi")
    assert code == 0, err
    formats = {f["name"]: (f["status"], f["format"]) for f in report["files"]}
    assert formats["dati.bin"] == ("read", "chatgpt")
    assert formats["conversations.json"] == ("read", "claude")
    for sidecar in ("projects.json", "users.json", "memories.json", "chat.html", "photo.png"):
        assert formats[sidecar][0] == "skipped"
    assert report["totals"]["found"] == 4


def test_i3_a_split_chatgpt_zip_is_read_without_unpacking_and_applied_in_one_write(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    convs = chatgpt_export()
    z = write_zip(tmp_path / "export.zip", {
        "conversations-000.json": dumps(convs[:1]), "conversations-001.json": dumps(convs[1:]),
        "export_manifest.json": dumps({"files": ["conversations-000.json", "conversations-001.json"]}),
        "user.json": dumps({"id": "user-1"})})
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, report, err = run(capsys, str(z), "--into", str(memory), "--container", "Viaggi", "--apply")
    assert code == 0, err
    assert report["totals"]["filed"] == 3 and report["historyId"]
    text = memory.read_text(encoding="utf-8")
    assert "Volo per 東京" in text and "日記の記録" in text and "Scartata" not in text and "Ramo" not in text
    assert parse(text).ok
    after = sorted(p.name for p in tmp_path.rglob("*") if ".zonemark" not in p.parts)
    assert [n for n in after if n not in before] == []  # nothing unpacked beside the zip


def test_i4_importing_the_same_export_twice_files_nothing_new(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(dumps(chatgpt_export() + chatgpt_export()), encoding="utf-8")  # twice in one export too
    code, report, _ = run(capsys, str(export), "--into", str(memory), "--container", "Viaggi", "--apply")
    assert (code, report["totals"]["filed"], report["totals"]["duplicates"]) == (0, 3, 3)
    once = memory.read_text(encoding="utf-8")
    code, report, _ = run(capsys, str(export), "--into", str(memory), "--container", "Viaggi", "--apply")
    assert (code, report["totals"]["filed"], report["totals"]["duplicates"]) == (0, 0, 6)
    assert memory.read_text(encoding="utf-8") == once


def test_i5_entries_are_filed_in_chronological_order_with_the_message_date_when_they_have_none(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    late, early = ChatGPTTree("tardi", "c-late", time=T0 + 86_400 * 20), ChatGPTTree("presto", "c-early")
    late.add("assistant", [entry(None, "Secondo — 東京", "dopo")], at=T0 + 86_400 * 20)
    early.add("assistant", [entry(None, "Primo, perché prima", "prima")], at=T0 + 86_400 * 2)
    export = tmp_path / "conversations.json"
    export.write_text(dumps([late.to_dict(), early.to_dict()]), encoding="utf-8")
    code, _, err = run(capsys, str(export), "--into", str(memory), "--container", "日記", "--apply")
    assert code == 0, err
    text = memory.read_text(encoding="utf-8")
    first = text.index("###### LOG: 2026-01-03 — Primo, perché prima")
    assert first < text.index("###### LOG: 2026-01-21 — Secondo — 東京")


def test_i6_a_claude_export_reads_the_assistant_blocks_only(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tool = {"uuid": "t", "sender": "assistant", "created_at": "2026-02-02T10:00:00Z", "text": "",
            "content": [{"type": "tool_use", "name": "search", "input": {"q": entry("2026-02-02", "Tool", "no")}},
                        {"type": "text", "text": entry("2026-02-02", "Dopo lo strumento", "東京 — ok")}],
            "attachments": [{"file_name": "a.txt", "extracted_content": entry("2026-02-02", "Allegato", "no")}]}
    export = tmp_path / "conversations.json"
    export.write_text(dumps([
        claude_conversation("k-1", "Con progetto", [("human", entry("2026-02-01", "Umano", "no")),
                                                    ("assistant", entry("2026-02-01", "Claude, perché", "sì"))],
                            extra=[tool]),
        claude_conversation("k-2", "", [("assistant", entry("2026-02-03", "Solo testo", "senza blocchi"))],
                            blocks=False)]), encoding="utf-8")
    code, report, err = run(capsys, str(export), "--into", str(memory), "--container", "Viaggi", "--apply")
    assert code == 0, err
    text = memory.read_text(encoding="utf-8")
    assert all(t in text for t in ("Claude, perché", "Dopo lo strumento", "Solo testo"))
    assert all(t not in text for t in ("Umano", "— Tool", "Allegato"))
    assert report["conversations"][0]["skipped"] == 3  # the human turn, the tool call, the attachment


def test_i7_claude_code_transcripts_read_text_blocks_not_tool_calls(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "projects" / "-home-u-p"
    folder.mkdir(parents=True)
    (folder / "s1.jsonl").write_text(claude_code_lines("s1", [
        ("user", "annota, perché serve"),
        ("assistant", [{"type": "text", "text": entry("2026-03-01", "Sessione 東京", "fatto — bene")},
                       {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": entry("2026-03-01", "Risultato", "no")}]),
    ], summary="Sessione di prova"), encoding="utf-8")
    code, report, err = run(capsys, str(tmp_path / "projects"), "--into", str(memory), "--container", "Viaggi")
    assert code == 0, err
    (conv,) = report["conversations"]
    assert (conv["format"], conv["id"], conv["title"], conv["found"], conv["wouldFile"]) == \
        ("claude_code", "s1", "Sessione di prova", 1, 1)


def test_i8_a_damaged_file_is_named_and_the_rest_still_imports(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "export"
    folder.mkdir()
    good = dumps(chatgpt_export())
    (folder / "conversations-000.json").write_text(good[: len(good) - 40], encoding="utf-8")  # cut short
    (folder / "conversations.json").write_text(dumps([claude_conversation(
        "k-1", "Intera", [("assistant", entry("2026-02-01", "Sopravvive — 東京", "perché sì"))])]), encoding="utf-8")
    (folder / "s.jsonl").write_text(claude_code_lines("s", [("assistant", "ok")]) + "{not json\n",
                                    encoding="utf-8")
    code = main(["import", str(folder), "--into", str(memory), "--container", "Viaggi", "--apply"])
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in out + err
    assert "damaged: conversations-000.json: not valid JSON" in out
    assert "damaged: s.jsonl: line 2 is not JSON" in out
    assert "Sopravvive — 東京" in memory.read_text(encoding="utf-8")


def test_i9_a_plain_markdown_copy_is_read_as_ingest_reads_it(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chat = tmp_path / "copia.md"
    chat.write_text("Risposta:\n\nLOG: 2026-04-01 — Dallo schermo, 東京\nperché copiato\n", encoding="utf-8")
    code, report, err = run(capsys, str(chat), "--into", str(memory), "--container", "Viaggi")
    assert code == 0, err
    assert report["files"] == [{"name": "copia.md", "status": "read", "format": "plain", "reason": None}]
    assert report["totals"]["wouldFile"] == 1


def test_i11_a_message_over_the_chat_limit_is_refused_alone(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importing, "MAX_CHAT_CHARS", 500)
    t = ChatGPTTree("lungo", "c-1")
    t.add("assistant", [entry("2026-01-10", "Troppo lungo", "x" * 600)])
    t.add("assistant", [entry("2026-01-11", "Breve — 東京", "perché breve")])
    export = tmp_path / "conversations.json"
    export.write_text(dumps([t.to_dict()]), encoding="utf-8")
    code, report, _ = run(capsys, str(export), "--into", str(memory), "--container", "Viaggi", "--apply")
    (conv,) = report["conversations"]
    assert code == 1 and conv["filed"] == 1
    assert [r["code"] for r in conv["refused"]] == ["MESSAGE_TOO_LARGE"]
    assert "MAX_CHAT_CHARS" in conv["refused"][0]["reason"]


def test_i10_entries_the_writer_refuses_are_listed_with_their_code(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = ChatGPTTree("rifiuti", "c-1")
    t.add("assistant", [entry("2026-13-45", "Data impossibile", "perché") + "\n\n"
                        + entry("2026-01-11", "Buona — 東京", "ok")])
    export = tmp_path / "conversations.json"
    export.write_text(dumps([t.to_dict()]), encoding="utf-8")
    code, report, _ = run(capsys, str(export), "--into", str(memory), "--container", "Viaggi")
    (conv,) = report["conversations"]
    assert code == 1 and conv["wouldFile"] == 1
    assert [(r["title"], r["code"]) for r in conv["refused"]] == [("Data impossibile", "BAD_DATE")]


def test_i14_since_and_conversation_pick_what_is_read(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(dumps(chatgpt_export()), encoding="utf-8")
    _, report, _ = run(capsys, str(export), "--into", str(memory), "--container", "Viaggi", "--since", "2026-01-02")
    assert report["totals"]["found"] == 1  # only the untitled conversation's message (2026-01-04) is that late
    _, report, _ = run(capsys, str(export), "--into", str(memory), "--container", "Viaggi",
                       "--conversation", "viaggio a tokyo")
    assert [c["id"] for c in report["conversations"]] == ["c-1"]
    code = main(["import", str(export), "--into", str(memory), "--container", "Viaggi", "--since", "ieri"])
    assert code == 2 and "--since" in capsys.readouterr().err


def test_i12_an_export_over_the_entry_limit_is_refused_whole(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importing, "MAX_IMPORT_ENTRIES", 2)
    export = tmp_path / "conversations.json"
    export.write_text(dumps(chatgpt_export()), encoding="utf-8")
    code = main(["import", str(export), "--into", str(memory), "--container", "Viaggi", "--apply"])
    err = capsys.readouterr().err
    assert code == 2 and "MAX_IMPORT_ENTRIES" in err and len(err.strip().splitlines()) == 2  # the note, the refusal
    assert memory.read_text(encoding="utf-8") == MEMORY


def test_i15_the_reader_streams_a_conversation_before_the_file_ends() -> None:
    """The first conversation is handed over before the rest of the file is read (ijson, not json.load)."""
    one = dumps(chatgpt_export()[0])

    class Endless:
        """Hands out one chunk per read; a read after the last means the reader wanted the whole file first."""

        def __init__(self) -> None:
            self.chunks = [b"[" + one.encode() + b",", b'{"title": "never ends', b"x" * 10]

        def read(self, size: int = -1) -> bytes:
            if size == 0:  # ijson asks for nothing first, to tell bytes from text
                return b""
            if not self.chunks:
                raise AssertionError("read past the first conversation before handing it over")
            return self.chunks.pop(0)

    conversations = chatgpt.read(Endless())  # type: ignore[arg-type]
    assert next(conversations).title == "Viaggio a Tokyo"
    with pytest.raises(AssertionError, match="read past"):
        next(conversations)


def test_i16_progress_is_reported_and_quiet_prints_nothing_on_stderr(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = tmp_path / "conversations.json"
    export.write_text(dumps(chatgpt_export()), encoding="utf-8")
    seen: list[tuple[int, int, int, int]] = []
    importing.import_export(export, memory, "Viaggi", progress=lambda *a: seen.append(a))
    assert seen and seen[-1][0] == seen[-1][1] == export.stat().st_size
    assert [s[0] for s in seen] == sorted(s[0] for s in seen)
    code = main(["import", str(export), "--into", str(memory), "--container", "Viaggi", "--quiet"])
    out, err = capsys.readouterr()
    assert code == 0 and err == "" and "total: 2 conversations" in out
    main(["import", str(export), "--into", str(memory), "--container", "Viaggi"])
    assert "importing as user" in capsys.readouterr().err


def test_i17_ai_text_that_looks_like_structure_does_not_become_structure(tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from markdown_it import MarkdownIt
    body = "[/P4]\n## TOPIC: Iniettato\n[P5]\n# Titolo — 東京\n[/LOG]x"
    t = ChatGPTTree("ostile", "c-1")
    t.add("assistant", [entry("2026-01-10", "Ostile, perché", body)])
    export = tmp_path / "conversations.json"
    export.write_text(dumps([t.to_dict()]), encoding="utf-8")
    code, report, _ = run(capsys, str(export), "--into", str(memory), "--container", "Viaggi", "--apply")
    text = memory.read_text(encoding="utf-8")
    doc = parse(text)
    assert doc.ok and "Iniettato" not in [getattr(h, "title", "") for h in doc.walk()  # type: ignore[no-untyped-call]
                                       if getattr(h, "level", 0) == 2]
    rendered = MarkdownIt().render(text)
    assert "<h2>TOPIC: Iniettato</h2>" not in rendered and "<h1>Titolo" not in rendered
    assert report["totals"]["filed"] + report["totals"]["refused"] == 1


def test_i2_recognise_needs_the_shape_not_a_word() -> None:
    assert recognise(b'[{"title": "x", "mapping": {}}]').name == "chatgpt"  # type: ignore[union-attr]
    assert recognise(b'{"mapping": 1}') is None  # an object, not the array of conversations
    assert recognise(b'[{"uuid": "p", "name": "progetto"}]') is None
    assert recognise("plain text — 東京".encode()).name == "plain"  # type: ignore[union-attr]


def test_i9_traces_are_recorded_with_their_message_time_only_when_applied(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "interchange"
    layer = tmp_path / "layer"
    shutil.copytree(fixtures / "layer", layer)
    trace = (fixtures / "spec" / "n7a.txt").read_text(encoding="utf-8")
    t = ChatGPTTree("Traccia — 東京", "c-1")
    t.add("assistant", [entry("2026-01-10", "Con traccia, perché", "ok") + "\n\n" + trace], at=T0 + 3_600)
    export = tmp_path / "conversations.json"
    export.write_text(dumps([t.to_dict()]), encoding="utf-8")
    argv = [str(export), "--into", str(layer / "daily[ext_memory].md"), "--container", "Viaggi"]
    code, report, err = run(capsys, *argv)
    assert code == 0, err
    assert report["conversations"][0]["traces"] == 1 and not (layer / ".zonemark" / "traces").exists()
    code, report, err = run(capsys, *argv, "--apply")
    assert code == 0 and report["totals"]["tracesRecorded"] == 1, err
    (record,) = (layer / ".zonemark" / "traces").iterdir()
    assert record.name.startswith("20260101T010000Z-")
    assert json.loads(record.read_text(encoding="utf-8"))["recordedAt"] == "2026-01-01T01:00:00Z"


def test_i15_memory_is_bounded_by_one_conversation_not_the_export(tmp_path: Path, memory: Path) -> None:
    """40 conversations of 100 KB of assistant text: what the import holds at its peak is far below the 4 MB."""
    import tracemalloc
    convs = []
    for n in range(40):
        t = ChatGPTTree(f"lunga {n}", f"c-{n}", time=T0 + n)
        t.add("assistant", [f"perché 東京 — {n} " + "parole " * 15_000])
        convs.append(t.to_dict())
    export = tmp_path / "conversations.json"
    export.write_text(dumps(convs), encoding="utf-8")
    tracemalloc.start()
    try:
        report = importing.import_export(export, memory, "Viaggi")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(report.conversations) == 40 and export.stat().st_size > 4_000_000
    assert peak < 1_500_000


def test_i13_traces_over_the_message_limit_are_counted_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil
    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "interchange"
    layer = tmp_path / "layer"
    shutil.copytree(fixtures / "layer", layer)
    trace = (fixtures / "spec" / "n7a.txt").read_text(encoding="utf-8")
    monkeypatch.setattr(importing, "MAX_TRACE_MESSAGES", 1)
    t = ChatGPTTree("Tracce — 東京, perché", "c-1")
    t.add("assistant", [trace])
    t.add("assistant", ["di nuovo\n" + trace])
    export = tmp_path / "conversations.json"
    export.write_text(dumps([t.to_dict()]), encoding="utf-8")
    code, report, err = run(capsys, str(export), "--into", str(layer / "daily[ext_memory].md"), "--container",
                            "Viaggi", "--apply")
    assert code == 0, err
    assert (report["totals"]["traces"], report["totals"]["tracesRecorded"], report["totals"]["tracesOverLimit"]) == \
        (1, 1, 1)


def test_i18_a_file_nested_too_deep_is_damaged_in_one_line_before_the_parser_builds_it(
        tmp_path: Path, memory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zonemark.interchange.exports.depth import MAX_JSON_DEPTH, DepthGuard
    folder = tmp_path / "export"
    folder.mkdir()
    deep = 100_000
    (folder / "conversations.json").write_bytes(b'[{"mapping": ' + b"[" * deep + b"]" * deep + b"}]")
    (folder / "s.jsonl").write_bytes(b'{"type": "assistant", "sessionId": "s", "message": ' + b"[" * deep
                                     + b"]" * deep + b"}\n")
    (folder / "ok.json").write_text(dumps(chatgpt_export()), encoding="utf-8")
    code = main(["import", str(folder), "--into", str(memory), "--container", "Viaggi"])
    out = capsys.readouterr().out
    assert code == 1
    assert f"damaged: conversations.json: nested deeper than {MAX_JSON_DEPTH}" in out
    assert "damaged: s.jsonl: line 1 is nested too deep" in out
    assert "3 entries found" in out
    # the guard reads no further than the chunk that goes over the limit, whatever the file's size
    stream = io.BytesIO(b"[" * (10 * deep))
    guard = DepthGuard(stream)
    with pytest.raises(DamagedExport):
        while guard.read(4096):
            pass
    assert stream.tell() == 4096


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64])
def test_i18_brackets_inside_strings_do_not_count(chunk: int) -> None:
    from zonemark.interchange.exports.depth import DepthGuard
    value = {"a[[[": ["]]]}", "x\\\"[[", "\\\\", {"東京 — perché {{{": [[["\"[", "\\"]]]}]}
    data = json.dumps(value, ensure_ascii=False).encode()
    stream = io.BytesIO(data)
    guard = DepthGuard(stream, limit=6)
    while guard.read(chunk):
        pass
    assert guard.depth == 0
    with pytest.raises(DamagedExport):
        shallow = DepthGuard(io.BytesIO(data), limit=5)
        while shallow.read(chunk):
            pass


def test_i19_the_memory_file_inside_the_export_folder_is_not_read(tmp_path: Path, memory: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A layer folder given as the export: the file imported into is skipped, its own entries are not re-read."""
    (memory.parent / "copia.md").write_text(entry("2026-04-01", "Copia — 東京, perché", "testo"), encoding="utf-8")
    code, report, err = run(capsys, str(memory.parent), "--into", str(memory), "--container", "Viaggi")
    assert code == 0, err
    files = {f["name"]: (f["status"], f["reason"]) for f in report["files"]}
    assert files[memory.name] == ("skipped", "the memory file imported into")
    assert (report["totals"]["found"], report["totals"]["duplicates"]) == (1, 0)


def test_a_damaged_file_is_one_line_even_when_the_json_parser_draws_where_it_failed(tmp_path: Path) -> None:
    (tmp_path / "rotto — 東京.json").write_text('[{"mapping": {', encoding="utf-8")
    memory = tmp_path / "mem[ext_memory].md"
    memory.write_text("# Memoria — perché [external_memory]\n\n[P1]\n## TOPIC: Viaggi\n[/P1]\n\n[P4]\n[/P4]\n",
                      encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "zonemark", "import", str(tmp_path / "rotto — 東京.json"),
                           "--into", str(memory), "--container", "Viaggi", "--quiet"],
                          capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert proc.returncode == 1
    damaged = [line for line in proc.stdout.splitlines() if line.startswith("damaged:")]
    assert len(damaged) == 1 and "rotto — 東京.json" in damaged[0] and "not valid JSON" in damaged[0]
    assert all(line.startswith(("damaged:", "total:")) for line in proc.stdout.splitlines()), proc.stdout


def test_a_zip_member_that_unpacks_a_thousand_times_its_size_is_refused_unread(tmp_path: Path) -> None:
    import zipfile
    bomb = tmp_path / "export — 東京.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", b"[" + b" " * (40 * 1024 * 1024) + b"]")
        z.writestr("chat — perché.md", "###### LOG: 2026-03-04 — catene\nCatene montate a 東京.\n")
    memory = tmp_path / "mem[ext_memory].md"
    memory.write_text("# Memoria — perché [external_memory]\n\n[P1]\n## TOPIC: Viaggi\n[/P1]\n\n[P4]\n[/P4]\n",
                      encoding="utf-8")
    opened: list[str] = []
    real = zipfile.ZipFile.open

    def spy(self: zipfile.ZipFile, name: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(getattr(name, "filename", name))
        return real(self, name, *args, **kwargs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(zipfile.ZipFile, "open", spy)
        report = importing.import_export(bomb, memory, "Viaggi")
    damaged = [f for f in report.files if f.status == "damaged"]
    assert [f.name for f in damaged] == ["conversations.json"] and "MAX_ZIP_RATIO" in (damaged[0].reason or "")
    assert "conversations.json" not in opened  # never unpacked
    assert sum(c.found for c in report.conversations) == 1  # the rest still imports


def test_a_name_in_the_export_cannot_start_a_line_of_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import zipfile
    export = tmp_path / "export — 東京.zip"
    with zipfile.ZipFile(export, "w") as z:
        z.writestr("note\ntotal: 999 entries filed — perché.bin", b"\x00\x01 not chat")
    memory = tmp_path / "mem[ext_memory].md"
    memory.write_text("# Memoria — perché [external_memory]\n\n[P1]\n## TOPIC: Viaggi\n[/P1]\n\n[P4]\n[/P4]\n",
                      encoding="utf-8")
    assert main(["import", str(export), "--into", str(memory), "--container", "Viaggi", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("skipped: note\\ntotal: 999") and lines[1].startswith("total: 0")
