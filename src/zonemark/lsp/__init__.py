"""The language server face (extra ``zonemark[lsp]``): ``zonemark lsp`` speaks LSP over stdio.

:mod:`.serve` starts it (the CLI's entry), :mod:`.server` holds the features, :mod:`.session` the open
files and their layers, :mod:`.text` the LSP view of a text (line breaks, UTF-16 positions).  The rules come from
the core and the layer; nothing here decides what a line means.
"""
