"""A layer's proposals are its own, for its own files only (W32), and apply/reject find them in the layer
they are given (W33)."""

from __future__ import annotations

import json
import os

import pytest

from zonemark.cli.main import main
from zonemark.render.proposal_change import decided_proposals, pending_changes
from zonemark.writer import Store, find_proposal, list_proposals, propose, stored_proposals
from zonemark.writer import snapshot as snapshot_module

PLANS = """# Piani — 計画 [external_memory]

[P1]
## TOPIC: Plans
[/P1]

[P3]
###### LOG: 2026-01-01 — perché
Tokyo — 東京.
[/P3]
"""
CONTENT = "###### LOG: 2026-01-01 — perché\nKyōto — 京都, in autunno.\n"


@pytest.fixture(autouse=True)
def fresh_writer_cache():
    snapshot_module.forget()
    yield
    snapshot_module.forget()


@pytest.fixture
def store():
    return Store(fsync=False)


@pytest.fixture
def linked(tmp_path):
    """A layer with its own file, and one file of another folder linked into it; that folder has a file
    of its own with a proposal of its own."""
    layer, other = tmp_path / "strato", tmp_path / "altrove — 他所"
    layer.mkdir()
    other.mkdir()
    (layer / "mio.md").write_text(PLANS, encoding="utf-8")
    (other / "condiviso.md").write_text(PLANS, encoding="utf-8")
    (other / "segreto.md").write_text(PLANS.replace("Tokyo", "Roma"), encoding="utf-8")
    (layer / "condiviso.md").symlink_to(other / "condiviso.md")
    return layer, other


def run(capsys, argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_folder_linked_into_the_layer_lends_it_none_of_its_proposals(linked, store, capsys):
    layer, other = linked
    foreign = propose(other / "segreto.md", "Plans", CONTENT, reason="altrove — 他所", store=store)
    assert foreign.path.parent == other / ".zonemark" / "proposals"
    before = (other / "segreto.md").read_bytes()
    assert stored_proposals(layer) == [] and list_proposals(layer) == []
    assert pending_changes(layer) == [] and decided_proposals(layer) == []
    with pytest.raises(ValueError, match=r"not a file of .*strato; refused"):
        find_proposal(layer, foreign.id)
    code, _, err = run(capsys, ["apply", foreign.id, "--layer", layer, "--as", "user"])
    assert code == 2 and len(err.strip().splitlines()) == 1 and "not a file of" in err, err
    code, _, err = run(capsys, ["apply", foreign.path, "--layer", layer, "--as", "user"])
    assert code == 2 and "not a file of" in err, err
    assert (other / "segreto.md").read_bytes() == before
    # the other folder still has it, as its own
    assert [p.id for p in stored_proposals(other)] == [foreign.id]


def test_the_review_page_lists_and_applies_only_the_layer_s_own_proposals(linked, store):
    pytest.importorskip("starlette")
    from zonemark.review.app import Review
    layer, other = linked
    foreign = propose(other / "segreto.md", "Plans", CONTENT, reason="altrove — 他所", store=store)
    own = propose(layer / "condiviso.md", "Plans", CONTENT, reason="nostro — 私たちの", store=store)
    assert own.path.parent == layer / ".zonemark" / "proposals"  # the layer's, not the other folder's
    assert json.loads(own.path.read_text(encoding="utf-8"))["file"] == "condiviso.md"
    changes = pending_changes(layer)
    assert [(c.proposal.id, c.file) for c in changes] == [(own.id, "condiviso.md")]
    review = Review(layer, token="t" * 32)
    before = (other / "segreto.md").read_bytes()
    note = review.act("proposals", lambda: review._apply(foreign.id))
    assert note.status_code == 303 and (other / "segreto.md").read_bytes() == before
    assert "no proposal" in list(review.notes.values())[-1].text
    review.act("proposals", lambda: review._apply(own.id))
    assert list(review.notes.values())[-1].kind == "ok"
    assert "Kyōto — 京都" in (other / "condiviso.md").read_text(encoding="utf-8")
    assert (layer / "condiviso.md").is_symlink()
    assert str(other) not in review.proposals(type("R", (), {"query_params": {}})()).body.decode("utf-8")


def test_a_record_made_next_to_the_real_file_before_is_still_read_if_its_file_is_the_layer_s(linked, store):
    """Before W32 a proposal made through the link was stored next to the real file; it is still the layer's."""
    layer, other = linked
    old = propose(other / "condiviso.md", "Plans", CONTENT, reason="vecchio — 古い", store=store)
    propose(other / "segreto.md", "Plans", CONTENT, reason="altrove — 他所", store=store)
    assert [(p.id, p.target) for p in stored_proposals(layer)] == [(old.id, layer / "condiviso.md")]
    assert [c.file for c in pending_changes(layer)] == ["condiviso.md"]


def test_apply_and_reject_find_the_proposal_in_the_layer_given(linked, store, capsys, monkeypatch, tmp_path):
    layer, _other = linked
    first = propose(layer / "mio.md", "Plans", CONTENT, reason="uno — 一", store=store)
    elsewhere = tmp_path / "altra cartella"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = run(capsys, ["apply", first.id, "--as", "user"])
    assert code == 2 and "no proposal" in err  # the current folder is not the layer
    code, out, err = run(capsys, ["apply", first.id, "--layer", layer, "--as", "user"])
    assert code == 0 and "proposal applied" in out, err
    assert "Kyōto — 京都" in (layer / "mio.md").read_text(encoding="utf-8")
    (layer / "mio.md").write_text(PLANS, encoding="utf-8")
    second = propose(layer / "mio.md", "Plans", CONTENT, reason="due — 二", store=store)
    code, out, err = run(capsys, ["reject", second.id[:-1], "--layer", layer / "mio.md", "--as", "user",
                                  "--reason", "no — いいえ"])
    assert code == 0 and "rejected" in out, err
    assert (layer / "mio.md").read_text(encoding="utf-8") == PLANS
    code, _, err = run(capsys, ["reject", second.id, "--layer", elsewhere / "missing", "--as", "user"])
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_layer_paths_are_compared_resolved(tmp_path, store):
    """A layer reached through a linked folder still owns its files' proposals."""
    real = tmp_path / "vero"
    real.mkdir()
    (real / "mio.md").write_text(PLANS, encoding="utf-8")
    alias = tmp_path / "alias"
    os.symlink(real, alias)
    p = propose(alias / "mio.md", "Plans", CONTENT, reason="tramite — 経由", store=store)
    assert [x.id for x in stored_proposals(real)] == [p.id] == [x.id for x in stored_proposals(alias)]
