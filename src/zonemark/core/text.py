"""One UTF-8 policy for every reader and writer of a layer's files (§1).

Files MUST be UTF-8 (§1), but a file that is not must still be read, reported and
written back without losing a byte: bytes in, bytes out.  Decoding keeps each invalid
byte as a lone surrogate (``surrogateescape``), encoding turns it back into the same
byte, and :func:`printable` shows it as ``\\xNN`` wherever text reaches a person.
"""

from __future__ import annotations

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


def has_escaped_bytes(text: str) -> bool:
    """Whether :func:`decode` kept any invalid byte in ``text``."""
    return _ESCAPED_BYTE.search(text) is not None


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
    """``text`` for a terminal, a message or JSON: each kept invalid byte as ``\\xNN``, other lone surrogates as U+FFFD."""
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


#: What a reader of a view cannot see, or what shows the text around it in another order than it is
#: stored (W30): the C0 and C1 controls but tab and line feed, the line and paragraph separators,
#: and W11's invisible characters — Unicode's default-ignorable code points and the other format
#: controls (soft hyphen, combining grapheme joiner, the bidi marks, embeddings, overrides and
#: isolates, the zero-width characters, the Hangul and Khmer fillers, the Mongolian and variation
#: selectors, the BOM, interlinear annotation, the shorthand and musical format controls, the tag
#: characters of U+E0000) and the blank Braille cell U+2800.
HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"
                    "\u200b-\u200f\u2028-\u202e\u2060-\u206f\u2800\u3164\ufe00-\ufe0f\ufeff\uffa0"
                    "\ufff0-\ufffb\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]")


def hidden_mark(char: str) -> str:
    """The visible stand-in of one hidden character: ``⟨U+202E⟩``."""
    return f"\u27e8U+{ord(char):04X}\u27e9"


def reveal(text: str, *, mark: Callable[[str], str] = hidden_mark, plain: Callable[[str], str] | None = None) -> str:
    """``text`` for a view a person reads or approves from (W30): every :data:`HIDDEN` character as
    ``mark(char)`` (by default ``⟨U+202E⟩``), the text between through ``plain`` (HTML escaping, for a
    page).  The one function every view calls: the CLI's ``proposals``, ``--show`` and ``history``, each
    page of the review page and the graph page.  Linear in ``len(text)``."""
    if plain is None and not HIDDEN.search(text):
        return text
    out = []
    last = 0
    for match in HIDDEN.finditer(text):
        between = text[last:match.start()]
        out.append(between if plain is None else plain(between))
        out.append(mark(match.group()))
        last = match.end()
    rest = text[last:]
    out.append(rest if plain is None else plain(rest))
    return "".join(out)


def name_key(text: str) -> str:
    """A container name or id as compared (W8): Unicode NFC, so 'Città' typed (NFC) or pasted from a
    macOS file name (NFD) is one name."""
    return text if text.isascii() else unicodedata.normalize("NFC", text)
