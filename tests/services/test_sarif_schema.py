"""``zonemark check --format sarif`` is valid SARIF 2.1.0: the official schema (tests/fixtures/sarif/), with its
``uri`` and ``uri-reference`` formats checked, on file names that hold what §3.4 names hold (``[``, ``]``)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest

from zonemark.cli.main import main

SCHEMA = json.loads((Path(__file__).parents[1] / "fixtures" / "sarif" / "sarif-schema-2.1.0.json")
                    .read_text(encoding="utf-8"))

BROKEN_MEMORY = """# Viaggi — 東京 [external_memory]

[P1]
## TOPIC: Viaggi — perché
[/P1]

[P4]
###### LOG: 2026-05-03 — unclosed zone
"""


def validator():
    cls = jsonschema.validators.validator_for(SCHEMA)
    return cls(SCHEMA, format_checker=jsonschema.FormatChecker())


def test_the_format_checker_really_checks_uri_references():
    """Without a format package jsonschema passes every ``uri-reference``: the test extra must bring one."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "zonemark"}}, "results": [
        {"message": {"text": "x"}, "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": "layer/aria[reminder].md"}}}]}]}]}
    errors = list(validator().iter_errors(bad))
    assert [e.validator for e in errors] == ["format"], errors
    assert "uri-reference" in errors[0].message
    bad["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "layer/ok.md"
    assert list(validator().iter_errors(bad)) == []


def test_check_sarif_is_valid_sarif_with_bracketed_and_non_ascii_file_names(tmp_path, capsys):
    layer = tmp_path / "my layer"
    layer.mkdir()
    names = ["notes[ext_memory].md", "東京 perché[ext_memory].md", "a#b:c[ext_memory].md"]
    for name in names:
        (layer / name).write_text(BROKEN_MEMORY, encoding="utf-8")
    assert main(["check", "--format", "sarif", str(layer), str(layer / names[0])]) == 1
    sarif = json.loads(capsys.readouterr().out)
    assert list(validator().iter_errors(sarif)) == []
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]]
    assert len(uris) >= 4
    for uri in uris:
        assert "[" not in uri and "]" not in uri and " " not in uri and "#" not in uri
    # every uri reads back as the path it names (the folder itself holds the layer-wide LAYER_NO_REMINDER)
    assert {unquote(u) for u in uris} == {str(layer / n) for n in names} | {str(layer)}


@pytest.mark.parametrize("path", ["aria[reminder].md", "dir/東京[ext_memory].md", "-", "a b/c%d.md", "x:y.md"])
def test_artifact_uri_is_a_uri_reference_that_reads_back(path):
    from zonemark.render.formats import artifact_uri
    uri = artifact_uri(path)
    assert jsonschema.FormatChecker().conforms(uri, "uri-reference")
    assert unquote(uri) == path


def test_an_undecodable_byte_of_a_file_name_is_encoded_as_that_byte():
    from zonemark.render.formats import artifact_uri
    assert artifact_uri("bad\udcff[reminder].md") == "bad%FF%5Breminder%5D.md"
