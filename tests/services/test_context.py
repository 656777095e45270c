"""`zonemark context`: the layer as text for a chat (§3, §7.3.1, §N.8), with an offline token budget."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import zonemark
from zonemark import parse
from zonemark.cli.main import main
from zonemark.context import ContextRefused, context, estimate_tokens
from zonemark.layer import Layer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "layer"

REMINDER = """# CASA [reminder]

[P1]
## Center of Gravity
Sei Vega, l'assistente di casa. Rispondi in italiano — sempre.

## NUCLEUS 1: ORDINE
### FUNCTION
* Tenere in ordine le cose.

## MODULE 010: SPESA [NUCLEI: 1]
### FUNCTION
Lista della spesa.

### STATE
active
[/P1]

[P4]
###### LOG: 2026-03-01 — Latte
Comprato il latte.

###### LOG: 2026-05-01 — Pane
Comprato il pane.
[/P4]

[P2]
###### LOG: 2026-01-01 — Voce in P2
Solo l'utente la scrive: non si toglie mai.
[/P2]

[P4]
## MODULE_STATE_REGISTRY:
* ACTIVE:
* INACTIVE: ORTO
[/P4]
"""

ORTO = """# ORTO [external_module]

[P1]
## MODULE ORTO: Orto sul balcone [NUCLEI: 1]
### FUNCTION
Annaffiare il basilico.

### STATE
active
[/P1]
"""

SENZA_ID = """# SENZA ID [external_module]

[P1]
## MODULE: Modulo senza id
### FUNCTION
Nessun id dichiarato.

### STATE
inactive
[/P1]

[P1]
## MODULE: Altro senza id
### FUNCTION
Anche questo.

### STATE
inactive
[/P1]
"""

DIARIO = """# Diario [external_memory]

[P1]
## TOPIC: Giorni
[/P1]

[P4]
###### LOG: 2026-02-01 — Febbraio
Neve a Torino.

###### Nota senza data
Il gatto si chiama Miso.

###### LOG: 2026-01-15 — Gennaio
Freddo.

###### LOG: 2026-04-01 — Aprile
東京の桜。
[/P4]
"""


@pytest.fixture
def casa(tmp_path) -> Path:
    root = tmp_path / "casa"
    root.mkdir()
    (root / "casa[reminder].md").write_text(REMINDER, encoding="utf-8")
    (root / "orto[ext_module].md").write_text(ORTO, encoding="utf-8")
    (root / "senza-id[ext_module].md").write_text(SENZA_ID, encoding="utf-8")
    (root / "diario[ext_memory].md").write_text(DIARIO, encoding="utf-8")
    return root


def header(text: str) -> str:
    return text.split("-->\n", 2)[1] if text.startswith("<!-- IllAIra") else ""


def test_cl21_what_goes_in_follows_the_effective_states(casa):
    r = context(casa)
    assert r.text.startswith("<!-- IllAIra-Standard: v1.13 -->\n<!--\nzonemark context of layer 'casa'")
    files = re.findall(r"<!-- file: (.*) -->", r.text)
    assert files == ["casa[reminder].md", "diario[ext_memory].md"]
    h = header(r.text)
    assert "included: casa[reminder].md, diario[ext_memory].md" in h
    assert "left out: orto[ext_module].md: MODULE ORTO: Orto sul balcone is inactive (registry of casa[reminder].md)" in h
    assert "left out: senza-id[ext_module].md: MODULE: Modulo senza id is inactive; MODULE: Altro senza id is inactive" in h
    assert f"~{r.tokens} tokens" in h and r.tokens == estimate_tokens(r.text)
    assert [(f.path, f.included) for f in r.files] == [("casa[reminder].md", True), ("diario[ext_memory].md", True),
                                                       ("orto[ext_module].md", False),
                                                       ("senza-id[ext_module].md", False)]


def test_example_layer(tmp_path):
    r = context(EXAMPLE)
    assert re.findall(r"<!-- file: (.*) -->", r.text) == [
        "aria[reminder].md", "curiosity[ext_module].md", "cars[ext_memory].md", "journal[ext_memory].md"]
    assert "empathy[ext_module].md: MODULE EMPATHY_LAYER: Empathic Response Layer is inactive" in r.text
    for f in ("aria[reminder].md", "cars[ext_memory].md"):
        assert (EXAMPLE / f).read_text(encoding="utf-8") in r.text  # the user's text, whole


def test_zone_tags_stay_and_temporary_ids_never_appear(casa):
    (casa / "senza-id[ext_module].md").write_text(SENZA_ID.replace("inactive", "active"), encoding="utf-8")
    layer = Layer.load(casa)
    assert any(m.temporary for m in layer.modules)
    r = context(layer)
    assert "senza-id[ext_module].md" in re.findall(r"<!-- file: (.*) -->", r.text)
    assert "[P1]" in r.text and "[/P4]" in r.text and "[P2]" in r.text
    assert not re.search(r"~T\d", r.text)


def test_cl24_same_layer_same_bytes_wherever_it_lives(casa, tmp_path):
    a = context(casa).text
    assert context(casa).text == a
    other = tmp_path / "elsewhere" / "casa"
    shutil.copytree(casa, other)
    assert context(other).text == a


def test_cl24_crlf_and_bom_are_normalised_not_the_text(casa):
    (casa / "diario[ext_memory].md").write_bytes(b"\xef\xbb\xbf" + DIARIO.replace("\n", "\r\n").encode("utf-8"))
    r = context(casa)
    assert "\r" not in r.text and "\ufeff" not in r.text
    assert DIARIO in r.text


def test_cl21_files_that_are_not_merged_or_untyped_are_left_out_and_named(casa):
    (casa / "zz-copia[ext_module].md").write_text(ORTO.replace("ORTO [ext", "COPIA [ext"), encoding="utf-8")
    (casa / "note.md").write_text("# Appunti senza tipo\n\nTesto.\n", encoding="utf-8")
    h = header(context(casa).text)
    assert "left out: zz-copia[ext_module].md: not merged: an id conflict with another file (§7.1.1)" in h
    assert "left out: note.md: no file type in its H1 (§3.2)" in h


# -- the budget ----------------------------------------------------------------------------

def entry_titles(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^###### (?:LOG: \S+ — )?(.*)$", text, re.M)]


ORDER = ["Gennaio", "Febbraio", "Aprile", "Nota senza data", "Latte", "Pane"]  # the order entries go


def test_cl22_budget_leaves_out_memory_entries_first_oldest_first_whole(casa):
    full = context(casa, budget=10_000)
    assert "budget 10000 tokens: nothing left out" in header(full.text)
    assert entry_titles(full.text) == ["Latte", "Pane", "Voce in P2", "Febbraio", "Nota senza data", "Gennaio", "Aprile"]
    r = context(casa, budget=full.tokens - 10)
    assert r.tokens <= full.tokens - 10
    gone = [t for t in entry_titles(full.text) if t not in entry_titles(r.text)]
    assert gone and sorted(gone, key=ORDER.index) == ORDER[:len(gone)]
    assert "Freddo." not in r.text and "Neve a Torino." not in r.text  # entries go whole
    n = len(gone)
    assert f"budget {full.tokens - 10} tokens: {n} older journal entr" in header(r.text)
    assert "diario[ext_memory].md: " + str(n) + " (2026-01-15 to " in header(r.text)
    assert [(f.path, f.entries_left_out) for f in r.files if f.entries_left_out] == [("diario[ext_memory].md", n)]
    assert r.entries_left_out == n


def test_cl22_budget_order_memory_dated_then_undated_then_module_journals(casa):
    full = context(casa, budget=10_000)
    budget, last, seen = full.tokens, None, set()
    while True:
        try:
            r = context(casa, budget=budget)
        except ContextRefused:
            break
        assert r.tokens <= budget
        gone = {t for t in entry_titles(full.text) if t not in entry_titles(r.text)}
        assert gone == set(ORDER[:len(gone)]), "entries left out in another order"
        seen |= gone
        last, budget = r, budget - 1
    assert seen == set(ORDER)
    assert entry_titles(last.text) == ["Voce in P2"]  # an entry in [P2] is never left out


def test_cl22_budget_never_drops_p1_p2_and_refuses_with_the_numbers(casa):
    with pytest.raises(ContextRefused, match=r"the \[P1\]/\[P2\] content of the layer alone is ~\d+ tokens, over the"
                                             r" budget of 50"):
        context(casa, budget=50)
    smallest = None
    for budget in range(400, 0, -5):
        try:
            r = context(casa, budget=budget)
        except ContextRefused as exc:
            assert "with every journal entry left out" in str(exc) or "alone is" in str(exc)
            break
        smallest = r
    assert smallest is not None
    assert "Solo l'utente la scrive: non si toglie mai." in smallest.text  # an entry in [P2] stays
    assert "Sei Vega, l'assistente di casa." in smallest.text


@pytest.mark.parametrize("budget", [0, -1, 1.5, "100", True])
def test_budget_must_be_a_positive_integer(casa, budget):
    with pytest.raises(ValueError):
        context(casa, budget=budget)


def test_cl23_token_estimate_is_documented_and_conservative():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2
    assert estimate_tokens("città") == 2          # 4 ASCII (1) + 1 accented letter (1/2) -> 1.5 -> 2
    assert estimate_tokens("東京") == 2
    assert estimate_tokens("—") == 1
    assert estimate_tokens("ab" * 10 + "東") == 6


# -- the library entry point and the command ------------------------------------------------

def test_cl25_zonemark_context_is_the_function_whatever_was_imported_first():
    code = ("import zonemark, zonemark.context.export; r = zonemark.context({p!r}); print(r.tokens)\n"
            "import zonemark as z2; print(callable(z2.context))")
    for snippet in (code, "import zonemark; print(zonemark.context({p!r}).tokens)"):
        proc = subprocess.run([sys.executable, "-c", snippet.format(p=str(EXAMPLE))], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert int(proc.stdout.split()[0]) == context(EXAMPLE).tokens
    assert zonemark.context(EXAMPLE).text == context(EXAMPLE).text


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_markdown_json_and_output_file(casa, tmp_path, capsys):
    code, out, err = run(capsys, "context", casa)
    assert code == 0 and out == context(casa).text
    code, out, err = run(capsys, "context", casa, "--format", "json", "--budget", "5000")
    data = json.loads(out)
    assert set(data) == {"standardVersion", "layer", "tokens", "budget", "estimate", "files", "leftOut", "text"}
    assert data["standardVersion"] == "v1.13" and data["budget"] == 5000 and data["text"] == context(casa, 5000).text
    target = tmp_path / "paste-me.md"
    code, out, err = run(capsys, "context", casa, "-o", target)
    assert code == 0 and target.read_text(encoding="utf-8") == context(casa).text


@pytest.mark.parametrize("args, code, message", [
    (["context", "{tmp}/missing"], 2, "no such file or folder"),
    (["context", "{casa}", "--budget", "ten"], 2, "--budget takes a number of tokens"),
    (["context", "{casa}", "--budget", "0"], 2, "--budget must be at least 1"),
    (["context", "{casa}", "--budget", "40"], 1, "refused: the [P1]/[P2] content of the layer alone is"),
    (["context", "{casa}", "--budget", "40"], 1, "raise --budget, or leave files out with --exclude"),
    (["context", "{casa}", "-o", "{casa}/context.md"], 2, "a .md file inside the layer would become part of it"),
    (["context", "{casa}", "-o", "{casa}/casa[reminder].md"], 2, "refusing to overwrite"),
    (["context", "{casa}", "-o", "{tmp}"], 2, "is a folder"),
    (["context", "{casa}", "--format", "html"], 2, "invalid choice"),
])
def test_cl24_cli_errors_are_one_line(casa, tmp_path, capsys, args, code, message):
    before = {p: p.read_bytes() for p in casa.iterdir()}
    got, out, err = run(capsys, *[a.format(casa=casa, tmp=tmp_path) for a in args])
    assert got == code and message in err and err.count("\n") == 1 and out == ""
    assert {p: p.read_bytes() for p in casa.iterdir()} == before


def test_the_export_parses_as_the_files_it_holds(casa):
    """Each file part of the export is the user's file: it parses exactly as the file does."""
    r = context(casa)
    parts = re.split(r"\n<!-- file: (.*) -->\n", r.text)[1:]
    for name, text in zip(parts[::2], parts[1::2]):
        assert parse(text).to_dict()["blocks"] == parse((casa / name).read_text(encoding="utf-8")).to_dict()["blocks"]


def test_the_export_of_one_long_line_is_joined_once(tmp_path):
    """B7: the text is joined once from each file's section (issue 16): a 3 MB line of a memory peaked at
    10.4x the layer in the export before (its line, the file's body, its section, the sections and the text,
    copies alive at once); the total is the sum of the parts' exact weights, as the whole text's estimate."""
    from cost_support import peak

    (tmp_path / "aria[reminder].md").write_text("# Aria — perché [reminder]\n\n[P1]\n## RULES:\n* R0: sì — 東京\n"
                                                "[/P1]\n", encoding="utf-8")
    line = ("ab *c* [d] — perché " * 160_000)[:3_000_000]
    (tmp_path / "note[ext_memory].md").write_text("# Note — 東京 [external_memory]\n\n[P1]\n## TOPIC: Alpha\n[/P1]\n\n"
                                                  f"[P4]\n###### LOG: 2026-01-02 — lunga\n{line}\n[/P4]\n",
                                                  encoding="utf-8")
    layer = Layer.load(tmp_path, tree=True)
    size = sum(len(f.doc.source.encode()) for f in layer.files)
    top, r = peak(context, layer)
    assert line in r.text and r.tokens == estimate_tokens(r.text)
    assert top <= 9 * size, top / size
