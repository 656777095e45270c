"""The chat-text readers keep their behaviour while their memory is made compact (§N.18, §N.19, CL30).

``tests/logs_reference.py`` and ``tests/trace_reference.py`` are frozen copies of the log extraction and
of the trace reader as they were when every line of the text was a string of a list and every block a
full object; on random chat texts made of their alphabet (headers of every level and shape, [/LOG] markers
alone and not, fences, trace markers of both families, compact and block forms, entries of every kind,
CR LF, Italian and Japanese text) the new code gives the same entries, blocks, warnings and results.
"""

from __future__ import annotations

import os

import logs_reference as logs_ref
import pytest
import trace_reference as trace_ref
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from zonemark.interchange import trace as trace_module
from zonemark.interchange.logs import extract_logs
from zonemark.layer import Layer

EXAMPLES = int(os.environ.get("ZONEMARK_SANITIZE_EXAMPLES", "200"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

LOG_LINES = [
    "###### LOG: 2026-01-01 — prima", "###### LOG: 2026-13-01 — data", "###### LOG:", "  ###### LOG: 2026-01-02 — x",
    "LOG: 2026-01-03 — senza cancelletti", "**LOG: 2026-01-03 — enfasi**", "### LOG: livello", "###### Log titolo",
    "###### LOGISTICA", "[/LOG]", "  [/LOG]\u200b ", "**[/LOG]**", "[/log]", "> [/LOG]", "```", "~~~", "  ```",
    "````", "``` py", "", " ", "\t", "perché — 東京", "corpo", "# H1", "- voce", "\r", "x\r",
]
TRACE_LINES = [
    "[NTRACE: v1]", "[/NTRACE]", "[TRACE: v1]", "[/TRACE]", "[NTRACE: v2]", "[NTRACE]", "**[NTRACE: v1]**",
    "`[/NTRACE]`", "[NTRACE: v1] NUCLEI: 1, 3 | MODULE 001: ANCHOR active | MEMORY Alpha: queried [/NTRACE]",
    "[NTRACE: v1] NUCLEI: 2 | MODULE 001: queried", "continua [/NTRACE]", "NUCLEI: 1, 2, x", "NUCLEI: 9",
    "MODULE 001: ANCHOR active", "MODULE 042: strano wobbly", "MODULE 001", "MODULE",
    "LOG 001: 2026-01-01 — generated — perché 東京", "LOG 001: ieri — boh — x", "LOG 001",
    "MEMORY Alpha: queried", "MEMORY Alpha @ 2026-01-01: touched", "MEMORY Nessuna: appended", "MEMORY : x",
    "testo sparso", "la parola [NTRACE: v1] in una frase", "[NTRACE: v1] e poi prosa", "```", "", "  ",
    "*MODULE* 001: ANCHOR *active*", "MEMORY Alpha @ Keeps the notes of 東京: queried",
]


def chat(alphabet):
    return st.lists(st.tuples(st.sampled_from(alphabet), st.sampled_from(["\n", "\n", "\r\n"])), max_size=16).map(
        lambda parts: "".join(a + b for a, b in parts)) | st.lists(st.sampled_from(alphabet), max_size=16).map(
        "\n".join)


@SETTINGS
@given(chat(LOG_LINES))
@example("###### LOG: 2026-01-01 — a\n\n x \r\n\n[/LOG]\n[/LOG]\n```\n###### LOG: 2026-01-02 — b\nc\n```\nd")
@example("###### LOG: 2026-01-01 — a\r")
def test_the_log_entries_are_extracted_as_before(text):
    assert extract_logs(text).to_dict() == logs_ref.extract_logs(text).to_dict()


REMINDER = """# Aria — identity protocol [reminder]

[P1]
## RULES:
* R0: Answer plainly — perché conta.

## NUCLEUS 1: LOGICAL_OPERATIVE

## NUCLEUS 2: CREATIVE
[/P1]

[P1]
## MODULE 001: ANCHOR [NUCLEI: 1]
### FUNCTION
Keeps the notes of 東京.
### STATE
active
[/P1]

[P1]
## MODULE 002: DEFERRED_NEURAL_TRACING [NUCLEI: 1]
### STATE
active
[/P1]
"""
MEMORY = "# Alpha [external_memory]\n\n[P1]\n## TOPIC: Uno\n[/P1]\n\n[P4]\n###### LOG: 2026-01-01 — inizio\nx\n[/P4]\n"


@pytest.fixture(scope="module")
def layer(tmp_path_factory):
    folder = tmp_path_factory.mktemp("layer")
    (folder / "aria[reminder].md").write_text(REMINDER, encoding="utf-8")
    (folder / "alpha[ext_memory].md").write_text(MEMORY, encoding="utf-8")
    return Layer.load(folder)


def same_trace(text, layer, keep=None):
    saved = trace_module._KEPT_BLOCKS
    if keep is not None:
        trace_module._KEPT_BLOCKS = keep
    try:
        new = trace_module.read_trace(text, layer)
    finally:
        trace_module._KEPT_BLOCKS = saved
    old = trace_ref.read_trace(text, layer)
    assert new.to_dict() == old.to_dict()
    assert [b.to_dict() for b in new.blocks] == [b.to_dict() for b in old.blocks]
    assert [(b.to_dict(), c.to_dict()) for b, c in new.accepted] == [(b.to_dict(), c.to_dict()) for b, c in old.accepted]
    assert [(w.code, w.message, w.line) for w in new.warnings] == [(w.code, w.message, w.line) for w in old.warnings]
    assert [t.__dict__ if hasattr(t, "__dict__") else repr(t) for t in new.targets] == \
        [t.__dict__ if hasattr(t, "__dict__") else repr(t) for t in old.targets]
    assert (new.found, new.illuminated, len(new.blocks), len(new.accepted)) == \
        (old.found, old.illuminated, len(old.blocks), len(old.accepted))


@SETTINGS
@given(chat(TRACE_LINES), st.sampled_from([0, 1, 2, None]))
@example("[NTRACE: v1]\nMODULE 001: ANCHOR active\n[/NTRACE]\n[NTRACE: v1] NUCLEI: 1 [/NTRACE]\n[NTRACE: v2]\n[/NTRACE]", 0)
def test_the_traces_are_read_as_before(layer, text, keep):
    same_trace(text, layer, keep)
