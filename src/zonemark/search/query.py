"""A person's (or an AI's) query as an FTS5 expression that cannot fail to parse.

Safe mode (the default) reads the query as words, never as syntax:

* each word becomes an FTS5 string (``"word"``, inner ``"`` doubled) and the strings are
  ANDed, so ``:``, ``(``, ``-``, ``^``, ``AND``, ``OR``, ``NOT``, ``NEAR`` and column names are
  plain words;
* text between double quotes is one phrase (an unbalanced quote runs to the end);
* a word ending in ``*`` keeps its meaning as a prefix search (``tyre*``), and only there;
* a word with no letter or digit (``—``, ``:``, ``***``) matches nothing and is dropped; a
  query left with no word at all is a :class:`QueryError`;
* CJK text gets the index's zero-width separators (:func:`.rows.segment_cjk`), so a word
  written without spaces is matched as a phrase of characters.

Raw mode passes the expression to FTS5 unchanged (apart from the CJK separators); an FTS5
syntax error is then reported as one line, never a traceback.
"""

from __future__ import annotations

from .errors import QueryError
from .rows import segment_cjk

MAX_QUERY_CHARS = 2000
MAX_TERMS = 64


def _has_token(text: str) -> bool:
    """Whether the FTS5 ``unicode61`` tokenizer finds a token in ``text`` (letters, digits, private use)."""
    return any(c.isalnum() or 0xE000 <= ord(c) <= 0xF8FF for c in text)


def _string(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def terms(query: str) -> list[tuple[str, bool]]:
    """The words and phrases of a safe query, each with whether it is a prefix search."""
    out: list[tuple[str, bool]] = []
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c.isspace():
            i += 1
            continue
        if c == '"':
            end = query.find('"', i + 1)
            end = n if end < 0 else end
            phrase = query[i + 1:end]
            i = end + 1
            prefix = i < n and query[i] == "*"
            if prefix:
                i += 1
            out.append((phrase, prefix))
            continue
        j = i
        while j < n and not query[j].isspace() and query[j] != '"':
            j += 1
        word = query[i:j]
        i = j
        prefix = word.endswith("*")
        out.append((word.rstrip("*") if prefix else word, prefix))
    return out


def translate(query: str, *, raw: bool = False) -> str:
    """The FTS5 MATCH expression for ``query`` (see the module docstring)."""
    if not isinstance(query, str):
        raise QueryError(f"the query must be text, not {type(query).__name__}")
    if "\x00" in query:
        raise QueryError("the query contains a NUL character")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"the query has {len(query)} characters (at most {MAX_QUERY_CHARS})")
    if raw:
        if not query.strip():
            raise QueryError("the query is empty")
        return segment_cjk(query)
    parts = []
    for text, prefix in terms(query):
        if not _has_token(text):
            continue
        part = _string(segment_cjk(text.strip()))
        parts.append(part + "*" if prefix else part)
    if not parts:
        raise QueryError("the query has no word to search for (give letters or digits)")
    if len(parts) > MAX_TERMS:
        raise QueryError(f"the query has {len(parts)} words (at most {MAX_TERMS})")
    return " AND ".join(parts)
