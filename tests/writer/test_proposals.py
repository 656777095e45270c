"""Proposals (§5.2 [P3], §7.3.1): made against the right bytes, applied from the declared zone only.

Issue 7 items 1-3 and 10: a proposal replaces the inner lines of exactly one zone; ``apply``
recomputes that change from the declared zone and the proposed content (the stored diff is for
reading only) and refuses a proposal whose zone changed since it was made.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from zonemark import parse_file
from zonemark.writer import RefusedWrite, Store, apply_proposal, propose, reject_proposal
from zonemark.writer import snapshot as snapshot_module
from zonemark.writer.proposals import list_proposals

ROOT = Path(__file__).resolve().parents[2]
CARS = ROOT / "examples" / "layer" / "cars[ext_memory].md"


@pytest.fixture
def store():
    snapshot_module.forget()
    return Store(fsync=False)


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def test_propose_after_an_em_dash_replaces_exactly_the_zone(tmp_path, store):
    """Item 1: the cars example's log headers hold '—'; zone 16's inner lines are replaced, nothing else."""
    cars = tmp_path / "cars[ext_memory].md"
    shutil.copy(CARS, cars)
    before = lines_of(cars)
    assert before[15] == "[P4]" and before[18] == "[/P4]"
    prop = propose(cars, 16, "fixed text\n", reason="typo", store=store)
    assert prop.would_add == ()
    assert "-###### LOG: 2026-09-06 — winter set mounted" in prop.diff and "+fixed text" in prop.diff
    assert "+##" not in prop.diff and "\n+]" not in prop.diff
    apply_proposal(prop.path, actor="user", store=store)
    assert lines_of(cars) == before[:16] + ["fixed text"] + before[18:]
    assert not parse_file(cars).errors


JAPANESE = """# 記憶 [external_memory]

[P1]
## TOPIC: 日本語のメモ
私は東京に住んでいます。これはアイデンティティの文です — 変えてはいけません。
[/P1]

[P3]
###### LOG: 2026-01-02 — 古い記録
長期記憶の内容。
[/P3]

[P1]
## TOPIC: Italiano
Perché sì: è così.
[/P1]

[P3]
###### LOG: 2026-01-03 — città
Un ricordo di lunga durata.
[/P3]
"""


def test_propose_after_japanese_text_targets_the_p3_zone_not_the_p1_sentence(tmp_path, store):
    """Item 1: with Japanese text before a [P3] zone the diff rewrote the middle of a [P1] sentence."""
    f = tmp_path / "mem.md"
    f.write_text(JAPANESE, encoding="utf-8")
    before = lines_of(f)
    new = "###### LOG: 2026-01-02 — 新しい記録\n内容を更新しました。\n"
    prop = propose(f, 8, new, reason="更新", store=store)
    assert prop.zone_level == 3 and prop.zone_line == 8
    assert "-長期記憶の内容。" in prop.diff and "-私は東京" not in prop.diff
    apply_proposal(prop.path, actor="user", store=store)
    after = lines_of(f)
    assert after[:8] == before[:8]  # the [P1] identity sentence untouched
    assert after[8:10] == ["###### LOG: 2026-01-02 — 新しい記録", "内容を更新しました。"]
    assert after[10:] == before[10:]


def test_apply_ignores_a_forged_diff_and_applies_only_the_declared_zone(tmp_path, store):
    """Item 2: a proposal whose declared zone is [P3] but whose diff changes a '## TOPIC:' line."""
    f = tmp_path / "mem.md"
    f.write_text(JAPANESE, encoding="utf-8")
    prop = propose(f, 19, "###### LOG: 2026-01-03 — città\nNuovo testo, più lungo.\n", reason="r", store=store)
    record = json.loads(prop.path.read_text(encoding="utf-8"))
    record["diff"] += "\n@@ -14,1 +14,1 @@\n-## TOPIC: Italiano\n+## TOPIC: Hijacked\n"
    prop.path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")
    apply_proposal(prop.path, actor="user", store=store)
    text = f.read_text(encoding="utf-8")
    assert "## TOPIC: Italiano" in text and "Hijacked" not in text
    assert "###### LOG: 2026-01-03 — città\nNuovo testo, più lungo.\n[/P3]" in text


def test_apply_refuses_a_stale_proposal_with_a_message_that_says_so(tmp_path, store):
    """Item 2: the zone changed since the proposal was made."""
    f = tmp_path / "mem.md"
    f.write_text(JAPANESE, encoding="utf-8")
    prop = propose(f, 8, "###### LOG: 2026-01-02 — x\ny\n", reason="r", store=store)
    f.write_text(JAPANESE.replace("長期記憶の内容。", "ユーザーが書き換えた。"), encoding="utf-8")
    old = f.read_bytes()
    with pytest.raises(RefusedWrite, match=r"stale: the \[P3\] zone at line 8 changed since the proposal was made"):
        apply_proposal(prop.path, actor="user", store=store)
    assert f.read_bytes() == old
    assert [p.stale for p in list_proposals(f)] == [True]


def test_apply_finds_the_zone_when_lines_before_it_moved(tmp_path, store):
    f = tmp_path / "mem.md"
    f.write_text(JAPANESE, encoding="utf-8")
    prop = propose(f, 19, "###### LOG: 2026-01-03 — città\nnuovo\n", reason="r", store=store)
    f.write_text(JAPANESE.replace("Perché sì: è così.", "Perché sì: è così.\nUna riga in più — dell'utente."),
                 encoding="utf-8")
    assert [p.stale for p in list_proposals(f)] == [False]
    apply_proposal(prop.path, actor="user", store=store)
    assert "Una riga in più — dell'utente.\n[/P1]\n\n[P3]\n###### LOG: 2026-01-03 — città\nnuovo\n[/P3]" in \
        f.read_text(encoding="utf-8")


def test_a_tampered_declared_zone_or_content_is_refused(tmp_path, store):
    f = tmp_path / "mem.md"
    f.write_text(JAPANESE, encoding="utf-8")
    prop = propose(f, 8, "###### LOG: 2026-01-02 — x\ny\n", reason="r", store=store)
    record = json.loads(prop.path.read_text(encoding="utf-8"))
    old = f.read_bytes()
    for key, value in (("zone", {"line": 3, "level": 1}), ("new_content", "[/P3]\n[P1]\n## TOPIC: EVIL\n"),
                       ("new_content", 7), ("zone", "8")):
        forged = dict(record, **{key: value})
        prop.path.write_text(json.dumps(forged, ensure_ascii=False), encoding="utf-8")
        with pytest.raises((RefusedWrite, ValueError)):
            apply_proposal(prop.path, actor="user", store=store)
        assert f.read_bytes() == old


PLANS = """# Diario [external_memory]

[P1]
## TOPIC: Plans
[/P1]

[P3]
###### LOG: 2026-02-01 — viaggio
Andare a Kyōto — forse in primavera.
[/P3]

[P1]
## TOPIC: Empty
[/P1]

[P4]
[/P4]
"""


def test_propose_container_targets_its_paired_p3_zone(tmp_path, store):
    """Item 3: '--container Plans' is the [P3] zone that pairs with Plans, never its declaration's [P1]."""
    f = tmp_path / "d.md"
    f.write_text(PLANS, encoding="utf-8")
    prop = propose(f, "Plans", "###### LOG: 2026-02-01 — viaggio\nKyōto in autunno.\n", reason="r", store=store)
    assert prop.zone_line == 7 and prop.zone_level == 3
    assert "-## TOPIC: Plans" not in prop.diff
    apply_proposal(prop.path, actor="user", store=store)
    text = f.read_text(encoding="utf-8")
    assert text == PLANS.replace("Andare a Kyōto — forse in primavera.", "Kyōto in autunno.")


def test_propose_container_without_a_p3_zone_is_refused(tmp_path, store):
    f = tmp_path / "d.md"
    f.write_text(PLANS, encoding="utf-8")
    with pytest.raises(RefusedWrite, match=r"no \[P3\] zone pairs with 'TOPIC: Empty'"):
        propose(f, "Empty", "x\n", reason="r", store=store)
    assert not (tmp_path / ".zonemark").exists()


def test_propose_container_in_a_reminder_never_replaces_the_p1_zone(tmp_path, store):
    f = tmp_path / "r.md"
    f.write_text("# R [reminder]\n\n[P1]\n## RULES:\n* R1: be kind\n\n## NUCLEUS 1: CORE\n\n"
                 "## MODULE 042: CURIOSITY [NUCLEI: 1]\n### STATE\nactive\n[/P1]\n\n[P4]\n[/P4]\n",
                 encoding="utf-8")
    with pytest.raises(RefusedWrite, match=r"no \[P3\] zone pairs with"):
        propose(f, "042", "nothing\n", reason="r", store=store)


def test_a_proposal_may_not_open_or_close_zones(tmp_path, store):
    f = tmp_path / "d.md"
    f.write_text(PLANS, encoding="utf-8")
    with pytest.raises(RefusedWrite, match="zone tag"):
        propose(f, 7, "x\n[/P3]\n[P1]\n## TOPIC: EVIL\n", reason="r", store=store)


# -- item 10: the user never reads JSON ---------------------------------------------------------

def run(capsys, argv):
    from zonemark.cli.main import main
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_proposals_lists_and_shows_pending_proposals(tmp_path, store, capsys, monkeypatch):
    layer = tmp_path / "layer"
    (layer / "sub").mkdir(parents=True)
    f = layer / "sub" / "d.md"
    f.write_text(PLANS, encoding="utf-8")
    g = layer / "mem.md"
    g.write_text(JAPANESE, encoding="utf-8")
    p1 = propose(f, "Plans", "###### LOG: 2026-02-01 — viaggio\nKyōto in autunno.\n", reason="autunno — 秋",
                 store=store)
    p2 = propose(g, 8, "###### LOG: 2026-01-02 — x\ny\n", reason="riscrivere", store=store)
    code, out, err = run(capsys, ["proposals", layer])
    assert code == 0
    lines = out.strip().split("\n")
    assert lines[0].split() == ["ID", "FILE", "ZONE", "AGE", "STATE", "REASON"]
    rows = {ln.split()[0]: ln for ln in lines[1:]}
    assert set(rows) == {p1.id, p2.id}
    assert "sub/d.md" in rows[p1.id] and "[P3] line 7" in rows[p1.id] and " ok " in rows[p1.id]
    assert rows[p1.id].endswith("autunno — 秋")
    assert "mem.md" in rows[p2.id] and rows[p2.id].endswith("riscrivere")
    # one file only
    code, out, _ = run(capsys, ["proposals", g])
    assert [ln.split()[0] for ln in out.strip().split("\n")[1:]] == [p2.id]
    # stale after the user changes the zone
    g.write_text(JAPANESE.replace("長期記憶の内容。", "変わった。"), encoding="utf-8")
    code, out, _ = run(capsys, ["proposals", layer])
    assert "STALE" in next(ln for ln in out.split("\n") if ln.startswith(p2.id))
    # --show: a readable diff of the file as it is now, by id or by a unique prefix
    monkeypatch.chdir(layer)
    code, out, _ = run(capsys, ["proposals", "--show", p1.id])
    assert code == 0 and out.startswith(f"proposal {p1.id} (open)\n")
    assert "reason:   autunno — 秋" in out and "-Andare a Kyōto — forse in primavera." in out
    assert "+Kyōto in autunno." in out and "{" not in out
    code, out, _ = run(capsys, ["proposals", "--show", p2.id])
    assert "STALE" in out
    code, _, err = run(capsys, ["proposals", "--show", "nope"])
    assert code == 2 and "no proposal 'nope'" in err
    # apply by id from the layer folder, then it is no longer pending
    code, out, err = run(capsys, ["apply", p1.id, "--as", "user"])
    assert code == 0, err
    code, out, _ = run(capsys, ["proposals", layer])
    assert p1.id not in out


def test_proposals_of_a_folder_without_any(tmp_path, capsys):
    (tmp_path / "a.md").write_text(PLANS, encoding="utf-8")
    code, out, _ = run(capsys, ["proposals", tmp_path])
    assert code == 0 and out.strip() == f"{tmp_path}: no pending proposals"


def test_a_proposal_keeps_a_crlf_file_crlf(tmp_path, store):
    f = tmp_path / "crlf.md"
    f.write_bytes(PLANS.replace("\n", "\r\n").encode("utf-8"))
    prop = propose(f, "Plans", "###### LOG: 2026-02-01 — viaggio\nKyōto in autunno.\n", reason="r", store=store)
    apply_proposal(prop.path, actor="user", store=store)
    assert f.read_bytes() == PLANS.replace("Andare a Kyōto — forse in primavera.", "Kyōto in autunno.") \
        .replace("\n", "\r\n").encode("utf-8")


def test_show_of_a_crlf_file_shows_its_lines_not_their_carriage_returns(tmp_path, store):
    from zonemark.writer import show_proposal
    f = tmp_path / "crlf.md"
    f.write_bytes(PLANS.replace("\n", "\r\n").encode("utf-8"))
    prop = propose(f, "Plans", "###### LOG: 2026-02-01 — viaggio\nKyōto in autunno — 秋.\n", reason="r", store=store)
    shown = show_proposal(prop)
    assert "\r" not in shown and "\\x0D" not in shown
    assert "+Kyōto in autunno — 秋." in shown.split("\n") and "-Andare a Kyōto — forse in primavera." in shown.split("\n")


def test_reject_marks_a_proposal_rejected_and_never_touches_the_file(tmp_path, store, capsys, monkeypatch):
    f = tmp_path / "d.md"
    f.write_text(PLANS, encoding="utf-8")
    before = f.read_bytes()
    p = propose(f, "Plans", "###### LOG: 2026-02-01 — viaggio\nKyōto in autunno — 秋.\n", reason="autunno",
                store=store)
    with pytest.raises(RefusedWrite, match="only the user may reject"):
        reject_proposal(p.path, actor="ai")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, ["reject", p.id])  # the CLI acts as 'ai' unless --as user
    assert code == 1 and "only the user" in err and err.count("\n") == 1
    code, out, err = run(capsys, ["reject", p.id, "--as", "user", "--reason", "non ora — 今じゃない"])
    assert code == 0, err
    assert f.read_bytes() == before
    record = json.loads(p.path.read_text(encoding="utf-8"))
    assert record["status"] == "rejected" and record["rejection_reason"] == "non ora — 今じゃない"
    assert list_proposals(tmp_path) == []
    with pytest.raises(RefusedWrite, match="already rejected"):
        apply_proposal(p.path, actor="user", store=store)
    code, _, err = run(capsys, ["reject", p.id, "--as", "user"])
    assert code == 1 and "already rejected" in err
    code, _, err = run(capsys, ["reject", str(tmp_path), "--as", "user"])
    assert code == 2 and "is a folder" in err
    assert f.read_bytes() == before


def test_a_tampered_proposal_file_is_set_aside_and_never_breaks_the_listing(tmp_path, store, capsys, monkeypatch):
    """A proposal file edited by hand (or by an agent with file access) is not a valid proposal: `proposals`
    lists the others, `--show` and `apply` say so in one line, and no field of the wrong type (a NUL in the
    file name, a list for the status, a number for what it would add, an id that is not its file name)
    reaches a traceback or the screen."""
    f = tmp_path / "mem.md"
    f.write_text(JAPANESE, encoding="utf-8")
    g = tmp_path / "d.md"
    g.write_text(PLANS, encoding="utf-8")
    bad = propose(f, 8, "###### LOG: 2026-01-02 — x\nriga — 行\n", reason="r", store=store)
    good = propose(g, "Plans", "###### LOG: 2026-02-01 — viaggio\nKyōto — 京都.\n", reason="autunno",
                   store=store)
    record = json.loads(bad.path.read_text(encoding="utf-8"))
    before = f.read_bytes()
    monkeypatch.chdir(tmp_path)
    for key, value in (("file", "\u0000"), ("file", "mem.md\u0000x"), ("would_add", 5), ("status", ["x"]),
                       ("reason", {"a": 1}), ("id", "../../x"), ("id", good.id), ("created", 5),
                       ("proposed_by", None), ("diff", 3), ("status", "maybe")):
        bad.path.write_text(json.dumps(dict(record, **{key: value}), ensure_ascii=False), encoding="utf-8")
        what = (key, value)
        assert [p.id for p in list_proposals(tmp_path)] == [good.id], what
        code, out, err = run(capsys, ["proposals", str(tmp_path)])
        assert code == 0 and good.id in out and "autunno" in out, (what, err)
        code, out, err = run(capsys, ["proposals", "--show", bad.id])
        assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, (what, err)
        code, out, err = run(capsys, ["apply", str(bad.path), "--as", "user"])
        assert code == 2 and err.count("\n") == 1 and "not a valid zonemark proposal" in err, (what, err)
        assert f.read_bytes() == before, what


SAME_SHAPE = """# Viaggi — 旅 [external_memory]

[P1]
## TOPIC: Roma
[/P1]

[P4]
[/P4]

[P1]
## TOPIC: Kyōto — 京都
[/P1]

[P4]
[/P4]

[P1]
## TOPIC: Tokyo — 東京
[/P1]

[P4]
[/P4]
"""


def test_apply_never_lands_in_another_container_whose_zone_looks_the_same(tmp_path, store):
    """Containers made from one template have zones with the same bytes. The user deletes the topic
    before the proposal's: the next topic's zone now sits at the recorded line with the recorded hash.
    The proposal still goes to its own container's zone (found where it moved), never to that one."""
    f = tmp_path / "viaggi.md"
    f.write_text(SAME_SHAPE, encoding="utf-8")
    prop = propose(f, 14, "###### LOG: 2026-04-01 — tempio\nKinkaku-ji — 金閣寺.\n", reason="r", store=store)
    assert prop.zone_line == 14
    f.write_text(SAME_SHAPE.replace("[P1]\n## TOPIC: Roma\n[/P1]\n\n[P4]\n[/P4]\n\n", ""), encoding="utf-8")
    assert lines_of(f)[13] == "[P4]"  # Tokyo's zone is now where Kyōto's was
    apply_proposal(prop.path, actor="user", store=store)
    text = f.read_text(encoding="utf-8")
    assert "## TOPIC: Kyōto — 京都\n[/P1]\n\n[P4]\n###### LOG: 2026-04-01 — tempio\nKinkaku-ji — 金閣寺.\n[/P4]" in text
    assert text.endswith("## TOPIC: Tokyo — 東京\n[/P1]\n\n[P4]\n[/P4]\n")


def test_a_proposal_whose_container_is_gone_is_stale_even_if_a_zone_looks_the_same(tmp_path, store):
    f = tmp_path / "viaggi.md"
    f.write_text(SAME_SHAPE, encoding="utf-8")
    prop = propose(f, 14, "###### LOG: 2026-04-01 — tempio\nriga.\n", reason="r", store=store)
    f.write_text(SAME_SHAPE.replace("[P1]\n## TOPIC: Kyōto — 京都\n[/P1]\n\n[P4]\n[/P4]\n\n", ""), encoding="utf-8")
    before = f.read_bytes()
    with pytest.raises(RefusedWrite, match="stale"):
        apply_proposal(prop.path, actor="user", store=store)
    assert f.read_bytes() == before
    assert [p.stale for p in list_proposals(tmp_path)] == [True]


ESCAPES = "\x1b]0;pwned\x07\x1b[31mROSSO — 赤\x1b[0m\rover\x9b2J"


def test_a_reason_with_control_characters_is_refused(tmp_path, store, capsys):
    """A reason is one line of text: an escape sequence an agent puts there (to retitle or clear the user's
    terminal, or a CR to overwrite the line shown) is refused, by the writer, for every face."""
    f = tmp_path / "d.md"
    f.write_text(PLANS, encoding="utf-8")
    before = f.read_bytes()
    for reason in (ESCAPES, "ok\rhidden", "a\x00b", "x\x85y", "perché — 理由 " * 100):
        with pytest.raises(ValueError, match="one-line reason"):
            propose(f, "Plans", "###### LOG: 2026-02-01 — viaggio\nKyōto.\n", reason=reason, store=store)
    p = propose(f, "Plans", "###### LOG: 2026-02-01 — viaggio\nKyōto.\n", reason="autunno — 秋", store=store)
    with pytest.raises(ValueError, match="one line"):
        reject_proposal(p.path, actor="user", reason="no\x1b[2J")
    assert f.read_bytes() == before
    assert len(list((tmp_path / ".zonemark" / "proposals").glob("*.json"))) == 1


def test_what_a_proposal_holds_reaches_the_terminal_without_control_characters(tmp_path, store, capsys,
                                                                               monkeypatch):
    """A record written before the rule (or by hand) and proposed content with escapes: `proposals` and
    `--show` print them as \\xNN, never as the control characters themselves."""
    f = tmp_path / "d.md"
    f.write_text(PLANS, encoding="utf-8")
    p = propose(f, "Plans", f"###### LOG: 2026-02-01 — viaggio\nKyōto {ESCAPES}.\n", reason="r", store=store)
    record = json.loads(p.path.read_text(encoding="utf-8"))
    p.path.write_text(json.dumps(dict(record, reason=ESCAPES), ensure_ascii=False), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for argv in (["proposals", str(tmp_path)], ["proposals", "--show", p.id]):
        code, out, err = run(capsys, argv)
        assert code == 0, err
        assert not any(c in out + err for c in "\x1b\x07\r\x9b"), (argv, ascii(out))
        assert "ROSSO — 赤" in out and "\\x1B" in out


@pytest.mark.parametrize("line", ["> [/P3]", "* [/P3]", "1. [P1]", "[ /P3 ]", "[/p3]", "\t[/P3]", "    [/P3]",
                                  "\u3000[/P3]", "\u200b[P1]", "\u061c[/P3]", "> > [P 1] — zona", "  * [/P4] 東京"])
def test_a_proposal_may_not_hold_a_line_that_reads_as_a_zone_tag_in_any_spelling(tmp_path, store, line):
    """W1 with W4's reader: the next session reads the applied zone as raw text, where an indented,
    quoted, listed, lower-case or spaced '[/P3]' still closes the zone. The user reviewing the diff may
    not see an invisible character before it; such a line is refused like the parser's own tag."""
    f = tmp_path / "d.md"
    f.write_text(PLANS, encoding="utf-8")
    with pytest.raises(RefusedWrite, match="zone tag") as exc:
        propose(f, 7, f"###### LOG: 2026-02-01 — viaggio\nKyōto — 京都.\n{line}\n## TOPIC: EVIL\n", reason="r",
                store=store)
    assert exc.value.code == "CONTENT_REFUSED"
    assert not (tmp_path / ".zonemark" / "proposals").exists() or not list((tmp_path / ".zonemark" / "proposals").iterdir())


@pytest.mark.parametrize("line", ["> [!IMPORTANT] tenere — 大事", "* R1: never copy a [P1] zone", "text [P1] mid-line",
                                  "\uff3bP1\uff3d fullwidth", "[link](http://x) — 東京"])
def test_a_proposal_may_mention_zones_in_text(tmp_path, store, line):
    f = tmp_path / "d.md"
    f.write_text(PLANS, encoding="utf-8")
    p = propose(f, 7, f"###### LOG: 2026-02-01 — viaggio\n{line}\n", reason="r", store=store)
    assert line in p.new_content


def test_a_proposal_made_through_a_symbolic_link_targets_the_real_file(tmp_path, store):
    """W32: the proposal is stored next to the file as the layer names it (the link), names the link, and is
    listed under the layer's name of the file (the real one, when the real file is in the layer too); apply
    writes through the link to the real file."""
    (tmp_path / "sub").mkdir()
    real = tmp_path / "sub" / "diario.md"
    real.write_text(PLANS, encoding="utf-8")
    link = tmp_path / "link.md"
    link.symlink_to(Path("sub") / "diario.md")
    p = propose(link, "Plans", "###### LOG: 2026-02-01 — viaggio\nKyōto — 京都.\n", reason="r", store=store)
    assert p.target == link.absolute() and p.path.parent == tmp_path / ".zonemark" / "proposals"
    assert json.loads(p.path.read_text(encoding="utf-8"))["file"] == "link.md"
    assert [(x.id, x.stale, x.proposal.target) for x in list_proposals(tmp_path)] == [(p.id, False, real)]
    apply_proposal(p.path, actor="user", store=store)
    assert "Kyōto — 京都." in real.read_text(encoding="utf-8") and link.is_symlink()


def test_undoing_an_applied_proposal_opens_it_again(tmp_path, store):
    """W19: the user undid the write that applied a proposal, so the zone is as the proposal found it: the
    proposal is open again (listed, appliable), not a record that says 'applied' of a change no longer there."""
    from zonemark.writer import undo
    from zonemark.writer.proposals import load
    f = tmp_path / "mem.md"
    f.write_text(JAPANESE, encoding="utf-8")
    prop = propose(f, 8, "###### LOG: 2026-01-02 — riveduto — 改訂\nTesto nuovo.\n", reason="più chiaro — 明確",
                   store=store)
    apply_proposal(prop.path, actor="user", store=store)
    assert load(prop.path).status == "applied" and list_proposals(f) == []
    undo(f, actor="user", store=store)
    assert f.read_text(encoding="utf-8") == JAPANESE
    assert load(prop.path).status == "open" and [p.id for p in list_proposals(f)] == [prop.id]
    apply_proposal(prop.path, actor="user", store=store)  # and it can be applied again
    assert "Testo nuovo." in f.read_text(encoding="utf-8") and load(prop.path).status == "applied"


def test_undoing_another_write_leaves_an_applied_proposal_applied(tmp_path, store):
    from zonemark.writer import append_entry, undo
    from zonemark.writer.proposals import load
    f = tmp_path / "mem.md"
    f.write_text(JAPANESE + "\n[P1]\n## TOPIC: Diario\n[/P1]\n\n[P4]\n[/P4]\n", encoding="utf-8")
    prop = propose(f, 8, "###### LOG: 2026-01-02 — riveduto\nTesto.\n", reason="r", store=store)
    apply_proposal(prop.path, actor="user", store=store)
    append_entry(f, "Diario", "oggi — 今日", "Niente di speciale.", date="2026-11-30", store=store)
    undo(f, actor="user", store=store)  # undoes the append, not the apply
    assert load(prop.path).status == "applied"


def test_propose_naming_no_zone_is_refused_as_data_and_writes_nothing(tmp_path, store):
    """A proposal that names neither a zone line nor a container (``target`` None, as a face may pass on) is a
    ``NO_ZONE`` refusal, not a search for a container named "None"; the file is untouched, nothing is stored."""
    cars = tmp_path / "cars[ext_memory].md"
    shutil.copy(CARS, cars)
    before = cars.read_bytes()
    with pytest.raises(RefusedWrite) as refused:
        propose(cars, None, "perché — 東京\n", reason="a note — 東京", store=store)
    assert refused.value.code == "NO_ZONE"
    assert cars.read_bytes() == before
    assert list_proposals(cars) == []


def test_the_recheck_sees_a_change_of_the_files_zones_without_a_tree():
    """§5.5 re-check (W98): the zones before come from the snapshot's index, the zones after from the new parse's
    own scan; neither document builds its tree.  Replacing a [P3] zone's inner lines with text that closes it and
    opens a [P5] is a change of the file's zones; new text in it is not."""
    from zonemark.writer.proposals import _verdict

    text = ("# Note — perché [external_memory]\n\n[P1]\n## TOPIC: Città\n[/P1]\n\n[P3]\nProposta — 東京.\n[/P3]\n\n"
            "[P5]\nBozza.\n[/P5]\n")
    data = text.encode()
    snap = snapshot_module.FileSnapshot("note[ext_memory].md", data)
    zone = snap.full_index.zone_at_line(7)
    assert zone is not None and zone.level == 3 and zone.close_start is not None
    tail = len(data) - zone.close_start

    def inner(new: bytes) -> bytes:  # the zone's inner bytes in ``new``, which differs from ``data`` only there
        return new[zone.inner_start:len(new) - tail]
    same = data.replace("Proposta — 東京.".encode(), "Proposta nuova — 東京.".encode())
    verdict, problems, _ = _verdict(snap, inner(same), zone)
    assert verdict.ok and problems == ()
    longer = data.replace("Proposta — 東京.".encode(), "Proposta — 東京.\nseconda riga\nterza — perché".encode())
    verdict, problems, _ = _verdict(snap, inner(longer), zone)  # the [P5] after it moves two lines: the same zones
    assert verdict.ok and problems == ()
    split = data.replace("Proposta — 東京.".encode(), "Proposta.\n[/P3]\n\n[P5]\naggiunto — 東京\n[/P5]\n\n[P3]".encode())
    verdict, problems, _ = _verdict(snap, inner(split), zone)
    assert problems == ("the zones of the file would change",)
    assert snap.document.tree is None  # the re-check read no tree


def test_a_proposed_chat_style_list_is_proposed_in_the_canonical_shape(tmp_path, store):
    """W24 for proposals: the lists of proposed content are set to * + - by level, as every AI write sets them,
    so that the user approves a list and not findings it would add; the text and the depth are kept."""
    note = tmp_path / "note[ext_memory].md"
    note.write_text("# Note — perché [external_memory]\n\n[P1]\n## TOPIC: Città\n[/P1]\n\n[P3]\nVecchia nota.\n[/P3]\n",
                    encoding="utf-8")
    prop = propose(note, 7, "Nota — 東京.\n\n- prima — città\n* seconda 東京\n  - figlia\n", reason="liste — perché",
                   store=store)
    assert prop.would_add == ()
    assert "list markers set to * + - by level (§8)" in prop.changes
    apply_proposal(prop.path, actor="user", store=store)
    assert note.read_text(encoding="utf-8").split("\n")[6:13] == [
        "[P3]", "Nota — 東京.", "", "* prima — città", "* seconda 東京", "  + figlia", "[/P3]"]
    assert not parse_file(note).diagnostics
