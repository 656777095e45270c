"""Every write after non-ASCII text, in every zone level, changes exactly the bytes it should (issue 8).

Byte offsets (the zone index) and character offsets (the re-check) must never mix: each zone
below is preceded by Italian, Japanese and '—', so a slice taken with the wrong kind of
offset lands in the wrong place.  The expected file is built line by line, independently of
the writer.
"""

from __future__ import annotations

import unicodedata
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zonemark import parse_file
from zonemark.writer import Store, append_entry, apply_proposal, edit_zone, propose
from zonemark.writer import snapshot as snapshot_module

FILE = """# Memoria — 記憶 [external_memory]

[P1]
## TOPIC: Città — 都市
Perché sì: è così — これは一番目の文です。
[/P1]

[P2]
###### LOG: 2026-01-01 — permanente
Non si tocca — 触らないで。
[/P2]

[P3]
###### LOG: 2026-01-02 — lungo termine
東京の記憶 — la città più grande.
[/P3]

[P4]
###### LOG: 2026-01-03 — breve
Caffè alle 8 — 朝のコーヒー。
[/P4]

[P5]
appunti — メモ: più tardi.
[/P5]
"""
LINES = FILE.split("\n")
ZONES = {level: LINES.index(f"[P{level}]") + 1 for level in range(1, 6)}  # 1-based opening lines


def zone_span(level: int) -> tuple[int, int]:
    """0-based indexes of the zone's first inner line and its closing tag."""
    open_ = ZONES[level] - 1
    return open_ + 1, LINES.index(f"[/P{level}]", open_)


def replaced(level: int, inner: list[str]) -> str:
    start, close = zone_span(level)
    return "\n".join(LINES[:start] + inner + LINES[close:])


def appended(level: int, entry: list[str]) -> str:
    _start, close = zone_span(level)
    return "\n".join(LINES[:close] + [""] + entry + LINES[close:])


@pytest.fixture
def path(tmp_path):
    snapshot_module.forget()
    p = tmp_path / "memoria.md"
    p.write_text(FILE, encoding="utf-8")
    assert not parse_file(p).diagnostics
    return p


STORE = Store(fsync=False)
NEW = ["###### LOG: 2026-02-02 — nuovo — 新しい", "Testo più lungo — もっと長いテキスト。"]


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_propose_and_apply_in_every_zone(path, level):
    prop = propose(path, ZONES[level], "\n".join(NEW) + "\n", reason="perché — なぜ", store=STORE)
    assert prop.zone_level == level
    apply_proposal(prop.path, actor="user", store=STORE)
    assert path.read_text(encoding="utf-8") == replaced(level, NEW)


@pytest.mark.parametrize("level", [1, 2, 3, 4, 5])
def test_user_edit_in_every_zone(path, level):
    edit_zone(path, ZONES[level], "\n".join(NEW), actor="user", store=STORE)
    assert path.read_text(encoding="utf-8") == replaced(level, NEW)


def test_ai_edit_of_the_p5_zone(path):
    edit_zone(path, ZONES[5], "\n".join(NEW), actor="ai", store=STORE)
    assert path.read_text(encoding="utf-8") == replaced(5, NEW)


@pytest.mark.parametrize("level,actor", [(4, "ai"), (3, "user")])
def test_append_after_non_ascii_text(path, level, actor):
    if level == 3:  # the [P3] journal pairs with the topic only when no writable zone follows it
        path.write_text("\n".join(LINES[:zone_span(3)[1] + 1]) + "\n", encoding="utf-8")
    r = append_entry(path, "Città — 都市", "voce — 項目", "corpo: è così — 本文。", date="2026-03-03",
                     actor=actor, store=STORE)
    entry = ["###### LOG: 2026-03-03 — voce — 項目", "corpo: è così — 本文。"]
    want = appended(level, entry)
    if level == 3:
        want = "\n".join(want.split("\n")[:zone_span(3)[1] + 4]) + "\n"
    assert path.read_text(encoding="utf-8") == want
    assert path.read_text(encoding="utf-8").split("\n")[r.line - 1] == entry[0]


def test_container_names_compare_after_nfc(path):
    """Issue 7 item 12: 'Città' typed as NFD (a + combining grave) names the NFC topic, and back."""
    nfd = unicodedata.normalize("NFD", "Città — 都市")
    assert nfd != "Città — 都市"
    append_entry(path, nfd, "t", "b", date="2026-03-03", store=STORE)
    assert "###### LOG: 2026-03-03 — t\nb\n[/P4]" in path.read_text(encoding="utf-8")
    path.write_text(unicodedata.normalize("NFD", FILE), encoding="utf-8")
    snapshot_module.forget()
    append_entry(path, "Città — 都市", "t", "b", date="2026-03-04", store=STORE)
    assert "###### LOG: 2026-03-04 — t\nb\n[/P4]" in path.read_text(encoding="utf-8")


# -- a file in another encoding (W45) ---------------------------------------------------------

CP1252 = ("# Città — ricordi [external_memory]\n\n[P1]\n## TOPIC: Perché\nÈ così — sì.\n[/P1]\n\n[P3]\n"
          "###### LOG: 2026-01-02 — città\nCaffè.\n[/P3]\n\n[P4]\n[/P4]\n\n[P5]\nVolatile — è.\n[/P5]\n\n"
          "[P4]\n## MODULE_STATE_REGISTRY:\n* ACTIVE:\n* INACTIVE:\n[/P4]\n")


def _line(text: str, needle: str) -> int:
    return text.split("\n").index(needle) + 1


@pytest.mark.parametrize("write", ["append", "edit_ai", "edit_user", "registry", "propose", "apply"])
def test_no_write_puts_utf8_into_a_windows_1252_file(tmp_path, write):
    """W45: every write of the writer refuses a file that is not valid UTF-8 (here Windows-1252, where 'è' and
    '—' are single bytes) with FILE_NOT_UTF8, and leaves it byte for byte as it was."""
    from zonemark.writer import RefusedWrite, rewrite_registry
    store = Store()
    path = tmp_path / "cp1252[ext_memory].md"
    if write == "apply":  # proposed while the file was UTF-8, then saved as Windows-1252
        path.write_text(CP1252, encoding="utf-8")
        made = propose(path, "Perché", "###### LOG: 2026-01-02 — città\nCaffè — 東京.\n", reason="perché — 理由",
                       actor="ai", store=store)
    path.write_bytes(CP1252.encode("cp1252"))
    before = path.read_bytes()
    snapshot_module.forget()
    calls = {
        "append": lambda: append_entry(path, "Perché", "perché — 東京", "testo — 東京", store=store),
        "edit_ai": lambda: edit_zone(path, _line(CP1252, "[P5]"), "nuovo — 東京", actor="ai", store=store),
        "edit_user": lambda: edit_zone(path, _line(CP1252, "[P3]"), "nuovo — 東京\n", actor="user", store=store),
        "registry": lambda: rewrite_registry(path, active=[], inactive=[], actor="user", store=store),
        "propose": lambda: propose(path, "Perché", "nuovo — 東京\n", reason="perché — 理由", actor="ai", store=store),
        "apply": lambda: apply_proposal(made.path, actor="user", store=store),
    }
    with pytest.raises(RefusedWrite) as exc:
        calls[write]()
    assert exc.value.code == "FILE_NOT_UTF8" and "byte 7 is \\xE0" in str(exc.value), str(exc.value)
    assert path.read_bytes() == before


def test_the_command_line_refuses_a_windows_1252_file_in_one_line(tmp_path, capsys):
    """W45: append, edit, state and propose say it in one line, exit 1, and write nothing."""
    from zonemark.cli.main import main
    path = tmp_path / "cp1252[ext_memory].md"
    path.write_bytes(CP1252.encode("cp1252"))
    before = path.read_bytes()
    body = tmp_path / "body.txt"
    body.write_text("nuovo — 東京\n", encoding="utf-8")
    for argv in (["append", path, "--container", "Perché", "--title", "perché — 東京", "--body", "sì"],
                 ["edit", path, "--zone", _line(CP1252, "[P5]"), "--content-file", body],
                 ["state", path, "--activate", "001", "--as", "user"],
                 ["propose", path, "--container", "Perché", "--content-file", body, "--reason", "perché — 理由"]):
        code = main([str(a) for a in argv])
        out, err = capsys.readouterr()
        assert code == 1 and len(err.strip().splitlines()) == 1 and "not valid UTF-8" in err, (argv, out, err)
        assert "Traceback" not in err and path.read_bytes() == before


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["a", "é", "—", "東京", "😀", "\n"]).map(str.encode)
                | st.binary(min_size=1, max_size=3), max_size=40), st.integers(1, 9))
def test_the_first_invalid_byte_is_found_a_slice_at_a_time(parts, step):
    """W45 and W99: the byte a refusal names is the one ``bytes.decode`` fails at, whatever the slices cut."""
    data = b"".join(parts)
    try:
        data.decode("utf-8")
        want = None
    except UnicodeDecodeError as exc:
        want = exc.start
    with mock.patch.object(snapshot_module, "UTF8_CHECK_CHUNK", step):
        assert snapshot_module._first_invalid_utf8(data) == want
