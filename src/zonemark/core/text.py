"""One UTF-8 policy for every reader and writer of a layer's files (§1).

Files MUST be UTF-8 (§1), but a file that is not must still be read, reported and
written back without losing a byte: bytes in, bytes out.  Decoding keeps each invalid
byte as a lone surrogate (``surrogateescape``), encoding turns it back into the same
byte, and :func:`printable` shows it as ``\\xNN`` wherever text reaches a person.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Callable

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def decode(data: bytes) -> str:
    """File bytes as text; every invalid byte is kept as a lone surrogate (round-trips through :func:`encode`)."""
    return decode_reporting(data)[0]


def decode_reporting(data: bytes) -> tuple[str, bool]:
    """As :func:`decode`, and whether any invalid byte had to be kept."""
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "surrogateescape"), True


def encode(text: str) -> bytes:
    """Text back to the exact file bytes (the inverse of :func:`decode`)."""
    return text.encode("utf-8", "surrogateescape")


def first_escaped_byte(text: str) -> tuple[int, int, int, int] | None:
    """``(line, column, byte value, count)`` of the first invalid byte kept in ``text``, or None."""
    first = _ESCAPED_BYTE.search(text)
    if first is None:
        return None
    at = first.start()
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    # Counted, not collected: a list of every kept byte held 40x the file for random bytes (B1).
    count = sum(1 for _ in _ESCAPED_BYTE.finditer(text, at))
    return line, column, ord(first.group()) - 0xDC00, count


def printable(text: str) -> str:
    """``text`` for a terminal, a message or JSON: each kept invalid byte as ``\\xNN``, other lone surrogates as
    U+FFFD."""
    if not _LONE_SURROGATE.search(text):
        return text
    text = _ESCAPED_BYTE.sub(lambda m: f"\\x{ord(m.group()) - 0xDC00:02X}", text)
    return _LONE_SURROGATE.sub("\ufffd", text)


_TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str) -> str:
    """``text`` for a terminal: every C0 and C1 control character but line feed and tab as ``\\xNN``, so an
    escape sequence held by a file or sent by an agent never reaches the screen as one."""
    if not _TERMINAL_CONTROLS.search(text):
        return text
    return _TERMINAL_CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02X}", text)


# -- what a reader cannot see: one definition for the writer and the views (W21, W30, W34, W35) --------

#: Unicode's Default_Ignorable_Code_Point property (DerivedCoreProperties.txt, Unicode 15.1; the set is
#: stable since Unicode 14): inclusive code point ranges.  It is Other_Default_Ignorable_Code_Point, the
#: variation selectors and the format controls (Cf), less the interlinear annotation characters
#: U+FFF9-U+FFFB, the Egyptian hieroglyph format controls U+13430-U+1343F and the prepended
#: concatenation marks (U+0600-U+0605, U+06DD, U+070F, U+0890-U+0891, U+08E2, U+110BD, U+110CD), which
#: draw a visible sign.  The standard library has no property lookup; tests/writer/test_sanitize_unicode.py checks the
#: table against unicodedata.
DEFAULT_IGNORABLE: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
#: Characters that draw nothing, a blank where a letter should be: the blank Braille pattern U+2800 and the
#: Hangul fillers U+115F, U+1160, U+3164, U+FFA0 (these four are default-ignorable as well).
BLANK_LOOK_ALIKES = "\u115f\u1160\u2800\u3164\uffa0"
#: The control characters every AI write removes (W4, W14): C0 but tab and the line breaks, DEL, and C1
#: (U+009B is a one-character CSI).  A character class, as :data:`BIDI_CONTROLS_CLASS`.
CONTROLS_CLASS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
#: The line breaks an AI write turns into a line feed: CR, NEL, the line and paragraph separators.
OTHER_LINE_BREAKS = "\r\x85\u2028\u2029"
#: The bidirectional embedding, override and isolate controls (W15): they show the text around them in another
#: order than it is stored ('\u202e]4P/[' shows as '[/P4]').
BIDI_CONTROLS_CLASS = "\u202a-\u202e\u2066-\u2069"


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


#: The characters a reader cannot see (W21, W34): the default-ignorable code points, the blank look-alikes
#: and the interlinear annotation characters U+FFF9-U+FFFB (format controls that renderers draw as nothing).
UNSEEN_CLASS = _char_class(DEFAULT_IGNORABLE) + BLANK_LOOK_ALIKES + "\ufff9-\ufffb"
UNSEEN = re.compile("[" + UNSEEN_CLASS + "]")
#: What a view marks and the writer removes (W30, W34): the controls, the line breaks but the line feed, and
#: :data:`UNSEEN` — except where :func:`hidden_spans` finds them part of an emoji sequence or a word (W35).
HIDDEN_CLASS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029" + UNSEEN_CLASS
HIDDEN = re.compile("[" + HIDDEN_CLASS + "]")
_HIDDEN_RUN = re.compile("[" + HIDDEN_CLASS + "]+")

ZWNJ = "\u200c"
ZWJ = "\u200d"
#: The hidden characters that may be part of an emoji sequence or a word: the joiners, VS-16, the tag
#: letters and digits and the cancel tag.  A text without any is cleaned in one step.
_MAY_STAY = re.compile("[\u200c\u200d\ufe0f\U000e0030-\U000e0039\U000e0061-\U000e007a\U000e007f]")
#: Extended_Pictographic, simplified to blocks (the stdlib has no emoji data): what a ZWJ joins and a
#: VS-16 presents as emoji.  The regional indicators U+1F1E6-U+1F1FF and the skin-tone modifiers
#: U+1F3FB-U+1F3FF are not pictographs (UAX #29 counts them Regional_Indicator and Extend): a modifier
#: only follows one, so '🏽\ufe0f' alone is no emoji, and removing a joiner never turns a kept selector
#: into a stray one (the writer's text has nothing left to remove, W34).
_PICTO = ("\u00a9\u00ae\u203c\u2049\u2122\u2139\u2194-\u2199\u21a9\u21aa\u231a\u231b\u2328\u23cf\u23e9-\u23f3"
          "\u23f8-\u23fa\u24c2\u25aa\u25ab\u25b6\u25c0\u25fb-\u25fe\u2600-\u27bf\u2934\u2935\u2b05-\u2b07"
          "\u2b1b\u2b1c\u2b50\u2b55\u3030\u303d\u3297\u3299\U0001f000-\U0001f1e5\U0001f200-\U0001f3fa"
          "\U0001f400-\U0001faff")
_EMOJI_ELEMENT = "[" + _PICTO + "](?:[\U0001f3fb-\U0001f3ff]|\ufe0f)?"
#: The emoji sequences whose hidden characters stay (W21): a ZWJ sequence, an emoji with VS-16, a keycap, and
#: a subdivision flag (U+1F3F4, a region and subdivision code in tag letters and digits — two letters and one
#: to three letters or digits —, U+E007F CANCEL TAG).
EMOJI_SEQUENCE = re.compile(_EMOJI_ELEMENT + "(?:\u200d" + _EMOJI_ELEMENT + ")+"
                            "|[" + _PICTO + "]\ufe0f|[0-9#*]\ufe0f\u20e3"
                            "|\U0001f3f4[\U000e0061-\U000e007a]{2}[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,3}"
                            "\U000e007f")
#: The scripts whose letters a ZWNJ keeps apart (W35): Arabic (with its Supplement and Extended blocks),
#: Syriac (and its Supplement), N'Ko — an approximation of RFC 5892's Joining_Type L/D by block, as the
#: standard library has no joining data.  Their letters (category L*) count; marks are transparent.
JOINING_SCRIPTS: tuple[tuple[int, int], ...] = (
    (0x0600, 0x06FF), (0x0700, 0x074F), (0x0750, 0x077F), (0x07C0, 0x07FF), (0x0860, 0x086F), (0x0870, 0x08FF),
)


def default_ignorable(c: str) -> bool:
    """Whether ``c`` has Unicode's Default_Ignorable_Code_Point property (:data:`DEFAULT_IGNORABLE`)."""
    cp = ord(c)
    i = bisect.bisect_right(DEFAULT_IGNORABLE, (cp, 0x10FFFF)) - 1
    return i >= 0 and DEFAULT_IGNORABLE[i][0] <= cp <= DEFAULT_IGNORABLE[i][1]


@functools.lru_cache(maxsize=4096)
def _joining_letter(c: str) -> bool:
    cp = ord(c)
    return unicodedata.category(c)[0] == "L" and any(a <= cp <= b for a, b in JOINING_SCRIPTS)


@functools.lru_cache(maxsize=4096)
def _transparent(c: str) -> bool:
    """Joining_Type T, approximated: a nonspacing or enclosing mark that is not itself hidden."""
    return unicodedata.category(c) in ("Mn", "Me") and not HIDDEN.match(c)


def joiner_in_word(text: str, i: int) -> bool:
    """Whether the ZWNJ or ZWJ at ``text[i]`` is part of a word (W35, RFC 5892 Appendix A.1/A.2, CONTEXTJ):
    right after a virama (canonical combining class 9: the conjunct control of Devanagari, Malayalam,
    Sinhala…), or, a ZWNJ, between two letters of a joining script with only marks between (Persian
    'می‌خواهم').  Linear over a text: the marks around one ZWNJ are passed by that ZWNJ only."""
    c = text[i]
    if c not in (ZWNJ, ZWJ):
        return False
    if i > 0 and unicodedata.combining(text[i - 1]) == 9:
        return True
    if c != ZWNJ:
        return False
    j = i - 1
    while j >= 0 and _transparent(text[j]):
        j -= 1
    if j < 0 or not _joining_letter(text[j]):
        return False
    k, n = i + 1, len(text)
    while k < n and _transparent(text[k]):
        k += 1
    return k < n and _joining_letter(text[k])


def hidden_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` runs of :data:`HIDDEN` characters of ``text`` that a view marks and the writer
    removes (W34): every one but those of an :data:`EMOJI_SEQUENCE` and the joiners of a word
    (:func:`joiner_in_word`).  The one decision both make; linear in ``len(text)``."""
    runs = [m.span() for m in _HIDDEN_RUN.finditer(text)]
    if not runs or not _MAY_STAY.search(text):
        return runs
    emoji = [m.span() for m in EMOJI_SEQUENCE.finditer(text)]
    spans: list[tuple[int, int]] = []
    e = 0
    for s, end in runs:
        if not _MAY_STAY.search(text, s, end):
            spans.append((s, end))
            continue
        start: int | None = None
        for i in range(s, end):
            while e < len(emoji) and emoji[e][1] <= i:
                e += 1
            stays = (e < len(emoji) and emoji[e][0] <= i) or joiner_in_word(text, i)
            if stays and start is not None:
                spans.append((start, i))
                start = None
            elif not stays and start is None:
                start = i
        if start is not None:
            spans.append((start, end))
    return spans


def hidden_mark(char: str) -> str:
    """The visible stand-in of one hidden character: ``⟨U+202E⟩``."""
    return f"\u27e8U+{ord(char):04X}\u27e9"


def reveal(text: str, *, mark: Callable[[str], str] = hidden_mark, plain: Callable[[str], str] | None = None) -> str:
    """``text`` for a view a person reads or approves from (W30, W34): every character of
    :func:`hidden_spans` — what the writer would remove, or turn into a line feed — as ``mark(char)`` (by
    default ``⟨U+202E⟩``), the text between through ``plain`` (HTML escaping, for a page); an emoji
    sequence's joiners and selectors and a word's ZWNJ and ZWJ are not marked.  The one function every
    view calls: the CLI's ``proposals``, ``--show`` and ``history``, each page of the review page and the
    graph page.  Linear in ``len(text)``."""
    spans = hidden_spans(text) if HIDDEN.search(text) else []
    if plain is None and not spans:
        return text
    out = []
    last = 0
    for start, end in spans:
        between = text[last:start]
        out.append(between if plain is None else plain(between))
        out.extend(map(mark, text[start:end]))
        last = end
    rest = text[last:]
    out.append(rest if plain is None else plain(rest))
    return "".join(out)


def name_key(text: str) -> str:
    """A container name or id as compared (W8): Unicode NFC, so 'Città' typed (NFC) or pasted from a
    macOS file name (NFD) is one name."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)
