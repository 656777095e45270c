"""Generated chats and memory files for the B25 identity test (``tests/meta/test_bounded_cost.py``, ``test_b25_*``): the same cases
the golden answers in ``tests/fixtures/interchange/b25_golden.json`` were made from, before B25."""

from __future__ import annotations

import hashlib
import random
import shutil
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHATS = ROOT / "tests" / "fixtures" / "interchange" / "chats"
GOLDEN = ROOT / "tests" / "fixtures" / "interchange" / "b25_golden.json"

MEMORY = """# Casa e macchina — perché [external_memory]

[P1]
## TOPIC: Macchina
[/P1]

[P4]
###### LOG: 2026-09-06 — Tagliando generale
Olio e filtri cambiati a 84 300 km.
[/P4]

[P1]
## TOPIC: 日記
[/P1]

[P4]
[/P4]

[P1]
## TOPIC: Archivio
[/P1]

[P3]
###### LOG: 2026-01-01 — vecchio
Solo l'utente lo cambia.
[/P3]
"""

TITLES = ("Tagliando prenotato", "東京の会議", "Perché — sì", "Riunione 日本", "Gomme — invernali", "x")
BODIES = ("Officina Rossi; venerdì alle 8:30 — costo 180\u00a0€.", "会議は午後三時に始まります。", "",
          "- uno\n- due\n  - tre", "## TOPIC: Falso\n[P4]\n[/P4]", "> [!WARNING] attenzione — qui",
          "* R1: non una regola", "```\ncodice\n```", "riga\r\naltra riga — fine", "[/LOG] **[/LOG]**",
          "Olio e filtri cambiati a 84 300 km.")


def chat(seed: int, n: int) -> str:
    """A chat of about ``n`` entries: dated, undated, hashless, refused (bad date, no title), repeated ones."""
    rnd = random.Random(seed)
    out: list[str] = ["Ecco i log — ecco:\n\n"]
    made: list[str] = []
    for i in range(n):
        pick = rnd.random()
        if made and pick < 0.15:
            out.append(rnd.choice(made))
            continue
        title = rnd.choice(TITLES) + ("" if rnd.random() < 0.3 else f" {i}")
        body = rnd.choice(BODIES)
        if pick < 0.22:
            head = f"###### LOG: 2026-02-30 — {title}"  # not a date
        elif pick < 0.27:
            head = "###### LOG: 2026-03-01 —"  # no title
        elif pick < 0.37:
            head = f"###### LOG — {title}"  # no date
        elif pick < 0.45:
            head = f"LOG: 2026-04-0{1 + i % 9} — {title}"  # selected on screen
        elif pick < 0.5:
            head, title, body = "###### LOG: 2026-09-06 — Tagliando generale", "", BODIES[-1]  # in the file
        else:
            head = f"###### LOG: 2026-0{1 + i % 9}-1{i % 10} — {title}"
        end = rnd.choice(("\n[/LOG]\n", "\n", "\n\nE poi la chat continua.\n[/LOG]\n"))
        text = f"{head}\n{body}{end}\n"
        made.append(text)
        out.append(text)
    return "".join(out)


def cases() -> list[tuple[str, str, str, str, bool]]:
    """(name, chat, container, actor, dry run) of every case."""
    found: list[tuple[str, str, str, str, bool]] = []
    for seed in range(6):
        for container, actor in (("Macchina", "ai"), ("日記", "ai"), ("Archivio", "user"), ("Archivio", "ai")):
            found.append((f"gen{seed}-{container}-{actor}", chat(seed, 5 + 9 * seed), container, actor, seed % 2 == 0))
    for path in sorted(CHATS.glob("*.txt")):
        found.append((path.name, path.read_text(encoding="utf-8"), "Macchina", "ai", False))
    return found


def run(ingest: Any, folder: Path) -> dict[str, Any]:
    """Every case's JSON report (its file named ``FILE``) and the sha256 of the memory file after it."""
    answers: dict[str, Any] = {}
    for name, text, container, actor, dry_run in cases():
        case = folder / hashlib.sha256(name.encode()).hexdigest()[:12]
        if case.exists():
            shutil.rmtree(case)
        case.mkdir(parents=True)
        memory = case / "casa[ext_memory].md"
        memory.write_text(MEMORY, encoding="utf-8", newline="")
        try:
            report = ingest(memory, container, text, actor=actor, dry_run=dry_run, today="2026-02-01",
                            date=None).to_dict()
            report["file"] = "FILE"
        except Exception as exc:  # a refusal of the whole text is an answer too
            report = {"error": type(exc).__name__, "message": str(exc).replace(str(memory), "FILE")}
        answers[name] = {"report": report, "bytes": hashlib.sha256(memory.read_bytes()).hexdigest()}
    return answers
