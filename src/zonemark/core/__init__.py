"""The parser core: one file's text to a lossless tree, its diagnostics and derived facts.

Standard library only.  Imports flow one way inside it: ``syntax`` and ``text`` (line
patterns, the UTF-8 policy) <- ``diagnostics`` and ``nodes`` <- ``document`` <- ``parser``
<- ``outline``, ``serialize``, ``errors``.  See ``docs/architecture.md``.
"""
