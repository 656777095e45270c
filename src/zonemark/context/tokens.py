"""An offline token estimate: no tokenizer, no download, the same number on every machine.

Chat models count text in tokens their own tokenizer makes; none of them is available
offline here, so zonemark estimates — on the high side, since a budget is a limit:

* ASCII characters (English words, Markdown, digits, spaces): 4 characters per token;
* other characters below U+0800 (accented Latin letters as in Italian, Greek, Cyrillic,
  Hebrew, Arabic): 2 characters per token;
* every character from U+0800 up (Han, kana, Hangul, Thai, symbols such as ``—``, emoji):
  1 token each.

The estimate of a text is the sum of those fractions, rounded up; the fractions add up
exactly, so the estimate of a text equals the sum over its parts within one token per part.
"""

from __future__ import annotations

import math
from fractions import Fraction

ASCII_PER_TOKEN = 4
NARROW_PER_TOKEN = 2


def weight(text: str) -> Fraction:
    """The exact (fractional) token weight of ``text``."""
    ascii_chars = narrow = wide = 0
    if text.isascii():
        ascii_chars = len(text)
    else:
        for ch in text:
            code = ord(ch)
            if code < 0x80:
                ascii_chars += 1
            elif code < 0x800:
                narrow += 1
            else:
                wide += 1
    return Fraction(ascii_chars, ASCII_PER_TOKEN) + Fraction(narrow, NARROW_PER_TOKEN) + wide


def estimate_tokens(text: str) -> int:
    """The estimated number of tokens of ``text`` (see the module docstring)."""
    return math.ceil(weight(text))
