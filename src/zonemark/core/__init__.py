"""The parser core: one file's text to a lossless tree, its diagnostics and derived facts.

Standard library only.  Imports flow one way inside it:

* ``syntax`` and ``text`` (line patterns, the UTF-8 policy) <- ``diagnostics`` and ``nodes``;
* ``headers`` (what a header line declares, pure functions), ``tree`` (frames built into
  nodes), ``facts`` (what a scan records) <- ``checks`` (the cross-block checks, one ordered
  table) and ``scanner`` (the line scanner) <- ``parser`` (``parse``, ``parse_bytes``,
  ``parse_file``);
* ``outline`` and ``serialize`` <- ``document`` <- ``parser``, ``errors``.

See ``docs/architecture.md``.
"""
