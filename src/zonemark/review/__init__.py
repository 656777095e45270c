"""The local review page (``zonemark review LAYER``, extra ``zonemark[review]``).

What the AI wrote (Activity, with undo), what it proposes (Proposals: apply or reject), the
modules and their states (Modules: toggle), the graph with a pasted neural trace lit up
(Graph) and the layer's diagnostics (Check), in the user's own browser, on 127.0.0.1 only.
:mod:`.serve` starts it; :mod:`.security` is the gate every request passes; :mod:`.app` holds
the routes, which read through the layer and the services and act only through the writer
(as ``--as user``); :mod:`.pages` writes the HTML.  Nothing here is imported by one-shot
commands.
"""
