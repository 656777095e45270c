"""The repository's corpus: deterministic, realistic, valid IllAIra Markdown Standard v1.13 files.

    python bench/corpus.py --kind reminder|module|memory|mixed --size 10MB [--seed N] -o FILE
    python bench/corpus.py --layer DIR --modules N --memories M [--size 200KB] [--ext-size 50KB] [--seed N]

Importable as well (standard library only)::

    from corpus import generate, generate_layer      # with bench/ on sys.path
    text = generate("memory", 1_000_000, seed=3)
    paths = generate_layer(folder, modules=5, memories=3, reminder_size=200_000, ext_size=50_000)

Kinds (every one written from the spec, §3-§14):

reminder  ``# Aria — identity protocol [reminder]``; one ``[P1]`` head (a plain H2 section,
          ``## RULES:`` with R/C/S rules, some with ``+`` sub-bullets, the ``## NUCLEUS n:``
          declarations, an alert); then per module a ``[P1]``/``[P2]``/``[P3]`` declaration
          (``## MODULE 042: NAME [NUCLEI: 1, 3]``, bold field labels, FUNCTION, STATE, TRIGGER,
          ROUTINE as nested ``* + -`` lists or numbered steps, CONNECTIONS bullets, alerts)
          followed by its own ``[P4]`` journal of ``###### LOG: YYYY-MM-DD — title`` entries
          (some empty); ``---`` between some modules; last the ``[P4]`` MODULE_STATE_REGISTRY
          (§7.3.1).
module    ``# NAME [external_module]`` (§7.1, §7.4.3): the nuclei its modules name, then modules
          with alphanumeric ids, each with its own ``[P4]`` journal.
memory    ``# Name [external_memory]`` (§7.1.2, §7.1.3): topics and sub-topics
          (``## TOPIC:``, ``### SUBTOPIC1:`` … ``##### SUBTOPIC3:``, now and then a skipped
          level), each declared in its own ``[P1]``/``[P2]`` zone and paired with its own
          ``[P4]`` journal, some of them empty; now and then an H6 that is not a LOG (§5.5 v1.7).
mixed     a reminder with the optional constructs on as well: the version pin (§15), sub-modules
          and subroutines (H3-H5), ``[NUCLEI: …]`` on its own line (§7.4.4), free-text
          CONNECTIONS lines, quotes, ``[P5]`` volatile zones, ``***`` separators, and code fences
          whose lines look like headers and zone tags (they are code, §5.5).

Layers (``generate_layer``): ``<agent>[reminder].md``, N ``<name>[ext_module].md`` and M
``<name>[ext_memory].md`` (file names per §3.4). The reminder holds the nuclei and a
MODULE_STATE_REGISTRY that names internal and external modules; every ``[NUCLEI: …]`` and
every CONNECTIONS bullet of every file names a nucleus or module declared in the layer.

Properties the tests pin (tests/meta/test_corpus.py):

* same arguments => byte-identical output: one ``random.Random`` seeded with a string, no clock,
  no hash or set iteration order;
* sizes are UTF-8 bytes, decimal units (1KB = 1,000 bytes); from MIN_SIZE (1 KB) to 100 MB a
  file lands at or just above its target: ``target <= size <= target + MAX_OVERSHOOT``;
* valid: every kind parses with zero errors and zero warnings; a layer loads with no
  diagnostic at all. One construct warns on purpose: an external module *of a layer* names the
  reminder's nuclei, so parsed alone (outside its layer) it reports
  UNRESOLVED_NUCLEUS_REFERENCE (§7.4.4), which ``Layer.load`` resolves;
* realistic: English and Italian prose with accents, ``—`` in log headers, dates in document
  order, bold field labels, inline code, links.
"""

from __future__ import annotations

import argparse
import datetime
import math
import random
import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

KINDS = ("reminder", "module", "memory", "mixed")
MIN_SIZE = 1_000
#: The most a file (of at least MIN_SIZE bytes) lands above its target.
MAX_OVERSHOOT = 64

# --------------------------------------------------------------------------------- vocabulary

EN_SUBJECTS = ("The user", "Marco", "Giulia", "Sofia", "Luca", "She", "He", "The team", "We", "Nadia")
EN_VERBS = ("reviewed", "moved", "postponed", "finished", "questioned", "rewrote", "checked", "booked",
            "cancelled", "noted", "compared", "fixed", "archived", "measured", "summarised", "shared")
EN_THINGS = ("the parser milestone", "the service appointment", "the weekly review", "the reading list",
             "the tyre pressures", "the monthly budget", "the morning routine", "the second draft",
             "the offsite backup", "the trip to Lisbon", "the vegetable garden", "the piano lesson",
             "the insurance renewal", "the doctor's visit", "the release notes", "the kitchen lights",
             "the quarterly report", "the running plan", "the birthday dinner", "the old photographs")
EN_TIMES = ("this morning", "after lunch", "before the call", "on Friday", "late in the evening",
            "during the walk", "at the end of the sprint", "yesterday", "last week", "on the train")
EN_REASONS = ("because the deadline moved", "since the numbers looked wrong", "to keep the week light",
              "as agreed", "without being asked", "for the second time", "after a long pause",
              "so that nothing is lost")
EN_MOODS = ("calm", "tired", "curious", "focused", "uncertain", "relieved", "impatient", "cheerful")
EN_TEMPLATES = (
    "{S} {V} {T} {W}.",
    "{S} {V} {T} {R}.",
    "{S} sounded {M} {W}; the answer stayed short.",
    "Next step: {T}, {W}.",
    "{S} asked for a short summary of {T}.",
    "It is unclear whether {T} still matters; ask again {W}.",
    "Keep {T} in mind {R}.",
    "The question was about {T}, not about {T2}.",
    "{S} {V} {T} and then {T2}, {R}.",
    "What happened to {T}? Nobody could say {W}.",
)

IT_SUBJECTS = ("L'utente", "Marco", "Giulia", "Sofia", "Luca", "Lei", "Lui", "Il team", "Nadia", "Aria")
IT_VERBS = ("ha rivisto", "ha spostato", "ha rimandato", "ha finito", "ha messo in dubbio", "ha riscritto",
            "ha controllato", "ha prenotato", "ha annullato", "ha annotato", "ha confrontato", "ha sistemato",
            "ha misurato", "ha riassunto", "ha condiviso")
IT_THINGS = ("la revisione settimanale", "il tagliando", "la lista di lettura", "la pressione delle gomme",
             "il bilancio del mese", "la seconda bozza", "il backup esterno", "il viaggio a Perugia",
             "l'orto", "la lezione di pianoforte", "il rinnovo dell'assicurazione", "la visita dal medico",
             "le note di rilascio", "le luci della cucina", "la relazione trimestrale",
             "il piano di corsa", "la cena di compleanno", "le vecchie fotografie", "la città nuova",
             "il caffè del mattino")
IT_TIMES = ("stamattina", "dopo pranzo", "prima della chiamata", "venerdì", "in serata", "già ieri",
            "la settimana scorsa", "più tardi", "in treno", "durante la passeggiata")
IT_REASONS = ("perché la scadenza è cambiata", "così la settimana resta leggera", "però senza fretta",
              "come concordato", "perché i numeri sembravano sbagliati", "più per abitudine che altro",
              "così non si perde niente", "dopo una lunga pausa")
IT_MOODS = ("di buon umore", "sotto pressione", "di fretta", "con la testa altrove", "un po' giù", "in forma")
IT_TEMPLATES = (
    "{S} {V} {T} {W}.",
    "{S} {V} {T} {R}.",
    "{S} era {M} {W}; la risposta è rimasta breve.",
    "Prossimo passo: {T}, {W}.",
    "Non è chiaro se {T} sia ancora importante; chiedere di nuovo {W}.",
    "Tenere a mente {T}, {R}.",
    "La domanda riguardava {T}, non {T2}.",
    "Perché {T} richiede già più tempo del previsto? Nessuna risposta, per ora.",
    "{S} {V} {T} e poi {T2}, {R}.",
    "Così va meglio: adesso {T} si capisce di più.",
)

EN_TITLES = ("weekly review", "service booked", "first activation", "threshold adjusted", "reading notes",
             "call with the bank", "new habit", "question left open", "plan changed", "small win",
             "follow-up", "decision parked", "measurement", "late reply", "draft sent")
IT_TITLES = ("revisione settimanale", "tagliando prenotato", "prima attivazione", "soglia corretta",
             "note di lettura", "telefonata con la banca", "nuova abitudine", "domanda aperta",
             "piano cambiato", "piccola vittoria", "città nuova, abitudini vecchie", "perché no",
             "decisione rimandata", "già fatto", "più tardi")
TAGS = ("casa", "viaggi", "salute", "lavoro", "budget", "garden", "reading", "music", "città", "caffè",
        "università", "family", "running", "piano", "auto", "review", "idee", "perché")
FREE_H6 = ("###### Nota personale", "###### Personal note", "######[LOG IA – ILLAIRA]",
           "###### [CITAZIONE FONDANTE – {title}]", "###### Idea — {title}")

FIELD_LABELS = ("Type", "Priority", "Owner", "Scope", "Tone", "Ambito", "Priorità", "Esito")
MODULE_TYPES = ("Autonomous / Inter-modular management", "Reactive", "Background monitor", "On demand",
                "Su richiesta", "Sempre attivo")
TRIGGER_LABELS = ("Ambiguous data", "Prolonged silence", "Paradox", "Session start", "Richiesta esplicita",
                  "Cambio di tono", "New file loaded", "Deadline")
STEP_LABELS = ("Detection", "Selection", "Execution", "Review", "Verifica", "Sintesi", "Handover")
ADJECTIVES = ("SILENT", "QUIET", "BRIGHT", "DEEP", "SWIFT", "CALM", "HIDDEN", "OPEN", "STEADY", "CURIOUS",
              "WARM", "SHARP", "GENTLE", "PATIENT", "LUCID", "RESTLESS", "SLOW", "FIRM", "KIND", "CLEAR")
NOUNS = ("ARCHIVE", "COMPASS", "LANTERN", "MIRROR", "BRIDGE", "GARDEN", "SIGNAL", "ANCHOR", "FORGE",
         "HARBOR", "WATCH", "LEDGER", "BEACON", "ORCHARD", "KEEL", "LOOM", "ENGINE", "LAYER", "FILTER", "GATE")
NUCLEUS_NAMES = ("LOGICAL_OPERATIVE", "EMPATHIC_RESONANCE", "CRITICAL_OBSERVER", "CREATIVE_DRIFT",
                 "PROTECTIVE_BOUNDARY", "PLAYFUL_TONE", "LONG_MEMORY")
AGENTS = ("Aria", "Lyra", "Orion", "Vega", "Nova", "Sirio", "Luna", "Atlas")
ALERTS = ("NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION")
STATES = ("active",) * 12 + ("inactive",) * 5 + ("active - permanent",) * 2 + ("inactive - permanent",)
TOPICS = ("Maintenance", "Tyres", "Insurance", "Reading", "Health", "Viaggi", "Città", "Lavoro", "Famiglia",
          "Musica", "Progetti", "Finanze", "Giardino", "Cucina", "Running", "Studio", "Amicizie", "Casa",
          "Pressures", "Bodywork", "Open questions", "Perché e percome", "Ideas", "Recipes", "Garden",
          "Bills", "Doctors", "Books", "Film visti", "Più tardi")
MEMORY_TITLES = ("Cars", "Journal", "Health", "Reading", "Travel", "Viaggi", "Casa", "Lavoro", "Music",
                 "Garden", "Città", "Progetti", "Family", "Running", "Finanze")
CODE_SNIPPETS = (
    ("bash", ("# count the entries of a journal", "grep -c '^###### LOG:' 'cars[ext_memory].md'")),
    ("python", ("# average weight of the selected items", "def score(items):",
                "    return sum(i.weight for i in items) / len(items)")),
    ("json", ('{"module": "042", "state": "active", "nuclei": [1, 3]}',)),
    ("text", ("Writable zones are append-only;", "older entries are never rewritten.")),
)
#: Fences (mixed kind) whose lines would be structure outside a fence: they are code (§5.5).
STRUCTURE_LOOKING_SNIPPETS = (
    ("markdown", ("## MODULE 999: EXAMPLE_ONLY [NUCLEI: 1]", "### STATE", "inactive")),
    ("markdown", ("[P4]", "###### LOG: 2026-01-01 — an example, not an entry", "[/P4]")),
    ("bash", ("# two hashes below are a comment too", "## not a header", "echo '* R9: not a rule'")),
)

# --------------------------------------------------------------------------------- helpers


def parse_size(text: str) -> int:
    """``1KB``, ``1.5 MB``, ``500`` (bytes): decimal units, as the benchmarks print them."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMG]?)B?", str(text).strip().upper())
    if not m:
        raise ValueError(f"not a size: {text!r} (try 100KB, 1MB, 10MB)")
    return int(float(m.group(1)) * {"": 1, "K": 10**3, "M": 10**6, "G": 10**9}[m.group(2)])


def _size(lines: list[str]) -> int:
    """UTF-8 bytes of ``lines`` written one per line."""
    return len("\n".join(lines).encode("utf-8")) + 1 if lines else 0


def _ascii_slug(name: str) -> str:
    """A file-name stem: accents dropped, lower case, ``_`` between words (§3.4 names stay ASCII here)."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "_", plain.lower()).strip("_") or "memory"


def _zone(level: int, body: list[str]) -> list[str]:
    return [f"[P{level}]", *body, f"[/P{level}]", ""]


class _Prose:
    """English and Italian sentences, titles and names, all drawn from one ``random.Random``."""

    def __init__(self, rng: random.Random, italian_share: float) -> None:
        self.rng = rng
        self.italian_share = italian_share

    def _language(self):
        if self.rng.random() < self.italian_share:
            return IT_TEMPLATES, IT_SUBJECTS, IT_VERBS, IT_THINGS, IT_TIMES, IT_REASONS, IT_MOODS
        return EN_TEMPLATES, EN_SUBJECTS, EN_VERBS, EN_THINGS, EN_TIMES, EN_REASONS, EN_MOODS

    def sentence(self) -> str:
        choice = self.rng.choice
        templates, subjects, verbs, things, times, reasons, moods = self._language()
        text = choice(templates).format(S=choice(subjects), V=choice(verbs), T=choice(things),
                                        T2=choice(things), W=choice(times), R=choice(reasons), M=choice(moods))
        roll = self.rng.random()
        if roll < 0.15:  # inline formatting (§11) on one word
            words = text.split(" ")
            i = self.rng.randrange(1, len(words) - 1) if len(words) > 2 else 0
            word = words[i].strip(",.;:?!")
            if word.isalpha() and len(word) > 3:
                style = self.rng.randrange(4)
                words[i] = words[i].replace(word, ("**{}**", "*{}*", "`{}`", "[{}](https://example.org/notes/{})")
                                            [style].format(word, word.lower()), 1)
            text = " ".join(words)
        return text

    def sentences(self, low: int, high: int) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(low, high)))

    def title(self) -> str:
        titles = IT_TITLES if self.rng.random() < self.italian_share else EN_TITLES
        return self.rng.choice(titles)

    def tag(self) -> str:
        return self.rng.choice(TAGS)

    def upper_name(self, used: set[str]) -> str:
        """``CALM_LANTERN``; a third word once the pairs run out. ``used`` is only tested, never iterated."""
        while True:
            parts = [self.rng.choice(ADJECTIVES), self.rng.choice(NOUNS)]
            if len(used) > len(ADJECTIVES) * len(NOUNS) // 2:
                parts.insert(0, self.rng.choice(ADJECTIVES))
            if len(used) > len(ADJECTIVES) ** 2 * len(NOUNS) // 2:
                parts.append(str(len(used)))
            name = "_".join(parts)
            if name not in used:
                used.add(name)
                return name


class _Clock:
    """Entry dates in document order (§7.5): each one at or after the one before.

    The span is about three years whatever the size; a step shorter than a day is written as a
    timestamp (``YYYY-MM-DDTHH:MM``), and now and then one is written that way anyway.
    """

    def __init__(self, rng: random.Random, expected_entries: int) -> None:
        self.rng = rng
        self.now = datetime.datetime(2023, 1, 1, 8, 0) + datetime.timedelta(days=rng.randrange(365))
        self.mean_minutes = max(1.0, 3 * 365 * 24 * 60 / max(1, expected_entries))

    def next(self) -> str:
        self.now += datetime.timedelta(minutes=int(self.rng.uniform(0, 2 * self.mean_minutes)))
        if self.mean_minutes < 24 * 60 or self.rng.random() < 0.15:
            return self.now.strftime("%Y-%m-%dT%H:%M")
        return self.now.strftime("%Y-%m-%d")


@dataclass(frozen=True)
class _Journal:
    """A place for a writable zone whose size is decided when the whole file is planned."""

    weight: float
    memory: bool


AVERAGE_ENTRY_BYTES = 330
RESERVE = 140  # room kept for the last, padded entry of a journal
TINY, SMALL, FULL = 0, 1, 2  # how much skeleton a file of a given size can carry


def _scale(target: int) -> int:
    return TINY if target < 6_000 else SMALL if target < 40_000 else FULL


def _nuclei(rng: random.Random, scale: int) -> list[int]:
    return list(range(1, (1, rng.randint(2, 3), rng.randint(3, 7))[scale] + 1))


class _Builder:
    """The blocks of every kind: rules, nuclei, modules, containers and journals."""

    def __init__(self, rng: random.Random, rich: bool = False) -> None:
        self.rng = rng
        self.rich = rich
        self.prose = _Prose(rng, italian_share=rng.choice((0.2, 0.35, 0.5, 0.65)))
        self.clock: _Clock  # set per file by fill(), which writes every dated entry

    # ------------------------------------------------------------------ lists and blocks

    def bullets(self, count: int, depth: int = 3, labels: bool = False) -> list[str]:
        """Root ``*`` items with ``+`` and ``-`` children (§8), some with a bold label (§11.1)."""
        out = []
        for _ in range(count):
            label = f"**{self.rng.choice(TRIGGER_LABELS)}:** " if labels and self.rng.random() < 0.6 else ""
            out.append(f"* {label}{self.prose.sentence()}")
            if depth > 1 and self.rng.random() < 0.35:
                for _ in range(self.rng.randint(1, 2)):
                    out.append(f"  + {self.prose.sentence()}")
                    if depth > 2 and self.rng.random() < 0.3:
                        out.append(f"    - {self.prose.sentence()}")
        return out

    def steps(self) -> list[str]:
        return [f"{i}. **{self.rng.choice(STEP_LABELS)}:** {self.prose.sentence()}"
                for i in range(1, self.rng.randint(3, 5))]

    def alert(self, keyword: str | None = None) -> list[str]:
        keyword = keyword or self.rng.choice(ALERTS)
        return [f"> [!{keyword}]", *(f"> {self.prose.sentence()}" for _ in range(self.rng.randint(1, 2)))]

    def fence(self, snippets=CODE_SNIPPETS) -> list[str]:
        language, lines = self.rng.choice(snippets)
        return [f"```{language}", *lines, "```"]

    # ------------------------------------------------------------------ journals (§7.5, §5.5)

    def entry(self, memory: bool) -> list[str]:
        """One H6 entry: a canonical LOG header (in a memory now and then any H6) and 1-3 blocks."""
        date = self.clock.next()
        if memory and self.rng.random() < 0.06:
            out = [self.rng.choice(FREE_H6).format(title=self.prose.title())]
        else:
            out = [f"###### LOG: {date} — {self.prose.title()}"]
        for i in range(self.rng.randint(1, 3)):
            if i:
                out.append("")
            roll = self.rng.random()
            if roll < 0.05:
                out += self.fence(CODE_SNIPPETS + (STRUCTURE_LOOKING_SNIPPETS if self.rich else ()))
            elif roll < 0.22:  # writable zones take root-level bullets only (§5.5)
                out += [f"* {self.prose.sentence()}" for _ in range(self.rng.randint(1, 4))]
            elif roll < 0.30:
                out.append(f"**{self.rng.choice(('Esito', 'Outcome', 'Mood', 'Umore'))}:** {self.prose.sentence()}")
            elif roll < 0.40:  # a paragraph wrapped over two lines
                out += [self.prose.sentence(), self.prose.sentence()]
            else:
                out.append(self.prose.sentences(1, 3))
        return out

    def padded_entry(self, room: int, memory: bool) -> list[str]:
        """An entry of ``room`` bytes or just above: a header, sentences, and a ``Tags:`` line grown to fit."""
        out = self.entry(memory)[:1]
        size = _size(out)
        misses = 0
        while room - size > 70 and misses < 8:
            sentence = self.prose.sentence()
            grow = len(sentence.encode("utf-8")) + 1
            if size + grow + 40 <= room:
                out.append(sentence)
                size += grow
            else:
                misses += 1
        if size >= room:
            return out
        tags = self.rng.sample(TAGS, len(TAGS))
        line = f"Tags: {tags.pop()}"
        size += len(line.encode("utf-8")) + 2  # the line and the blank line before it
        while size < room and tags:
            tag = tags.pop()
            line += f", {tag}"
            size += len(tag.encode("utf-8")) + 2
        out += ["", line]
        while size < room:
            out.append("Tutto qui, per ora.")
            size += len(out[-1].encode("utf-8")) + 1
        return out

    def journal(self, budget: int, memory: bool, must_reach: bool = False) -> list[str]:
        """A writable zone of entries filling ``budget`` bytes, landing at or just above it.

        With less room than one entry needs it is written empty (§7.1.2: the empty zone is the
        declared place for the next append), unless ``must_reach`` asks for one padded entry.
        """
        empty = _zone(4, [])
        if budget < _size(empty) + RESERVE and not (must_reach and budget > _size(empty)):
            return empty
        body: list[str] = []
        used = _size(empty)
        while True:
            entry = self.entry(memory)
            grow = _size(entry) + (1 if body else 0)  # a blank line between entries
            if used + grow + RESERVE > budget:
                break
            body += ([""] if body else []) + entry
            used += grow
        last = self.padded_entry(budget - used - (1 if body else 0), memory)
        body += ([""] if body else []) + last
        return _zone(4, body)

    def fill(self, parts: list, target: int) -> str:
        """The text of ``parts``, every ``_Journal`` sized so that the whole lands at ``target`` or just above.

        A zone is followed by a blank line; the file's last one is not (accounted for here).
        """
        trailing_blank = isinstance(parts[-1], _Journal) or parts[-1][-1:] == [""]
        target += trailing_blank
        fixed = sum(_size(p) for p in parts if isinstance(p, list))
        slots = [p for p in parts if isinstance(p, _Journal)]
        room = target - fixed
        weights = sum(s.weight for s in slots) or 1.0
        self.clock = _Clock(self.rng, max(1, room // AVERAGE_ENTRY_BYTES))
        out: list[str] = []  # one string per part: far fewer objects than one per line
        spent = 0
        last_slot = slots[-1] if slots else None
        planned = 0.0
        for part in parts:
            if isinstance(part, list):
                out.append("\n".join(part) + "\n")
                continue
            planned += room * part.weight / weights
            lines = self.journal(int(math.ceil(planned)) - spent, part.memory, must_reach=part is last_slot)
            spent += _size(lines)
            out.append("\n".join(lines) + "\n")
        text = "".join(out)
        return text[:-1] if trailing_blank else text

    # ------------------------------------------------------------------ declarations (§7, §9)

    def rules(self, scale: int) -> list[str]:
        """``## RULES:`` with R/C/S bullets (§9.2, §9.3), some continued on ``+`` sub-bullets."""
        randint = self.rng.randint
        counts = ((("R", 1), ("C", 1), ("S", 1)),
                  (("R", randint(2, 4)), ("C", randint(1, 2)), ("S", 1)),
                  (("R", randint(4, 10)), ("C", randint(2, 5)), ("S", randint(1, 3))))[scale]
        small = scale == TINY
        out = ["## RULES:", ""]
        for prefix, count in counts:
            for number in range(count):
                out.append(f"* {prefix}{number}: {self.prose.sentence()}")
                if not small and self.rng.random() < 0.25:
                    out += [f"  + {self.prose.sentence()}" for _ in range(self.rng.randint(1, 2))]
        return out + [""]

    def nucleus(self, number: int, scale: int) -> list[str]:
        """``## NUCLEUS n: NAME`` with FUNCTION and ROUTINE, sometimes TRIGGER (§7.4.1, §7.4.2)."""
        name = NUCLEUS_NAMES[(number - 1) % len(NUCLEUS_NAMES)]
        out = [f"## NUCLEUS {number}: {name}", "### FUNCTION", *self.bullets(1 if scale == TINY else 2, depth=1)]
        if scale != TINY:
            out += ["", "### ROUTINE", *self.bullets(self.rng.randint(1, 3), depth=2)]
            if scale == FULL and self.rng.random() < 0.3:
                out += ["", "### TRIGGER", *self.bullets(1, depth=1, labels=True)]
        return out + [""]

    def module(self, module_id: str, name: str, state: str, nuclei: list[int], others: list[str],
               small: bool = False) -> list[str]:
        """A module declaration in a read-controlled zone (§7.1, §7.2, §7.4.4, §7.6)."""
        rng, prose = self.rng, self.prose
        governing = sorted(rng.sample(nuclei, rng.randint(1, min(3, len(nuclei))))) if nuclei else []
        tag = f"[NUCLEI: {', '.join(map(str, governing))}]"
        if self.rich and rng.random() < 0.3:
            out = [f"## MODULE {module_id}: {name}", tag]  # §7.4.4: on the line after
        else:
            out = [f"## MODULE {module_id}: {name} {tag}"]
        if small:
            out += ["", "### FUNCTION", prose.sentence(), "", "### STATE", state, ""]
        else:
            out += ["", f"**Type:** {rng.choice(MODULE_TYPES)}",
                    f"**{rng.choice(FIELD_LABELS[1:])}:** {prose.sentence()}", "",
                    "### FUNCTION", prose.sentence(), prose.sentence(), "", "### STATE", state, ""]
            if rng.random() < 0.4:
                out += [*self.alert(), ""]
            out += ["### TRIGGER", *self.bullets(rng.randint(1, 3), labels=True), ""]
            if rng.random() < 0.4:
                out += [f"### ROUTINE: {prose.upper_name(set())}", *self.steps(), ""]
            else:
                out += ["### ROUTINE", *self.bullets(rng.randint(2, 4)), ""]
            if self.rich and rng.random() < 0.15:
                out += [*self.fence(CODE_SNIPPETS + STRUCTURE_LOOKING_SNIPPETS), ""]
            if self.rich and rng.random() < 0.35:  # §7.3: H3 sub-module, H4 sections, H5 subroutine
                out += [f"### SUB-MODULE: {prose.upper_name(set())}", "#### FUNCTION", prose.sentence(), "",
                        "#### ROUTINE", *self.bullets(rng.randint(1, 3), depth=2), ""]
                if rng.random() < 0.6:
                    out += [f"##### SUBROUTINE: {prose.upper_name(set())}", prose.sentence(), ""]
            if self.rich and rng.random() < 0.25:
                out += [f"> \"{prose.sentence()}\" — {rng.choice(AGENTS)}", ""]
        targets = sorted(rng.sample(others, min(len(others), rng.randint(1, 3))))
        out += ["### CONNECTIONS", *(f"* MODULE {m}" for m in targets),
                *(f"* NUCLEUS {n}" for n in governing if rng.random() < 0.5)]
        if self.rich and others and rng.random() < 0.4:  # §7.6: free text, no edge
            out.append(f"Linked to MODULE {rng.choice(others)} for {prose.title()} (free text, no edge).")
        if not targets and out[-1] == "### CONNECTIONS":
            out.append("None yet.")
        level = 1 if small else rng.choice((1, 1, 1, 2, 3))
        return _zone(level, out)

    def registry(self, modules: list[tuple[str, str]]) -> list[str]:
        """``## MODULE_STATE_REGISTRY:`` in ``[P4]`` (§7.3.1): some non-permanent modules, flipped or not."""
        active, inactive = [], []
        for module_id, state in modules:
            if "permanent" in state or self.rng.random() < 0.45:
                continue
            flip = self.rng.random() < 0.5
            (active if state.startswith("active") != flip else inactive).append(module_id)
        lines = ["## MODULE_STATE_REGISTRY:"]
        if active:
            lines.append(f"* ACTIVE: {', '.join(active)}")
        if inactive:
            lines.append(f"* INACTIVE: {', '.join(inactive)}")
        return _zone(4, lines)

    # ------------------------------------------------------------------ memory containers (§7.1.2, §7.1.3)

    def container_depths(self, count: int) -> list[int]:
        """0 for a TOPIC, 1-3 for SUBTOPIC1-3: each at most one deeper than the one before, rarely two."""
        depths = [0]
        while len(depths) < count:
            previous = depths[-1]
            roll = self.rng.random()
            if roll < 0.35 or previous == 3:  # a new topic, or back up to a sibling or an uncle
                depth = 0 if roll < 0.15 else self.rng.randint(0, previous)
            elif roll < 0.96:
                depth = previous + 1
            else:
                depth = min(3, previous + 2)  # §7.1.3: a skipped level is legal, no warning
            depths.append(depth)
        return depths

    def container(self, depth: int, name: str) -> list[str]:
        keyword = "TOPIC" if depth == 0 else f"SUBTOPIC{depth}"
        body = [f"{'#' * (depth + 2)} {keyword}: {name}"]
        if self.rng.random() < 0.25:
            body.append(self.prose.sentence())
        return _zone(self.rng.choice((1, 1, 1, 1, 2)), body)


def _unique_names(rng: random.Random, pool: tuple[str, ...], count: int) -> list[str]:
    """``count`` names from ``pool`` in random order, numbered (``Viaggi 2``) once the pool runs out."""
    names = []
    for round_number in range(1, count // len(pool) + 2):
        batch = list(pool)
        rng.shuffle(batch)
        names += [name if round_number == 1 else f"{name} {round_number}" for name in batch]
    return names[:count]


# --------------------------------------------------------------------------------- kinds


def _check_size(size: int) -> int:
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"size must be an int (bytes), not {type(size).__name__}")
    if size < MIN_SIZE:
        raise ValueError(f"size {size} is below the smallest file this generator writes ({MIN_SIZE} bytes)")
    return size


def _reminder_parts(b: _Builder, target: int, agent: str, modules: list[tuple[str, str, str]],
                    nuclei: list[int], external: list[tuple[str, str]]) -> list:
    """The reminder as fixed blocks and journal places. ``modules``: (id, name, state); ``external``: (id, state)."""
    rng, scale = b.rng, _scale(target)
    small = scale == TINY
    parts: list = []
    if b.rich:
        parts.append(["<!-- IllAIra-Standard: v1.13 -->"])
    parts.append([f"# {agent} — identity protocol [reminder]", ""])
    head = ["## Center of Gravity", b.prose.sentence(), *([] if small else [b.prose.sentence()]), "",
            *b.rules(scale)]
    for number in nuclei:
        head += b.nucleus(number, scale)
    if not small:
        head += b.alert("IMPORTANT")
    parts.append(_zone(1, head))
    ids = [m for m, _, _ in modules] + [m for m, _ in external]
    for index, (module_id, name, state) in enumerate(modules):
        parts.append(b.module(module_id, name, state, nuclei, [m for m in ids if m != module_id], small=small))
        parts.append(_Journal(0.0 if rng.random() < 0.08 and index else rng.uniform(0.4, 1.6), memory=False))
        if b.rich and rng.random() < 0.12:  # a [P5] scratchpad (§5.2): free text and root bullets
            parts.append(_zone(5, [b.prose.sentence(), *(f"* {b.prose.sentence()}" for _ in range(rng.randint(1, 3)))]))
        if index + 1 < len(modules) and rng.random() < 0.1:
            parts.append(["***" if b.rich and rng.random() < 0.5 else "---", ""])
    parts.append(b.registry([(m, s) for m, _, s in modules] + external))
    return parts


def _plan_modules(b: _Builder, count: int) -> list[tuple[str, str, str]]:
    """(id, name, state) for ``count`` reminder modules: 3-digit ids in order (§7.1), one non-permanent."""
    names: set[str] = set()
    ids = sorted(b.rng.sample(range(1000), count))
    plan = [(f"{i:03d}", b.prose.upper_name(names), b.rng.choice(STATES)) for i in ids]
    if all("permanent" in s for _, _, s in plan):
        plan[0] = (plan[0][0], plan[0][1], "active")
    return plan


def _reminder(b: _Builder, target: int, agent: str, per_module: int) -> str:
    count = max(1, min(999, target // per_module))
    nuclei = _nuclei(b.rng, _scale(target))
    modules = _plan_modules(b, count)
    return b.fill(_reminder_parts(b, target, agent, modules, nuclei, []), target)


def _memory(b: _Builder, target: int, title: str) -> str:
    count = max(1, min(300, round(3 * math.sqrt(target / 1000))))
    parts: list = [[f"# {title} [external_memory]", ""]]
    names = _unique_names(b.rng, TOPICS, count)
    for index, depth in enumerate(b.container_depths(count)):
        parts.append(b.container(depth, names[index]))
        empty = index + 1 < count and b.rng.random() < 0.1
        parts.append(_zone(4, []) if empty else _Journal(b.rng.uniform(0.2, 1.8), memory=True))
    return b.fill(parts, target)


def _module_file(b: _Builder, target: int) -> str:
    """A standalone external module (§7.1, §7.4.3): its own nuclei, then alphanumeric-id modules."""
    scale = _scale(target)
    small = scale == TINY
    count = max(1, min(200, target // 20_000))
    used: set[str] = set()
    ids = [b.prose.upper_name(used) for _ in range(count)]
    nuclei = _nuclei(b.rng, min(scale, SMALL))
    parts: list = [[f"# {ids[0]} [external_module]", ""],
                   _zone(1, [line for n in nuclei for line in b.nucleus(n, scale)][:-1])]
    for _index, module_id in enumerate(ids):
        parts.append(b.module(module_id, module_id.replace("_", " ").title(), b.rng.choice(STATES), nuclei,
                              [m for m in ids if m != module_id], small=small))
        parts.append(_Journal(b.rng.uniform(0.5, 1.5), memory=False))
    return b.fill(parts, target)


def _rng(kind: str, seed: int) -> random.Random:
    return random.Random(f"zonemark-corpus/{kind}/{seed}")  # a str seed is hashed with SHA-512: stable


def generate(kind: str, size: int, seed: int = 1) -> str:
    """One file of ``kind`` (``reminder``, ``module``, ``memory``, ``mixed``), ``size`` UTF-8 bytes or just above."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} (one of {', '.join(KINDS)})")
    size = _check_size(size)
    rng = _rng(kind, seed)
    b = _Builder(rng, rich=kind == "mixed")
    agent = rng.choice(AGENTS)
    if kind == "memory":
        return _memory(b, size, f"{agent} — {rng.choice(MEMORY_TITLES)}")
    if kind == "module":
        return _module_file(b, size)
    return _reminder(b, size, agent, per_module=8_000 if kind == "mixed" else 6_000)


def generate_layer(folder, *, modules: int, memories: int, reminder_size: int, ext_size: int,
                   seed: int = 1) -> list[Path]:
    """A whole layer in ``folder``: one reminder, ``modules`` external modules, ``memories`` memories.

    Returns the paths written (reminder first). Ids resolve across files: external modules name
    the reminder's nuclei and each other's ids; the reminder's registry names modules of every file.
    """
    if modules < 0 or memories < 0:
        raise ValueError("modules and memories must not be negative")
    reminder_size, ext_size = _check_size(reminder_size), _check_size(ext_size)
    rng = _rng("layer", seed)
    b = _Builder(rng)
    agent = rng.choice(AGENTS)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)

    count = max(1, min(999, reminder_size // 6_000))
    nuclei = _nuclei(rng, _scale(reminder_size))
    internal = _plan_modules(b, count)
    used = {name for _, name, _ in internal}
    external = [(b.prose.upper_name(used), rng.choice(STATES)) for _ in range(modules)]
    every_id = [m for m, _, _ in internal] + [m for m, _ in external]

    written: list[Path] = []

    def write(name: str, text: str) -> None:
        path = folder / name
        path.write_bytes(text.encode("utf-8"))
        written.append(path)

    write(f"{agent.lower()}[reminder].md",
          b.fill(_reminder_parts(b, reminder_size, agent, internal, nuclei, external), reminder_size))
    small = ext_size < 6_000
    for module_id, state in external:
        parts: list = [[f"# {module_id} [external_module]", ""],
                       b.module(module_id, module_id.replace("_", " ").title(), state, nuclei,
                                [m for m in every_id if m != module_id], small=small),
                       _Journal(1.0, memory=False)]
        write(f"{module_id.lower()}[ext_module].md", b.fill(parts, ext_size))
    for title in _unique_names(rng, MEMORY_TITLES, memories):
        write(f"{_ascii_slug(title)}[ext_memory].md", _memory(b, ext_size, title))
    return written


# --------------------------------------------------------------------------------- command line


def _size_argument(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Sizes are decimal: 1KB = 1,000 bytes, 1MB = 1,000,000 bytes.")
    parser.add_argument("--kind", choices=KINDS, default="reminder")
    parser.add_argument("--size", type=_size_argument, help="target size (file; layer: the reminder, default 200KB)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-o", "--output", type=Path, help="the file to write (single-file mode)")
    parser.add_argument("--layer", type=Path, metavar="DIR", help="write a whole layer into DIR instead")
    parser.add_argument("--modules", type=int, default=10, help="layer: external module files (default 10)")
    parser.add_argument("--memories", type=int, default=5, help="layer: external memory files (default 5)")
    parser.add_argument("--ext-size", type=_size_argument, default=50_000,
                        help="layer: size of each external file (default 50KB)")
    args = parser.parse_args(argv)
    try:
        if args.layer is not None:
            paths = generate_layer(args.layer, modules=args.modules, memories=args.memories,
                                   reminder_size=args.size or 200_000, ext_size=args.ext_size, seed=args.seed)
            total = sum(p.stat().st_size for p in paths)
            print(f"wrote {len(paths)} files, {total} bytes to {args.layer}", file=sys.stderr)
            return 0
        if args.output is None or args.size is None:
            parser.error("a single file needs --size and -o FILE (or use --layer DIR)")
        data = generate(args.kind, args.size, args.seed).encode("utf-8")
        args.output.write_bytes(data)
        print(f"wrote {len(data)} bytes to {args.output}", file=sys.stderr)
        return 0
    except (ValueError, TypeError, OSError) as error:
        print(f"corpus: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
