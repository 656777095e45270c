"""The continuity layer across files: §3.1, §3.4, §7.1.1, §7.3.1, §7.4.4, §7.6."""

from __future__ import annotations

from pathlib import Path

import pytest

from zonemark.core.diagnostics import CATALOGUE, Severity
from zonemark.layer import Layer, LayerError, StateSource, matches
from zonemark.layer.check import check_paths

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ROOT / "tests" / "fixtures" / "layers"
EXAMPLE = ROOT / "examples" / "layer"


def codes(layer, code=None):
    out = [(d.path, d.line, d.code) for d in layer.all_diagnostics()]
    return [x for x in out if code is None or x[2] == code]


def write(folder: Path, name: str, text: str) -> Path:
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


REMINDER = """# MAIN [reminder]

[P1]
## NUCLEUS 1: LOGIC
### FUNCTION
* Reason.

## MODULE 001: CORE [NUCLEI: 1]

### STATE
active
[/P1]
"""


# -- the example layer shipped with the project -----------------------------------------

def test_example_layer_is_clean_at_layer_level():
    layer = Layer.load(EXAMPLE)
    assert layer.all_diagnostics() == []
    assert layer.reminder == "aria[reminder].md"
    assert [f.rel for f in layer.files][0] == "aria[reminder].md"
    assert all(f.merged for f in layer.files)


def test_example_layer_states_and_ids():
    layer = Layer.load(EXAMPLE)
    states = {m.module_id: (m.effective_state, str(m.state_source)) for m in layer.modules if m.is_module}
    assert states == {
        "001": ("active", "declared"),  # permanent, not in the registry
        "002": ("active", "registry:aria[reminder].md"),  # declared inactive, registry ACTIVE
        "003": ("active", "declared"),
        "DTR_001": ("active", "declared"),  # the neural-tracing module of §N.6, in [P2]
        "CURIOSITY_ENGINE": ("active", "registry:aria[reminder].md"),  # external module, reminder registry
        "EMPATHY_LAYER": ("inactive", "registry:aria[reminder].md"),
    }
    topics = [(m.file, m.module_id, m.info.name) for m in layer.modules if not m.is_module]
    assert topics == [
        ("cars[ext_memory].md", "~T1", "Maintenance"), ("cars[ext_memory].md", "~T2", "Tyres"),
        ("cars[ext_memory].md", "~T3", "Pressures"), ("cars[ext_memory].md", "~T4", "Bodywork"),
        ("cars[ext_memory].md", "~T5", "Insurance"), ("journal[ext_memory].md", "~T6", "Development"),
        ("journal[ext_memory].md", "~T7", "Open questions"), ("journal[ext_memory].md", "~T8", "Reading"),
    ]


def test_temporary_ids_are_never_written_to_disk():
    before = {p: p.read_bytes() for p in EXAMPLE.glob("*.md")}
    Layer.load(EXAMPLE)
    assert {p: p.read_bytes() for p in EXAMPLE.glob("*.md")} == before
    assert not any(b"~T" in data for data in before.values())


def test_external_nucleus_references_resolve_in_the_layer():
    layer = Layer.load(EXAMPLE)
    doc = layer.file("curiosity[ext_module].md").doc
    # The parser alone cannot see the reminder's nuclei, nor the modules its CONNECTIONS name ...
    assert [d.code for d in doc.diagnostics] == ["UNRESOLVED_NUCLEUS_REFERENCE"] * 2 + ["UNRESOLVED_CONNECTION"] * 2
    # ... the layer can: the file-level warnings are superseded and the edges exist.
    assert layer.file_diagnostics("curiosity[ext_module].md") == []
    assert {d.code for d in layer.superseded_diagnostics()} == {"UNRESOLVED_NUCLEUS_REFERENCE", "UNRESOLVED_CONNECTION"}
    assert layer.all_diagnostics() == []
    governs = {(e.file, e.target) for e in layer.edges if e.kind == "governs"}
    assert ("curiosity[ext_module].md", "1") in governs and ("curiosity[ext_module].md", "3") in governs
    assert ("empathy[ext_module].md", "2") in governs


# -- §3.1 cardinality, §3.4 file type from the H1 only ----------------------------------

def test_no_reminder_is_reported_once():
    layer = Layer.load(LAYERS / "no_reminder")
    assert codes(layer, "LAYER_NO_REMINDER") == [(".", 1, "LAYER_NO_REMINDER")]
    assert layer.reminder is None
    # nucleus 1 resolves nowhere: the parser's warning stays
    assert codes(layer, "UNRESOLVED_NUCLEUS_REFERENCE") == [("tool[ext_module].md", 4, "UNRESOLVED_NUCLEUS_REFERENCE")]


def test_multiple_reminders_is_an_error_on_the_second():
    layer = Layer.load(LAYERS / "two_reminders")
    assert codes(layer, "LAYER_MULTIPLE_REMINDERS") == [("beta[reminder].md", 1, "LAYER_MULTIPLE_REMINDERS")]
    assert CATALOGUE["LAYER_MULTIPLE_REMINDERS"].severity is Severity.ERROR
    assert layer.reminder == "alpha[reminder].md"


def test_file_type_comes_from_the_h1_never_the_filename(tmp_path):
    write(tmp_path, "module[reminder].md", "# TOOL [external_module]\n\n[P1]\n## MODULE T: t [NUCLEI: ]\n"
                                          "### STATE\nactive\n[/P1]\n")
    write(tmp_path, "plain.md", REMINDER)
    layer = Layer.load(tmp_path)
    assert layer.reminder == "plain.md"
    assert layer.file("module[reminder].md").file_type == "external_module"
    assert codes(layer, "LAYER_NO_REMINDER") == []


def test_layer_order_puts_the_reminder_first_and_sorts_the_rest(tmp_path):
    write(tmp_path, "b.md", "# B [external_memory]\n")
    write(tmp_path, "a/z.md", "# Z [external_memory]\n")
    write(tmp_path, "z[reminder].md", REMINDER)
    assert [f.rel for f in Layer.load(tmp_path).files] == ["z[reminder].md", "a/z.md", "b.md"]


def test_single_file_path_is_a_layer_of_one(tmp_path):
    p = write(tmp_path, "main.md", REMINDER)
    layer = Layer.load(p)
    assert [f.rel for f in layer.files] == ["main.md"]
    assert layer.all_diagnostics() == []


def test_bad_paths_raise_layer_error(tmp_path):
    with pytest.raises(LayerError, match="no such file"):
        Layer.load(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    write(tmp_path, "empty/readme.txt", "not markdown")
    with pytest.raises(LayerError, match="no .md files"):
        Layer.load(tmp_path / "empty")


# -- §7.1.1 collision table ---------------------------------------------------------------

def test_declared_vs_declared_rejects_the_later_file_never_the_reminder():
    layer = Layer.load(LAYERS / "collision_declared")
    merged = {f.rel: f.merged for f in layer.files}
    # a_clash sorts before z_main, but the reminder comes first in layer order and keeps its id.
    assert merged == {"z_main[reminder].md": True, "a_clash[ext_module].md": False, "b_user[ext_module].md": True}
    assert codes(layer, "LAYER_ID_CONFLICT") == [("a_clash[ext_module].md", 4, "LAYER_ID_CONFLICT")]
    assert CATALOGUE["LAYER_ID_CONFLICT"].severity is Severity.WARNING  # "conflict warning at import"
    # nothing of the rejected file enters the layer: not its non-clashing module, nor its edges or registry
    assert {m.module_id for m in layer.modules} == {"042", "043", "LISTENER"}
    assert layer.module("042").file == "z_main[reminder].md"
    assert layer.module("OWN_HUB") is None
    assert not any(e.file == "a_clash[ext_module].md" for e in layer.edges)
    # the id did not slide: an edge to 042 lands on the reminder's module
    assert ("connects", "b_user[ext_module].md", "042") in {(e.kind, e.file, e.target) for e in layer.edges}
    # the rejected file's own module is unknown to the layer, and said so
    assert ("b_user[ext_module].md", 11, "LAYER_UNRESOLVED_CONNECTION") in codes(layer)
    unknown = [d for d in layer.all_diagnostics() if d.code == "LAYER_UNKNOWN_REGISTRY_ENTRY"]
    assert len(unknown) == 1 and "a_clash[ext_module].md" in unknown[0].message
    # a rejected file keeps its file-level diagnostics (nothing resolves for it)
    assert [d.code for d in layer.file_diagnostics("a_clash[ext_module].md")] == [
        "UNRESOLVED_NUCLEUS_REFERENCE", "UNRESOLVED_CONNECTION", "UNRESOLVED_NUCLEUS_REFERENCE"]


def test_declared_vs_temporary_the_temporary_slides():
    layer = Layer.load(LAYERS / "collision_temporary")
    ids = [(m.file, m.info.line, m.module_id, m.temporary) for m in layer.modules]
    assert ids == [
        ("main[reminder].md", 8, "001", False),
        ("m_nameless[ext_module].md", 4, "~T2", True),  # ~T1 is declared (RESERVED_ID), so it slides
        ("m_nameless[ext_module].md", 9, "~T3", True),
        ("r_reserved[ext_module].md", 4, "~T1", False),
        ("s_memory[ext_memory].md", 4, "~T4", True),  # topics and sub-topics get temporaries too
        ("s_memory[ext_memory].md", 13, "~T5", True),
    ]
    assert ("r_reserved[ext_module].md", 4, "RESERVED_ID") in codes(layer)


def test_connection_to_a_temporary_id_is_a_warning_and_no_edge():
    layer = Layer.load(LAYERS / "collision_temporary")
    assert ("main[reminder].md", 14, "TEMPORARY_ID_REFERENCE") in codes(layer)
    assert [e for e in layer.edges if e.kind == "connects"] == []


def test_temporary_ids_are_deterministic():
    a = [(m.file, m.info.line, m.module_id) for m in Layer.load(LAYERS / "collision_temporary").modules]
    b = [(m.file, m.info.line, m.module_id) for m in Layer.load(LAYERS / "collision_temporary").modules]
    assert a == b


def test_nucleus_id_collision_rejects_the_file():
    layer = Layer.load(LAYERS / "collision_nucleus")
    assert {f.rel: f.merged for f in layer.files} == {
        "main[reminder].md": True, "drives[ext_module].md": False, "extra[ext_module].md": True}
    assert codes(layer, "LAYER_ID_CONFLICT") == [("drives[ext_module].md", 4, "LAYER_ID_CONFLICT")]
    assert sorted(n.nucleus_id for n in layer.nuclei) == [1, 8]
    # nucleus 7 lives only in the rejected file: unresolved, no edge
    assert ("extra[ext_module].md", 14, "LAYER_UNRESOLVED_CONNECTION") in codes(layer)
    # an external nucleus file (§7.4.3) resolves its own and the reminder's nuclei
    assert {(e.file, e.target) for e in layer.edges if e.kind == "governs"} == {
        ("main[reminder].md", "1"), ("extra[ext_module].md", "1"), ("extra[ext_module].md", "8")}
    assert codes(layer, "UNRESOLVED_NUCLEUS_REFERENCE") == []


def test_same_module_id_twice_in_one_file_is_the_parsers_business(tmp_path):
    write(tmp_path, "main[reminder].md", REMINDER + "\n[P2]\n## MODULE 001: AGAIN [NUCLEI: 1]\n[/P2]\n")
    layer = Layer.load(tmp_path)
    assert all(f.merged for f in layer.files)
    assert ("main[reminder].md", 15, "DUPLICATE_BLOCK_CONFLICT_WARNING") in codes(layer)
    assert [m.module_id for m in layer.modules] == ["001", None]  # the ignored duplicate has no layer id
    assert len([e for e in layer.edges if e.kind == "governs"]) == 1


# -- §7.4.4 and §7.6 references ---------------------------------------------------------

def test_unresolved_references():
    layer = Layer.load(LAYERS / "unresolved")
    assert codes(layer, "LAYER_UNRESOLVED_CONNECTION") == [
        ("main[reminder].md", 14, "LAYER_UNRESOLVED_CONNECTION"),
        ("main[reminder].md", 15, "LAYER_UNRESOLVED_CONNECTION"),
        ("hub[ext_module].md", 13, "LAYER_UNRESOLVED_CONNECTION"),
    ]
    # [NUCLEI: 1, 5] in the reminder: 5 exists nowhere -> kept; hub's [NUCLEI: 1, 4] on the next line:
    # 1 resolves in the reminder (dropped), 4 does not (kept).
    assert codes(layer, "UNRESOLVED_NUCLEUS_REFERENCE") == [
        ("main[reminder].md", 8, "UNRESOLVED_NUCLEUS_REFERENCE"),
        ("hub[ext_module].md", 5, "UNRESOLVED_NUCLEUS_REFERENCE"),
    ]
    # §7.6 read file by file, every CONNECTIONS target of another file is unresolved; the layer
    # replaces those file-level warnings by its own look-up, so each missing target is reported once.
    assert not [d for d in layer.all_diagnostics() if d.code == "UNRESOLVED_CONNECTION"]
    assert {(d.path, d.line) for d in layer.superseded_diagnostics() if d.code == "UNRESOLVED_CONNECTION"} >= {
        ("main[reminder].md", 14), ("main[reminder].md", 15), ("hub[ext_module].md", 13)}
    kept = [d.message for d in layer.all_diagnostics() if d.code == "UNRESOLVED_NUCLEUS_REFERENCE"]
    assert "nucleus 5" in kept[0] and "nucleus 4" in kept[1]
    edges = {(e.kind, e.file, e.target_kind, e.target) for e in layer.edges}
    assert edges == {
        ("governs", "main[reminder].md", "nucleus", "1"),
        ("connects", "main[reminder].md", "module", "HUB"),
        ("governs", "hub[ext_module].md", "nucleus", "1"),
        ("connects", "hub[ext_module].md", "module", "001"),
        ("connects", "hub[ext_module].md", "nucleus", "1"),
    }


def test_floating_hub_draws_no_fallback_edge():
    layer = Layer.load(LAYERS / "floating")
    assert not any(e.file == "loner[ext_module].md" for e in layer.edges)
    assert codes(layer) == []  # `[NUCLEI: ]` is a deliberate declaration, free text is allowed


# -- §7.3.1 states across files ---------------------------------------------------------

def test_cross_file_registry():
    layer = Layer.load(LAYERS / "registry")
    states = {m.module_id: (m.effective_state, str(m.state_source)) for m in layer.modules}
    assert states == {
        "001": ("active", "declared"),
        "002": ("active", "registry:main[reminder].md"),
        "003": ("active", "declared"),  # an external registry cannot reach the reminder's module
        "LOCAL": ("inactive", "registry:local[ext_module].md"),  # own registry beats the reminder's
        "SCOUT": ("active", "registry:main[reminder].md"),  # the reminder governs every module
        "LOCKED": ("active", "declared"),  # permanent: registry entry ignored
    }
    assert codes(layer, "PERMANENT_STATE_OVERRIDE_ATTEMPT") == [
        ("main[reminder].md", 27, "PERMANENT_STATE_OVERRIDE_ATTEMPT")]
    assert codes(layer, "LAYER_REGISTRY_OUT_OF_SCOPE") == [("local[ext_module].md", 12, "LAYER_REGISTRY_OUT_OF_SCOPE")]
    unknown = [d.message for d in layer.all_diagnostics() if d.code == "LAYER_UNKNOWN_REGISTRY_ENTRY"]
    assert len(unknown) == 1 and "GHOST" in unknown[0]


def test_state_source_is_typed_data():
    """§7.3.1: where a state comes from is a value (the registry's file), not a string to parse back."""
    layer = Layer.load(LAYERS / "registry")
    assert layer.module("LOCAL").state_source == StateSource("local[ext_module].md")
    assert layer.module("002").state_source == StateSource("main[reminder].md")
    assert layer.module("LOCKED").state_source == StateSource(None)
    assert layer.module("LOCKED").state_source.declared
    assert str(layer.module("002").state_source) == "registry:main[reminder].md"  # the wire form of status


def test_same_file_permanent_override_is_reported_once(tmp_path):
    write(tmp_path, "main[reminder].md", REMINDER.replace("active\n[/P1]", "active - permanent\n[/P1]")
          + "\n[P4]\n## MODULE_STATE_REGISTRY:\n* INACTIVE: 001\n[/P4]\n")
    layer = Layer.load(tmp_path)
    assert codes(layer, "PERMANENT_STATE_OVERRIDE_ATTEMPT") == [
        ("main[reminder].md", 16, "PERMANENT_STATE_OVERRIDE_ATTEMPT")]
    assert layer.module("001").effective_state == "active"


def test_contradictory_registry_entry_is_ignored(tmp_path):
    write(tmp_path, "main[reminder].md", REMINDER
          + "\n[P4]\n## MODULE_STATE_REGISTRY:\n* ACTIVE: 001\n* INACTIVE: 001\n[/P4]\n")
    layer = Layer.load(tmp_path)
    assert layer.module("001").state_source == StateSource(None)
    assert codes(layer, "CONTRADICTORY_STATE_REGISTRY") != []


def test_modules_without_state_are_reported_except_in_memories():
    layer = Layer.load(LAYERS / "no_state")
    assert codes(layer, "LAYER_MODULE_WITHOUT_STATE") == [("main[reminder].md", 4, "LAYER_MODULE_WITHOUT_STATE")]
    assert layer.module("001").effective_state is None
    assert layer.module("legacy").effective_state is None


# -- selection ---------------------------------------------------------------------------

def test_only_and_exclude():
    layer = Layer.load(EXAMPLE, only=["*[reminder].md", "cars[ext_memory].md"])
    assert [f.rel for f in layer.files] == ["aria[reminder].md", "cars[ext_memory].md"]
    layer = Layer.load(EXAMPLE, exclude=["*[ext_memory].md"])
    assert [f.rel for f in layer.files] == ["aria[reminder].md", "curiosity[ext_module].md", "empathy[ext_module].md"]
    # leaving the external modules out turns the reminder's edges and registry entries to them into unknowns
    layer = Layer.load(EXAMPLE, exclude=["*[ext_module].md"])
    assert sorted(d.code for d in layer.all_diagnostics()) == (
        ["LAYER_UNKNOWN_REGISTRY_ENTRY"] * 2 + ["LAYER_UNRESOLVED_CONNECTION"] * 2)
    with pytest.raises(LayerError, match="after --only/--exclude"):
        Layer.load(EXAMPLE, only=["nothing-*.md"])


def test_glob_dialect():
    assert matches("cars[ext_memory].md", "cars[ext_memory].md")  # brackets are literal
    assert not matches("carsx.md", "cars[ext_memory].md")
    assert matches("sub/cars[ext_memory].md", "*[ext_memory].md")  # no slash: the file name alone
    assert not matches("sub/deep/x.md", "sub/*.md")
    assert matches("sub/deep/x.md", "sub/**/x.md")
    assert matches("sub/x.md", "sub/**/x.md")
    assert matches("sub/x.md", "./sub/?.md")


# -- the check command's hook -------------------------------------------------------------

def test_check_paths_joins_the_folder_as_given(tmp_path):
    folder = tmp_path / "lay"
    write(folder, "tool[ext_module].md", "# TOOL [external_module]\n\n[P1]\n## MODULE T: t [NUCLEI: ]\n"
                                         "### STATE\nactive\n### CONNECTIONS\n* MODULE NOPE\n[/P1]\n")
    report = check_paths([str(folder)])
    assert sorted((d.path, d.line, d.code) for _, ds in report.results for d in ds) == [
        (str(folder), 1, "LAYER_NO_REMINDER"),
        (str(folder / "tool[ext_module].md"), 8, "LAYER_UNRESOLVED_CONNECTION"),
    ]
    assert report.notes == ()


def test_unreadable_file_is_a_diagnostic_not_a_crash(tmp_path, monkeypatch):
    write(tmp_path, "main[reminder].md", REMINDER)
    write(tmp_path, "locked.md", "# L [external_memory]\n")
    import zonemark.layer.loader as layer_module
    real = layer_module.parse_file

    def fake(path, **kwargs):
        if Path(path).name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real(path, **kwargs)
    monkeypatch.setattr(layer_module, "parse_file", fake)
    layer = Layer.load(tmp_path)
    assert codes(layer, "LAYER_UNREADABLE_FILE") == [("locked.md", 1, "LAYER_UNREADABLE_FILE")]
    assert [f.rel for f in layer.files] == ["main[reminder].md"]


def test_layer_codes_are_registered_with_layer_scope():
    for code in ("LAYER_NO_REMINDER", "LAYER_MULTIPLE_REMINDERS", "LAYER_ID_CONFLICT", "LAYER_UNRESOLVED_CONNECTION",
                 "LAYER_UNKNOWN_REGISTRY_ENTRY", "LAYER_REGISTRY_OUT_OF_SCOPE", "LAYER_MODULE_WITHOUT_STATE",
                 "LAYER_UNREADABLE_FILE"):
        assert CATALOGUE[code].scope == "layer" and CATALOGUE[code].origin == "zonemark"


def test_check_paths_reads_each_folder_once_as_a_layer(tmp_path):
    results = dict(check_paths([str(EXAMPLE), str(LAYERS / "no_reminder"),
                                str(LAYERS / "unresolved" / "hub[ext_module].md")]).results)
    example = {k: v for k, v in results.items() if k.startswith(str(EXAMPLE))}
    assert len(example) == 5 and all(v == () for v in example.values())  # resolved nucleus references dropped
    assert [d.code for d in results[str(LAYERS / "no_reminder")]] == ["LAYER_NO_REMINDER"]
    assert [d.code for d in results[str(LAYERS / "no_reminder" / "tool[ext_module].md")]] == [
        "UNRESOLVED_NUCLEUS_REFERENCE"]
    # a file given alone is not a layer: its parser diagnostics stand
    hub = results[str(LAYERS / "unresolved" / "hub[ext_module].md")]
    assert [d.code for d in hub] == ["UNRESOLVED_NUCLEUS_REFERENCE"] * 2 + ["UNRESOLVED_CONNECTION"] * 3
    assert all(d.path == str(LAYERS / "unresolved" / "hub[ext_module].md") for d in hub)
    with pytest.raises(LayerError):
        check_paths([str(tmp_path / "missing")])


def test_check_of_a_single_file_parses_it_and_builds_no_layer(tmp_path, monkeypatch, diagnostics_made):
    """W6: a file given alone is checked as a file; its parser diagnostics are reported as they are."""
    import zonemark.layer.check as check
    from zonemark.core.parser import parse_file
    path = write(tmp_path, "perché[ext_module].md", "# 東京 [external_module]\n\n[P1]\n## MODULE 001: VIA — A\n"
                 "[NUCLEI: 9]\n### FUNCTION\n* Perché.\n[/P1]\n")
    expected = parse_file(path).diagnostics
    assert [d.code for d in expected] == ["UNRESOLVED_NUCLEUS_REFERENCE"]

    def no_layer(*args, **kwargs):
        raise AssertionError("a single file is not read as a layer")
    monkeypatch.setattr(check.Layer, "load", no_layer)
    made = diagnostics_made
    made[0] = 0
    assert check.check_paths([str(path)]).results == ((str(path), expected),)
    assert made[0] == len(expected)  # the parser's own, no copy


def test_check_of_a_folder_copies_each_diagnostic_once(diagnostics_made):
    """Each diagnostic of a folder is copied once on its way out: its path joined to the folder as given."""
    folder = LAYERS / "no_reminder"
    made = diagnostics_made
    Layer.load(folder)
    loading = made[0]
    made[0] = 0
    report = check_paths([str(folder)])
    reported = sum(len(diags) for _, diags in report.results)
    assert reported == 2
    assert made[0] == loading + reported


def test_reminder_module_governed_by_an_external_nucleus_file(tmp_path):
    """§7.4.3: nuclei may live in an external file; the layer resolves the reminder's reference to them."""
    write(tmp_path, "main[reminder].md", REMINDER.replace("[NUCLEI: 1]", "[NUCLEI: 1, 8]"))
    write(tmp_path, "drives[ext_module].md", "# DRIVES [external_module]\n\n[P1]\n## NUCLEUS 8: PLAY\n"
                                            "### FUNCTION\n* Play.\n[/P1]\n")
    layer = Layer.load(tmp_path)
    assert [d.code for d in layer.file("main[reminder].md").doc.diagnostics] == ["UNRESOLVED_NUCLEUS_REFERENCE"]
    assert layer.all_diagnostics() == []
    assert {e.target for e in layer.edges if e.kind == "governs"} == {"1", "8"}
    # without the nucleus file the warning stands
    layer = Layer.load(tmp_path, exclude=["drives*"])
    assert [d.code for d in layer.all_diagnostics()] == ["UNRESOLVED_NUCLEUS_REFERENCE"]


def test_conflicts_between_external_files(tmp_path):
    """Only merged files claim ids: a rejected file's other ids stay free for later files."""
    def ext(name, *ids):
        body = "".join(f"## MODULE {i}: m{i} [NUCLEI: ]\n### STATE\nactive\n\n" for i in ids)
        write(tmp_path, name, f"# {name} [external_module]\n\n[P1]\n{body}[/P1]\n")
    write(tmp_path, "main[reminder].md", REMINDER)
    ext("a.md", "X")
    ext("b.md", "Y", "X")
    ext("c.md", "Y")
    layer = Layer.load(tmp_path)
    assert {f.rel: f.merged for f in layer.files} == {"main[reminder].md": True, "a.md": True, "b.md": False,
                                                      "c.md": True}
    conflict = [d for d in layer.all_diagnostics() if d.code == "LAYER_ID_CONFLICT"]
    assert [(d.path, d.line) for d in conflict] == [("b.md", 8)]
    assert "a.md:4" in conflict[0].message
    assert layer.module("Y").file == "c.md"


def test_status_is_typed_data_with_its_json_form(tmp_path):
    """§7.3.1, §9: ``layer_status`` is data (states, sources, topics); ``to_dict`` is the ``status --json`` form."""
    from zonemark.layer.status import LayerStatus, layer_status, status_data
    write(tmp_path, "main[reminder].md", REMINDER)
    write(tmp_path, "perché[ext_memory].md", "# 東京 — Notes [external_memory]\n\n[P1]\n## TOPIC: Perché\n[/P1]\n\n"
          "[P4]\n###### LOG: 2026-05-01 — visita\nTokyo.\n[/P4]\n")
    layer = Layer.load(tmp_path)
    status = layer_status(layer)
    assert isinstance(status, LayerStatus)
    module = status.modules[0]
    assert (module.id, module.effective_state, module.state_source) == ("001", "active", StateSource(None))
    assert [(t.keyword, t.name, t.entries) for m in status.memories for t in m.topics] == [("TOPIC", "Perché", 1)]
    data = status.to_dict()
    assert data == status_data(layer) and data["modules"][0]["stateSource"] == "declared"
    assert list(data) == ["layer", "root", "reminder", "files", "modules", "nuclei", "memories", "diagnostics"]


@pytest.mark.parametrize("name", sorted(p.name for p in (Path(__file__).parent.parent / "fixtures" / "layers").iterdir()))
def test_severity_counts_count_what_all_diagnostics_lists(name):
    """``Layer.severity_counts`` counts the findings where they are (B17), the same ones ``all_diagnostics``
    copies: superseded file findings left out, the layer's own counted."""
    layer = Layer.load(Path(__file__).parent.parent / "fixtures" / "layers" / name)
    listed = layer.all_diagnostics()
    assert layer.severity_counts() == (sum(d.severity is Severity.ERROR for d in listed),
                                       sum(d.severity is Severity.WARNING for d in listed))
    if name.startswith("collision"):  # a declared id twice is an error of the layer (§7.1.1)
        assert layer.severity_counts()[0] > 0 and layer.superseded or layer.diagnostics
