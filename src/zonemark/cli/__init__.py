"""The ``zonemark`` command line: a thin face over the core, the layer, the writer and the services.

``zonemark.cli.main:main`` is the entry point; each module registers one group of commands
and imports what a command needs only when that command runs.
"""
