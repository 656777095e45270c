"""A layer's history and sync through the machine's ``git`` (issue 19 §2).

``git`` (:mod:`.git`: the one way zonemark runs git — argument lists, never a shell string,
a timeout on every call, ``GIT_TERMINAL_PROMPT=0``), ``settings`` (the layer's own settings in
``.zonemark/settings.json``), ``setup`` (``zonemark git setup``: the merge driver, the attributes,
what ``.zonemark/`` keeps out of git), ``commits`` (one git commit of exactly the files a write
wrote, ``--commit-writes``) and ``sync`` (fetch, merge with the driver, push; never a force-push).
"""
