"""The documentation that is drawn from the code catalogue stays in step with it."""

from pathlib import Path

from rulings_support import sources_of_tests
from zonemark import CATALOGUE
from zonemark.cli.main import main
from zonemark.render.docgen import render_catalogue

ROOT = Path(__file__).resolve().parents[2]


def test_conformance_doc_catalogue_is_generated_from_the_code():
    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    assert render_catalogue() in text, "run: python -m zonemark.render.docgen docs/conformance.md"


def test_every_code_is_documented_and_explained(capsys):
    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    for code in CATALOGUE:
        assert f"| `{code}` |" in text
        assert main(["explain", code]) == 0
        out = capsys.readouterr().out
        assert out.startswith(code) and CATALOGUE[code].section in out


def test_rulings_cite_tests_that_exist():
    text = (ROOT / "docs" / "conformance.md").read_text(encoding="utf-8")
    rulings = (ROOT / "tests" / "meta" / "test_rulings.py").read_text(encoding="utf-8")
    import re
    for prefix in set(re.findall(r"`(test_r\d+)_", text)):
        assert f"def {prefix}_" in rulings, prefix
    # every test the document cites anywhere, by name or as file::name, is defined (a name ending in "_"
    # stands for a family of tests: test_e1_)
    here = sources_of_tests()
    cited = set(re.findall(r"`(test_\w+)`", text)) | set(re.findall(r"::(test_\w+)", text))
    names = [name for name in cited if not name.endswith("_")]
    assert len(names) > 400
    for name in names:
        assert f"def {name}(" in here, name
