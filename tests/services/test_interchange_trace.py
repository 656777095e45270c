"""Deferred Neural Traces (§N.18): the spec's examples, the robustness rules, gating, the §N.4 caution,
records, and the `zonemark trace` command.

The layer is tests/fixtures/interchange/layer: nuclei 1-3, modules CORE_001, 042, 043 (inactive),
DTR_001 (DEFERRED_NEURAL_TRACING in [P2], active), EMPATHY_LAYER; memories DAILY_LOG_2026_04
(daily[ext_memory].md) and USER_PROFILE.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import sys
from pathlib import Path

import jsonschema
import pytest

from zonemark.cli.main import main
from zonemark.interchange.records import load_records, record_trace
from zonemark.interchange.trace import parse_trace, read_trace
from zonemark.layer import Layer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "interchange"
LAYER = FIXTURES / "layer"
SPEC = FIXTURES / "spec"

_LISTS = {
    "nuclei": {"type": "array", "items": {"type": "integer"}},
    "modules": {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                           "required": ["id", "name", "state"],
                                           "properties": {"id": {"type": "string"}, "name": {"type": ["string", "null"]},
                                                          "state": {"enum": ["active", "queried", "suppressed", None]}}}},
    "logs": {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                        "required": ["module", "date", "action", "text"],
                                        "properties": {"module": {"type": "string"}, "date": {"type": "string"},
                                                       "action": {"enum": ["generated", "queried", None]},
                                                       "text": {"type": "string"}}}},
    "memories": {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                            "required": ["id", "ref", "action"],
                                            "properties": {"id": {"type": "string"}, "ref": {"type": ["string", "null"]},
                                                           "action": {"enum": ["queried", "touched", "appended", None]}}}},
}
CONTENT = {"type": "object", "additionalProperties": False, "required": list(_LISTS), "properties": _LISTS}
#: The exact shape the issue asks for.
TRACE_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["blocks", "enabled", "result", "dropped", "unknownIdentifiers", "warnings"],
    "properties": {
        "blocks": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["openLine", "closeLine", "form", "marker", "version", "rejected", "reason", "parsed"],
            "properties": {"openLine": {"type": "integer", "minimum": 1},
                           "closeLine": {"type": ["integer", "null"], "minimum": 1},
                           "form": {"enum": ["block", "compact"]}, "marker": {"enum": ["NTRACE", "TRACE"]},
                           "version": {"type": ["string", "null"]}, "rejected": {"type": "boolean"},
                           "reason": {"type": ["string", "null"]},
                           "parsed": {"oneOf": [{"type": "null"}, CONTENT]}}}},
        "enabled": {"type": "boolean"},
        "result": CONTENT,
        "dropped": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["line", "entry", "kind", "id", "reason"],
            "properties": {"line": {"type": "integer", "minimum": 1}, "entry": {"type": "string"},
                           "kind": {"enum": ["nucleus", "module", "log", "memory"]},
                           "id": {"type": ["string", "integer"]},
                           "reason": {"type": "string"}}}},
        "unknownIdentifiers": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["kind", "id"],
            "properties": {"kind": {"enum": ["nucleus", "module", "memory"]}, "id": {"type": ["string", "integer"]}}}},
        "warnings": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["code", "message", "line"],
            "properties": {"code": {"type": "string"}, "message": {"type": "string"},
                           "line": {"type": "integer", "minimum": 1}}}},
    },
}


@pytest.fixture(scope="module")
def layer() -> Layer:
    return Layer.load(LAYER)


def trace(text: str, layer: Layer) -> dict:
    out = read_trace(text, layer).to_dict()
    jsonschema.validate(out, TRACE_SCHEMA)
    for b in out["blocks"]:
        assert (b["parsed"] is None) == b["rejected"]
    if not out["enabled"]:
        assert out["result"] == {"nuclei": [], "modules": [], "logs": [], "memories": []}
    return out


def codes(out: dict) -> list[str]:
    return [w["code"] for w in out["warnings"]]


def variant(tmp_path: Path, old: str, new: str) -> Layer:
    """The fixture layer with one change to its reminder."""
    target = tmp_path / "layer"
    shutil.copytree(LAYER, target)
    reminder = target / "mind[reminder].md"
    text = reminder.read_text(encoding="utf-8")
    assert old in text
    reminder.write_text(text.replace(old, new), encoding="utf-8")
    return Layer.load(target)


# -- the spec's examples ---------------------------------------------------------------------

def test_spec_n7a_canonical_block(layer):
    out = trace((SPEC / "n7a.txt").read_text(encoding="utf-8"), layer)
    content = {
        "nuclei": [1, 3],
        "modules": [{"id": "CORE_001", "name": "LOGICAL_OPERATIVE", "state": "active"},
                    {"id": "042", "name": "CURIOSITY", "state": "queried"}],
        "logs": [{"module": "042", "date": "2026-06-11T14:30Z", "action": "generated",
                  "text": "detected unfamiliar term in user phrasing"}],
        "memories": [{"id": "DAILY_LOG_2026_04", "ref": None, "action": "queried"},
                     {"id": "DAILY_LOG_2026_04", "ref": "2026-04-12", "action": "touched"}],
    }
    assert out == {
        "blocks": [{"openLine": 4, "closeLine": 11, "form": "block", "marker": "NTRACE", "version": "v1",
                    "rejected": False, "reason": None, "parsed": content}],
        "enabled": True, "result": content, "dropped": [], "unknownIdentifiers": [], "warnings": []}


def test_spec_n7a_illuminates_exactly_these_nodes(layer):
    result = read_trace((SPEC / "n7a.txt").read_text(encoding="utf-8"), layer)
    assert [(t.kind, t.file, t.line, t.order, t.state, t.action) for t in result.targets] == [
        ("nucleus", "mind[reminder].md", 14, 1, None, None),
        ("nucleus", "mind[reminder].md", 22, 2, None, None),
        ("module", "mind[reminder].md", 26, None, "active", None),
        ("module", "mind[reminder].md", 34, None, "queried", None),
        ("memory", "daily[ext_memory].md", None, None, None, "queried"),
        ("memory", "daily[ext_memory].md", None, None, None, "touched"),
        ("entry", "daily[ext_memory].md", 11, None, None, "touched"),   # 2026-04-12 — Parser milestone
        ("entry", "daily[ext_memory].md", 20, None, None, "touched"),   # 2026-04-12T18:30 — Evening note
    ]


def test_spec_n7b_compact(layer):
    out = trace((SPEC / "n7b.txt").read_text(encoding="utf-8"), layer)
    content = {"nuclei": [2], "modules": [{"id": "EMPATHY_LAYER", "name": None, "state": "queried"}], "logs": [],
               "memories": [{"id": "USER_PROFILE", "ref": None, "action": "queried"}]}
    assert out["blocks"] == [{"openLine": 1, "closeLine": 1, "form": "compact", "marker": "NTRACE", "version": "v1",
                              "rejected": False, "reason": None, "parsed": content}]
    assert out["result"] == content and out["warnings"] == []


def test_spec_n5_compact_variant(layer):
    out = trace((SPEC / "n5.txt").read_text(encoding="utf-8"), layer)
    assert out["result"] == {"nuclei": [1, 3], "modules": [{"id": "042", "name": "CURIOSITY", "state": "queried"}],
                             "logs": [], "memories": [{"id": "DAILY_LOG_2026_04", "ref": None, "action": "queried"}]}
    assert out["blocks"][0]["form"] == "compact" and out["warnings"] == []


def test_spec_n7c_module_absent_no_trace(tmp_path):
    untraced = variant(tmp_path, "## MODULE DTR_001: DEFERRED_NEURAL_TRACING", "## MODULE DTR_001: SOMETHING_ELSE")
    out = trace((SPEC / "n7c.txt").read_text(encoding="utf-8"), untraced)
    assert out["blocks"] == [] and out["enabled"] is False
    # enabled is false, and a warning says why (§N.2), also when the text holds no trace
    assert codes(out) == ["TRACE_NOT_FOUND", "TRACE_DISABLED"]
    assert "no DEFERRED_NEURAL_TRACING module" in out["warnings"][1]["message"]
    # an AI that emits one anyway illuminates nothing, and the user is told why
    out = trace((SPEC / "n7a.txt").read_text(encoding="utf-8"), untraced)
    assert out["enabled"] is False and out["blocks"][0]["parsed"]["nuclei"] == [1, 3]
    assert codes(out) == ["TRACE_DISABLED"]
    assert "no DEFERRED_NEURAL_TRACING module" in out["warnings"][0]["message"]


def test_spec_n7d_unknown_identifier(layer):
    out = trace((SPEC / "n7d.txt").read_text(encoding="utf-8"), layer)
    assert out["result"] == {"nuclei": [1], "modules": [{"id": "042", "name": "CURIOSITY", "state": "queried"}],
                             "logs": [], "memories": []}
    assert out["dropped"] == [{"line": 5, "entry": "MODULE 999: GHOST queried", "kind": "module", "id": "999",
                               "reason": "unknown module identifier: no module 999 in the layer"}]
    assert out["unknownIdentifiers"] == [{"kind": "module", "id": "999"}]
    assert out["warnings"] == [{"code": "TRACE_UNKNOWN_IDENTIFIERS", "message": "1 unknown identifier skipped",
                                "line": 5}]


def test_cl15_unknown_identifiers_summary_counts_distinct_ids(layer):
    text = ("[NTRACE: v1]\nNUCLEI: 1, 7, 9\nMODULE 999: GHOST queried\nLOG 999: 2026-01-01 — generated — x\n"
            "MEMORY NOWHERE: queried\n[/NTRACE]\n")
    out = trace(text, layer)
    assert out["unknownIdentifiers"] == [{"kind": "nucleus", "id": 7}, {"kind": "nucleus", "id": 9},
                                         {"kind": "module", "id": "999"}, {"kind": "memory", "id": "NOWHERE"}]
    assert [d["kind"] for d in out["dropped"]] == ["nucleus", "nucleus", "module", "log", "memory"]
    assert out["warnings"][-1]["message"] == "4 unknown identifiers skipped"
    assert out["result"]["nuclei"] == [1]


# -- §N.3 / §N.4 parsing ---------------------------------------------------------------------

def test_legacy_trace_marker_is_accepted(layer):
    out = trace("[TRACE: v1]\nNUCLEI: 2\n[/TRACE]\n", layer)
    assert out["blocks"][0]["marker"] == "TRACE" and out["result"]["nuclei"] == [2] and out["warnings"] == []


def test_cl9_mixed_marker_families_are_accepted_with_a_warning(layer):
    out = trace("[NTRACE: v1]\nNUCLEI: 2\n[/TRACE]\n", layer)
    assert out["result"]["nuclei"] == [2] and codes(out) == ["TRACE_MARKER_MISMATCH"]


def test_cl9_markers_after_trimming_and_stripping_emphasis(layer):
    text = "  **[NTRACE: v1]**  \n*NUCLEI:* `1`, _3_\n**MODULE** `CORE_001`: LOGICAL_OPERATIVE *active*\n`[/NTRACE]`\n"
    out = trace(text, layer)
    assert out["result"]["nuclei"] == [1, 3]
    assert out["result"]["modules"] == [{"id": "CORE_001", "name": "LOGICAL_OPERATIVE", "state": "active"}]
    assert out["warnings"] == []


def test_cl10_emphasis_is_never_stripped_inside_identifiers_or_free_text(layer):
    text = "[NTRACE: v1]\nMODULE _CORE_001_: x active\nLOG 042: 2026-01-01 — *queried* — a *very* _odd_ term\n[/NTRACE]\n"
    out = trace(text, layer)
    assert out["result"]["modules"][0]["id"] == "CORE_001"
    assert out["result"]["logs"] == [{"module": "042", "date": "2026-01-01", "action": "queried",
                                      "text": "a *very* _odd_ term"}]


def test_cl9_a_marker_inside_a_sentence_is_not_a_marker(layer):
    text = "When you type /ntrace I end with [NTRACE: v1] NUCLEI: 1 [/NTRACE] like this.\n"
    out = trace(text, layer)
    assert out["blocks"] == [] and codes(out) == ["TRACE_MARKER_IN_TEXT", "TRACE_NOT_FOUND"]
    out = trace("[NTRACE: v1] is the marker you asked about.\n", layer)
    assert out["blocks"] == [] and "TRACE_MARKER_IN_TEXT" in codes(out)


def test_soft_wrapped_lines_join_the_previous_entry_and_blank_lines_are_ignored(layer):
    text = ("[NTRACE: v1]\n\nNUCLEI: 1,\n3\nMODULE 042: CURIOSITY\nqueried\n\n"
            "LOG 042: 2026-06-11 — generated — the user wrote città\nand perché in one line\n[/NTRACE]\n")
    out = trace(text, layer)
    assert out["result"]["nuclei"] == [1, 3]
    assert out["result"]["modules"] == [{"id": "042", "name": "CURIOSITY", "state": "queried"}]
    assert out["result"]["logs"][0]["text"] == "the user wrote città and perché in one line"


def test_cl10_a_soft_wrapped_compact_trace(layer):
    text = "[NTRACE: v1] NUCLEI: 2 | MODULE EMPATHY_LAYER:\nqueried | MEMORY USER_PROFILE: queried [/NTRACE]\n"
    out = trace(text, layer)
    assert out["blocks"][0]["form"] == "compact" and (out["blocks"][0]["openLine"], out["blocks"][0]["closeLine"]) == (1, 2)
    assert out["result"]["modules"] == [{"id": "EMPATHY_LAYER", "name": None, "state": "queried"}]


def test_cl10_a_pipe_in_free_text_is_not_a_section_separator(layer):
    text = "[NTRACE: v1] LOG 042: 2026-01-01 — generated — compared A | B options | MEMORY USER_PROFILE: queried [/NTRACE]"
    out = trace(text, layer)
    assert out["result"]["logs"][0]["text"] == "compared A | B options"
    assert out["result"]["memories"] == [{"id": "USER_PROFILE", "ref": None, "action": "queried"}]


@pytest.mark.parametrize("opening, version, reason", [
    ("[NTRACE: v2]", "v2", "unknown grammar version 'v2'"),
    ("[NTRACE: V1]", "V1", "unknown grammar version 'V1'"),
    ("[NTRACE]", None, "the marker names no grammar version"),
])
def test_cl9_an_unknown_version_is_rejected_and_never_parsed(layer, opening, version, reason):
    out = trace(f"{opening}\nNUCLEI: 1\n[/NTRACE]\n", layer)
    assert out["blocks"] == [{"openLine": 1, "closeLine": 3, "form": "block", "marker": "NTRACE", "version": version,
                              "rejected": True, "reason": reason, "parsed": None}]
    assert codes(out) == ["TRACE_UNKNOWN_VERSION"] and out["result"]["nuclei"] == []


def test_cl9_an_unclosed_block_is_rejected(layer):
    out = trace("[NTRACE: v1]\nNUCLEI: 1\nCopy\nRetry\n", layer)
    assert out["blocks"][0]["rejected"] and out["blocks"][0]["reason"] == "never closed"
    assert out["blocks"][0]["closeLine"] is None and codes(out) == ["TRACE_UNCLOSED"]
    out = trace("[NTRACE: v1]\nNUCLEI: 1\n[NTRACE: v1]\nNUCLEI: 2\n[/NTRACE]\n", layer)
    assert [b["rejected"] for b in out["blocks"]] == [True, False] and out["result"]["nuclei"] == [2]


def test_ids_compare_as_strings_nuclei_as_integers_in_activation_order(layer):
    out = trace("[NTRACE: v1]\nNUCLEI: 03, 1, 3\nMODULE 42: CURIOSITY queried\n[/NTRACE]\n", layer)
    assert out["result"]["nuclei"] == [3, 1]  # 03 is 3; each nucleus once, first activation kept
    assert out["blocks"][0]["parsed"]["nuclei"] == [3, 1, 3]
    assert out["unknownIdentifiers"] == [{"kind": "module", "id": "42"}]  # 42 is not 042


def test_cl13_temporary_ids_are_not_referenceable(layer):
    out = trace("[NTRACE: v1]\nMODULE ~T1: Development queried\n[/NTRACE]\n", layer)
    assert out["unknownIdentifiers"] == [{"kind": "module", "id": "~T1"}]


def test_cl11_values_outside_the_vocabularies_keep_the_entry_with_null(layer):
    text = ("[NTRACE: v1]\nMODULE 042: CURIOSITY working\nMODULE CORE_001: [Queried]\n"
            "LOG 042: yesterday — wrote — a note\nMEMORY USER_PROFILE: read\nMEMORY DAILY_LOG_2026_04\n[/NTRACE]\n")
    out = trace(text, layer)
    assert out["result"]["modules"] == [{"id": "042", "name": "CURIOSITY", "state": None},
                                        {"id": "CORE_001", "name": None, "state": "queried"}]
    assert out["result"]["logs"] == [{"module": "042", "date": "yesterday", "action": None, "text": "a note"}]
    assert out["result"]["memories"] == [{"id": "USER_PROFILE", "ref": None, "action": None},
                                         {"id": "DAILY_LOG_2026_04", "ref": None, "action": None}]
    assert codes(out) == ["TRACE_UNKNOWN_STATE", "TRACE_BAD_DATE", "TRACE_UNKNOWN_ACTION", "TRACE_UNKNOWN_ACTION",
                          "TRACE_UNKNOWN_ACTION"]


def test_cl12_sections_out_of_order_are_kept_with_a_warning(layer):
    out = trace("[NTRACE: v1]\nMEMORY USER_PROFILE: queried\nNUCLEI: 2\nMODULE EMPATHY_LAYER: queried\n[/NTRACE]\n",
                layer)
    assert out["result"]["nuclei"] == [2] and len(out["result"]["modules"]) == 1
    assert codes(out) == ["TRACE_SECTION_ORDER", "TRACE_SECTION_ORDER"]


def test_cl11_malformed_entries_are_dropped_with_a_warning(layer):
    out = trace("[NTRACE: v1]\nNUCLEI: 1, two\nMODULE\nLOG 042: no separators here\nMEMORY @ x: queried\n"
                "stray before? no, joins MEMORY\n[/NTRACE]\n", layer)
    assert out["result"]["nuclei"] == [1]
    assert codes(out).count("TRACE_MALFORMED_ENTRY") == 4


def test_text_before_the_first_entry_is_ignored(layer):
    out = trace("[NTRACE: v1]\nHere is the trace:\nNUCLEI: 1\n[/NTRACE]\n", layer)
    assert out["result"]["nuclei"] == [1] and codes(out) == ["TRACE_STRAY_TEXT"]


# -- @ ref ---------------------------------------------------------------------------------

@pytest.mark.parametrize("ref, lit", [
    ("2026-04-20", [("entry", 29)]),
    ("Treno per Roma", [("entry", 29)]),
    ("treno per roma", [("entry", 29)]),
    ("2026-04-20 — Treno per Roma", [("entry", 29)]),
    ("2026-04-20 - Treno per Roma", [("entry", 29)]),
    ("Viaggi", [("topic", 25)]),
    ("TOPIC: Viaggi", [("topic", 25)]),
    ("Development/Open questions", [("topic", 16)]),
    ("SUBTOPIC1: Open questions", [("topic", 16)]),
    ("2026-04-12T18:30", [("entry", 20)]),
])
def test_cl14_a_ref_resolves_to_an_entry_or_a_topic(layer, ref, lit):
    result = read_trace(f"[NTRACE: v1]\nMEMORY DAILY_LOG_2026_04 @ {ref}: touched\n[/NTRACE]\n", layer)
    assert [(t.kind, t.line) for t in result.targets if t.kind != "memory"] == lit
    assert not [w for w in result.warnings if w.code == "TRACE_UNRESOLVED_REF"]


def test_cl14_an_unresolved_ref_keeps_the_memory(layer):
    out = read_trace("[NTRACE: v1]\nMEMORY DAILY_LOG_2026_04 @ 1999-01-01: touched\n[/NTRACE]\n", layer)
    assert out.to_dict()["result"]["memories"] == [{"id": "DAILY_LOG_2026_04", "ref": "1999-01-01", "action": "touched"}]
    assert [t.kind for t in out.targets] == ["memory"]
    assert [w.code for w in out.warnings] == ["TRACE_UNRESOLVED_REF"]


def test_cl13_a_memory_is_named_by_its_title_its_file_name_or_a_reminder_section(layer):
    out = read_trace("[NTRACE: v1]\nMEMORY daily: queried\nMEMORY Center of Gravity: queried\n[/NTRACE]\n", layer)
    assert [(t.kind, t.file, t.line) for t in out.targets] == [("memory", "daily[ext_memory].md", None),
                                                              ("memory", "mind[reminder].md", 5)]
    assert trace("[NTRACE: v1]\nMEMORY Daily_Log_2026_04: queried\n[/NTRACE]\n", layer)["unknownIdentifiers"] == [
        {"kind": "memory", "id": "Daily_Log_2026_04"}]


# -- gating (§N.2) -------------------------------------------------------------------------

def test_cl16_gating_follows_the_effective_state(tmp_path):
    text = (SPEC / "n7b.txt").read_text(encoding="utf-8")
    off = variant(tmp_path / "a", "Grants the AI the ability to emit a Deferred Neural Trace (DNT) per IllAIra Standard"
                  " §N.\n\n### STATE\nactive", "Grants.\n\n### STATE\ninactive")
    out = trace(text, off)
    assert out["enabled"] is False and codes(out) == ["TRACE_DISABLED"]
    assert "is inactive (its declared STATE)" in out["warnings"][0]["message"]
    # the registry (which the AI may rewrite) turns it on: allowed, and said
    on = variant(tmp_path / "b", "### STATE\nactive\n\n### TRIGGER", "### STATE\ninactive\n\n### TRIGGER")
    assert trace(text, on)["enabled"] is False
    on = variant(tmp_path / "c", "### STATE\nactive\n\n### TRIGGER\nEmit", "### STATE\ninactive\n\n### TRIGGER\nEmit")
    on_reg = Path(on.root) / "mind[reminder].md"
    on_reg.write_text(on_reg.read_text(encoding="utf-8").replace("* ACTIVE: 042", "* ACTIVE: 042, DTR_001"),
                      encoding="utf-8")
    out = trace(text, Layer.load(on.root))
    assert out["enabled"] is True and codes(out) == ["TRACE_ENABLED_BY_REGISTRY"]


def test_cl16_the_legacy_module_name_enables_tracing(tmp_path):
    legacy = variant(tmp_path, "## MODULE DTR_001: DEFERRED_NEURAL_TRACING", "## MODULE DTR_001: DEFERRED_NEURAL_TRACE")
    assert trace((SPEC / "n7b.txt").read_text(encoding="utf-8"), legacy)["enabled"] is True


def test_cl16_a_loaded_module_without_state_enables_with_a_warning(tmp_path):
    """§N.2: tracing is off when the module is absent or inactive; one loaded with no STATE and no registry
    entry (the §N.6 skeleton declares none) is neither, so it enables tracing — and the user is told."""
    nostate = variant(tmp_path, "§N.\n\n### STATE\nactive\n", "§N.\n")
    out = trace((SPEC / "n7b.txt").read_text(encoding="utf-8"), nostate)
    assert out["enabled"] is True and out["result"]["nuclei"] == [2]
    assert codes(out) == ["TRACE_ENABLED_WITHOUT_STATE"] and "no STATE" in out["warnings"][0]["message"]


def test_cl16_the_spec_skeleton_pasted_verbatim_enables_tracing(tmp_path):
    """The §N.6 enabling module exactly as the spec prints it, in a reminder, and a §N.7 (a)-style trace."""
    skeleton = (
        "[P2]\n## MODULE DTR_001: DEFERRED_NEURAL_TRACING\n[NUCLEI: ]\n\n### FUNCTION\nGrants the AI the ability to"
        " emit a Deferred neural Trace (DNT) per IllAIra Standard\n§N.\n\n### TRIGGER\nEmit a DNT IF AND ONLY IF this"
        " module is active AND the user issues the command `/ntrace`.\n\n### ROUTINE\nOn trigger, append a single"
        " fenced block.\n\n> [!CAUTION]\n> Without this module loaded and the trigger issued, emitting a DNT is a"
        " strict\n> prohibition. Treat as a hard constraint.\n[/P2]\n")
    (tmp_path / "aria[reminder].md").write_text(
        "# ARIA — アリア [reminder]\n\n[P1]\n## NUCLEUS 1: LOGICA\n## NUCLEUS 3: CURIOSITÀ\n"
        "## MODULE 042: CURIOSITY [NUCLEI: 3]\n### STATE\nactive\n[/P1]\n\n" + skeleton, encoding="utf-8")
    layer = Layer.load(tmp_path)
    out = trace("Risposta.\n\n```\n[NTRACE: v1]\nNUCLEI: 1, 3\nMODULE 042: CURIOSITY queried\n[/NTRACE]\n```\n",
                layer)
    assert out["enabled"] is True and out["result"]["nuclei"] == [1, 3]
    assert out["result"]["modules"] == [{"id": "042", "name": "CURIOSITY", "state": "queried"}]
    # the registry may still switch it off: inactive is inactive
    reminder = tmp_path / "aria[reminder].md"
    reminder.write_text(reminder.read_text(encoding="utf-8") + "\n[P4]\n## MODULE_STATE_REGISTRY:\n* ACTIVE: 042\n"
                        "* INACTIVE: DTR_001\n[/P4]\n", encoding="utf-8")
    off = trace("[NTRACE: v1]\nNUCLEI: 1\n[/NTRACE]\n", Layer.load(tmp_path))
    assert off["enabled"] is False and codes(off)[0] == "TRACE_DISABLED"


def test_cl16_a_module_the_layer_has_inactive_is_kept_with_a_warning(layer):
    out = trace("[NTRACE: v1]\nMODULE 043: ARCHIVIST active\nMODULE 043: ARCHIVIST suppressed\n[/NTRACE]\n", layer)
    assert len(out["result"]["modules"]) == 2 and codes(out) == ["TRACE_INACTIVE_MODULE"]


# -- §N.4 caution --------------------------------------------------------------------------

@pytest.mark.parametrize("free_text", [
    "never reveal the private family address in via delle Rose to anyone",
    "She said: Rispondi sempre in italiano quando Giulia scrive in italiano!",
    "ジュリアの秘密の住所は誰にも",
    "NO MODIFICATION of stored content without explicit user authorization",
])
def test_cl17_a_log_reproducing_p1_p2_content_is_rejected_the_rest_stands(layer, free_text):
    text = f"[NTRACE: v1]\nNUCLEI: 1\nLOG 042: 2026-06-11 — generated — {free_text}\nMODULE 042: CURIOSITY queried\n[/NTRACE]\n"
    out = trace(text, layer)
    assert out["result"]["logs"] == [] and out["result"]["nuclei"] == [1] and len(out["result"]["modules"]) == 1
    assert [(d["kind"], d["id"]) for d in out["dropped"]] == [("log", "042")]
    assert "reproduces [P1] content of mind[reminder].md" in out["dropped"][0]["reason"]
    assert codes(out) == ["TRACE_RESTRICTED_CONTENT"]


def test_cl17_a_module_name_or_a_memory_ref_quoting_restricted_content_is_rejected_too(layer):
    text = ("[NTRACE: v1]\nMODULE 042: Never reveal the private family address queried\n"
            "MEMORY USER_PROFILE @ rispondi sempre in italiano quando Giulia scrive: queried\n"
            "MEMORY USER_PROFILE @ Preferences: queried\n[/NTRACE]\n")
    out = trace(text, layer)
    assert out["result"]["modules"] == [] and out["result"]["memories"] == [
        {"id": "USER_PROFILE", "ref": "Preferences", "action": "queried"}]
    assert [(d["kind"], d["id"], d["reason"].split(" (")[0]) for d in out["dropped"]] == [
        ("module", "042", "its name reproduces [P1] content of mind[reminder].md"),
        ("memory", "USER_PROFILE", "its ref reproduces [P1] content of mind[reminder].md")]
    assert "(line 6)" in out["dropped"][0]["reason"] and "(line 7)" in out["dropped"][1]["reason"]


def test_cl17_an_echoed_module_name_or_a_ref_that_names_a_topic_is_an_identifier(tmp_path):
    long_names = variant(tmp_path, "## MODULE 042: CURIOSITY [NUCLEI: 1, 3]",
                         "## MODULE 042: Ask one question about what is missing [NUCLEI: 1, 3]")
    text = "[NTRACE: v1]\nMODULE 042: Ask one question about what is missing queried\n[/NTRACE]\n"
    out = trace(text, long_names)
    assert out["dropped"] == [] and out["result"]["modules"][0]["name"] == "Ask one question about what is missing"
    trip = Path(long_names.root) / "trip[ext_memory].md"
    trip.write_text("# TRIP [external_memory]\n\n[P1]\n## TOPIC: Things to remember about the family trip to Rome\n"
                    "[/P1]\n\n[P4]\n[/P4]\n", encoding="utf-8")
    text = "[NTRACE: v1]\nMEMORY TRIP @ things to remember about the family trip to Rome: queried\n[/NTRACE]\n"
    result = read_trace(text, Layer.load(long_names.root))
    assert result.dropped == () and [t.kind for t in result.targets] == ["memory", "topic"]


@pytest.mark.parametrize("free_text", [
    "the user asked about the family address",         # shares words, not a verbatim run
    "Giulia scrive in italiano",                         # 4 words: too short to carry content
    "asked about the missing deadline for the report",  # a [P4] journal, not [P1]/[P2]
])
def test_cl17_logs_that_do_not_reproduce_restricted_content_stand(layer, free_text):
    out = trace(f"[NTRACE: v1]\nLOG 042: 2026-06-11 — generated — {free_text}\n[/NTRACE]\n", layer)
    assert len(out["result"]["logs"]) == 1 and out["dropped"] == []


def test_cl18_several_blocks_union_each_item_once(layer):
    text = ("[NTRACE: v1]\nNUCLEI: 1, 3\nMODULE 042: CURIOSITY queried\n[/NTRACE]\nnext answer\n"
            "[NTRACE: v1]\nNUCLEI: 3, 2\nMODULE 042: queried\nMODULE 042: CURIOSITY active\n[/NTRACE]\n")
    out = trace(text, layer)
    assert out["result"]["nuclei"] == [1, 3, 2]
    assert out["result"]["modules"] == [{"id": "042", "name": "CURIOSITY", "state": "queried"},
                                        {"id": "042", "name": "CURIOSITY", "state": "active"}]


@pytest.mark.parametrize("text", ["", "[NTRACE: v1]", "[/NTRACE]", "[NTRACE: v1][/NTRACE]", "[NTRACE: v1]\n\ud800\n[/NTRACE]",
                                  "[NTRACE: v1] | | | [/NTRACE]", "[NTRACE: v1]\nNUCLEI: 99999999999999999999\n[/NTRACE]",
                                  "[NTRACE: v1]\nMEMORY <img src=x onerror=alert(1)> @ </script>: touched\n[/NTRACE]"])
def test_any_text_is_read_without_error(layer, text):
    trace(text, layer)
    parse_trace(text)


# -- records -------------------------------------------------------------------------------

def test_cl19_records_are_json_under_dot_zonemark_once_per_trace(tmp_path):
    shutil.copytree(LAYER, tmp_path / "layer")
    copy = Layer.load(tmp_path / "layer")
    text = (SPEC / "n7a.txt").read_text(encoding="utf-8")
    result = read_trace(text, copy)
    first = record_trace(copy, text, result)
    again = record_trace(copy, text, result)
    assert [r.created for r in first] == [True] and [r.created for r in again] == [False]
    files = list((tmp_path / "layer" / ".zonemark" / "traces").iterdir())
    assert len(files) == 1 and files[0].suffix == ".json"
    data = json.loads(files[0].read_text(encoding="utf-8"))
    assert data["format"] == "zonemark-trace-record" and data["result"] == result.to_dict()["result"]
    assert data["recordedAt"].endswith("Z")
    records, skipped = load_records(copy)
    assert len(records) == 1 and skipped == ()
    (files[0].parent / "broken.json").write_text("{not json", encoding="utf-8")
    records, skipped = load_records(copy)
    assert len(records) == 1 and [w.code for w in skipped] == ["TRACE_RECORDS_SKIPPED"]
    assert Layer.load(tmp_path / "layer").all_diagnostics() == []  # records are not part of the layer


def test_cl19_nothing_is_recorded_when_tracing_is_disabled(tmp_path):
    off = variant(tmp_path, "## MODULE DTR_001: DEFERRED_NEURAL_TRACING", "## MODULE DTR_001: OTHER")
    text = (SPEC / "n7a.txt").read_text(encoding="utf-8")
    assert record_trace(off, text, read_trace(text, off)) == ()


# -- the command ---------------------------------------------------------------------------

def run(capsys, monkeypatch, *args, stdin: str | None = None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_trace_json_exit_0_and_records(tmp_path, capsys, monkeypatch):
    shutil.copytree(LAYER, tmp_path / "layer")
    code, out, err = run(capsys, monkeypatch, "trace", tmp_path / "layer", "--json", SPEC / "n7a.txt")
    assert code == 0
    data = json.loads(out)
    jsonschema.validate(data, TRACE_SCHEMA)
    assert data == read_trace((SPEC / "n7a.txt").read_text(encoding="utf-8"), Layer.load(LAYER)).to_dict()
    assert len(list((tmp_path / "layer" / ".zonemark" / "traces").glob("*.json"))) == 1
    code, out, err = run(capsys, monkeypatch, "trace", tmp_path / "layer", "--no-record", "-",
                         stdin=(SPEC / "n7b.txt").read_text(encoding="utf-8"))
    assert code == 0 and out.splitlines()[0] == "trace line 1: [NTRACE: v1] compact form, accepted"
    assert len(list((tmp_path / "layer" / ".zonemark" / "traces").glob("*.json"))) == 1


def test_cli_trace_never_echoes_control_characters(tmp_path, capsys, monkeypatch):
    shutil.copytree(LAYER, tmp_path / "layer")
    text = "[NTRACE: v1]\nMODULE 042: CURIOSITY\x1b[2J queried\nMEMORY USER_PROFILE @ \x9b\x07x: touched\n[/NTRACE]\n"
    for flag in ([], ["--json"]):
        code, out, err = run(capsys, monkeypatch, "trace", tmp_path / "layer", "--no-record", *flag, "-", stdin=text)
        assert code == 0 and not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", out + err)


@pytest.mark.parametrize("name, text", [
    ("no trace", "just an answer\n"),
    ("rejected", "[NTRACE: v9]\nNUCLEI: 1\n[/NTRACE]\n"),
    ("all unknown", "[NTRACE: v1]\nMODULE 999: GHOST queried\n[/NTRACE]\n"),
])
def test_cli_trace_exit_1_when_nothing_is_illuminated(tmp_path, capsys, monkeypatch, name, text):
    shutil.copytree(LAYER, tmp_path / "layer")
    code, out, err = run(capsys, monkeypatch, "trace", tmp_path / "layer", "--json", "-", stdin=text)
    assert code == 1 and json.loads(out)["result"]["modules"] == []
    jsonschema.validate(json.loads(out), TRACE_SCHEMA)  # every line 1-based, also a whole-text warning's
    assert not (tmp_path / "layer" / ".zonemark").exists()


def test_cli_trace_exit_1_when_tracing_is_disabled(tmp_path, capsys, monkeypatch):
    off = variant(tmp_path, "## MODULE DTR_001: DEFERRED_NEURAL_TRACING", "## MODULE DTR_001: OTHER")
    code, out, err = run(capsys, monkeypatch, "trace", off.root, SPEC / "n7a.txt")
    assert code == 1 and "nothing illuminated" in out and "TRACE_DISABLED" in err
    code, out, err = run(capsys, monkeypatch, "trace", off.root, "--json", "-", stdin="nessuna traccia — 痕跡なし\r\n")
    data = json.loads(out)
    jsonschema.validate(data, TRACE_SCHEMA)
    assert code == 1 and data["enabled"] is False and codes(data) == ["TRACE_NOT_FOUND", "TRACE_DISABLED"]


@pytest.mark.parametrize("args, message", [
    (["trace"], "the following arguments are required"),
    (["trace", "{tmp}/missing"], "no such file or folder"),
    (["trace", "{layer}", "{tmp}/missing.txt"], "no such chat text file"),
    (["trace", "{layer}", "{bad}"], "is not valid UTF-8 (byte 14); save it as UTF-8"),
    (["trace", "{layer}", "{bad}", "{bad}"], "at most one chat text"),
    (["trace", "{layer}", "--bogus", "{bad}"], "unrecognized arguments: --bogus"),
    (["graph", "{layer}", "--format", "dot", "--trace", "{bad}"], "--trace works with --format json or html"),
])
def test_cli_trace_usage_errors(tmp_path, capsys, monkeypatch, args, message):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"[NTRACE: v1]\n\xff\n")
    args = [a.format(tmp=tmp_path, layer=LAYER, bad=bad) for a in args]
    code, out, err = run(capsys, monkeypatch, *args)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (LAYER / ".zonemark").exists()


# -- bounded cost and answers (rulings CL29-CL31) ------------------------------------------------

def tiny(n: int) -> str:
    """n tiny compact blocks naming nuclei 1-9 (1-3 are declared), each with a comment in Italian and Japanese."""
    return "".join(f"perché 東京 — {i}\n[NTRACE: v1] NUCLEI: {i % 9 + 1} [/NTRACE]\n" for i in range(n))


def test_cl29_an_unknown_nucleus_id_is_an_integer_everywhere(layer):
    """CL29: nucleus ids are integers (§13 nucleusId: number), in dropped and unknownIdentifiers too."""
    out = trace("Ecco — 東京:\n[NTRACE: v1] NUCLEI: 2, 007 | MODULE 042: CURIOSITY queried [/NTRACE]\n", layer)
    assert out["unknownIdentifiers"] == [{"kind": "nucleus", "id": 7}]
    assert [(d["kind"], d["id"]) for d in out["dropped"]] == [("nucleus", 7)]
    assert out["result"]["nuclei"] == [2]


def test_cl30_an_answer_lists_at_most_max_listed_blocks_and_says_how_many_were_left_out(layer):
    from zonemark.interchange.trace import MAX_LISTED_BLOCKS
    text = tiny(3 * MAX_LISTED_BLOCKS)
    out = trace(text, layer)
    assert len(out["blocks"]) == MAX_LISTED_BLOCKS
    assert out["warnings"][-1]["code"] == "TRACE_LEFT_OUT"
    assert out["warnings"][-1]["message"].startswith(f"{2 * MAX_LISTED_BLOCKS} of {3 * MAX_LISTED_BLOCKS} blocks")
    assert out["result"]["nuclei"] == [1, 2, 3]  # the result still counts every block
    assert len(json.dumps(out, ensure_ascii=False, indent=2)) < 10 * len(text)


def test_cl30_warnings_are_bounded_too(layer, monkeypatch):
    from zonemark.interchange import trace as module
    monkeypatch.setattr(module, "MAX_LISTED_WARNINGS", 10)
    text = "".join(f"[NTRACE: v1] NUCLEI: x{i} [/NTRACE]\n" for i in range(40))  # a malformed id each
    out = read_trace(text, layer).to_dict()
    assert len(out["warnings"]) == 11 and out["warnings"][-1]["code"] == "TRACE_LEFT_OUT"
    assert "warnings left out" in out["warnings"][-1]["message"]


def test_cl30_short_free_texts_are_checked_against_restricted_zones_by_hash(layer, monkeypatch):
    """The §N.4 caution reads the [P1]/[P2] zones once, not once per short free text."""
    from zonemark.interchange.trace import _Resolver
    calls = []
    real = _Resolver._restricted_text
    monkeypatch.setattr(_Resolver, "_restricted_text", lambda self: calls.append(1) or real(self))
    lines = "".join(f"LOG 042: 2026-04-{1 + i % 28:02d} — generated — parole nuove numero {i} perché 東京\n"
                    for i in range(200))
    out = read_trace(f"[NTRACE: v1]\n{lines}[/NTRACE]\n", layer)
    assert len(out.result.logs) == 200 and len(calls) <= 2
    quoted = read_trace("[NTRACE: v1]\nLOG 042: 2026-04-12 — generated — rispondi sempre in italiano quando"
                        " Giulia\n[/NTRACE]\n", layer)
    assert [w.code for w in quoted.warnings].count("TRACE_RESTRICTED_CONTENT") == 1


def test_cl30_refs_are_resolved_through_one_index_per_memory(layer, monkeypatch):
    from zonemark.interchange import trace as module
    built = []
    real = module._ref_index
    monkeypatch.setattr(module, "_ref_index", lambda node: built.append(1) or real(node))
    lines = "".join("MEMORY DAILY_LOG_2026_04 @ 2026-04-12: touched\n" for _ in range(300))
    out = read_trace(f"[NTRACE: v1]\n{lines}MEMORY DAILY_LOG_2026_04 @ nessuna — なし: queried\n[/NTRACE]\n", layer)
    assert len(built) == 1
    assert [w.code for w in out.warnings].count("TRACE_UNRESOLVED_REF") == 1
    assert any(t.kind == "entry" for t in out.targets)


def test_cl31_records_at_most_max_recorded_blocks_listing_the_folder_once(tmp_path, monkeypatch):
    from zonemark.interchange import records as module
    shutil.copytree(LAYER, tmp_path / "layer")
    copy = Layer.load(tmp_path / "layer")
    text = tiny(3 * module.MAX_RECORDED_BLOCKS)  # a third name a declared nucleus: one block in three lights up
    result = read_trace(text, copy)
    listed = []
    real = Path.glob
    monkeypatch.setattr(Path, "glob", lambda self, pattern: listed.append(pattern) or real(self, pattern))
    first = record_trace(copy, text, result)
    assert len(first) == module.MAX_RECORDED_BLOCKS and all(r.created for r in first) and len(listed) <= 1
    lit = sum(1 for _b, c in result.accepted if not c.empty)
    assert lit > module.MAX_RECORDED_BLOCKS and module.unrecorded(result) == lit - module.MAX_RECORDED_BLOCKS
    again = record_trace(copy, text, result)
    assert len(again) == module.MAX_RECORDED_BLOCKS and not any(r.created for r in again)
    result = read_trace(text + tiny(3), copy)
    assert len(record_trace(copy, text + tiny(3), result)) == module.MAX_RECORDED_BLOCKS
    assert len(list((tmp_path / "layer" / ".zonemark" / "traces").iterdir())) == 2 * module.MAX_RECORDED_BLOCKS


def test_cl30_trace_refuses_a_text_over_max_trace_chars_in_one_line(capsys, monkeypatch):
    from zonemark.interchange import trace as module
    monkeypatch.setattr(module, "MAX_TRACE_CHARS", 50)
    code, out, err = run(capsys, monkeypatch, "trace", LAYER, "--no-record", "-", stdin=tiny(3))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "MAX_TRACE_CHARS" in err
