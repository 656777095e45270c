"""The continuity layer: every file of a folder read as one whole (§3, §7.1.1, §7.3.1, §7.4, §7.6).

``Layer.load(path)`` (:mod:`.loader`), the graph (:mod:`.graph`), the status query
(:mod:`.status`) and what ``zonemark check`` reports for paths (:mod:`.check`).
"""

from .loader import (Layer, LayerEdge, LayerError, LayerFile, LayerModule, LayerNucleus, StateSource, discover,
                     left_out, matches, select)

__all__ = ["Layer", "LayerEdge", "LayerError", "LayerFile", "LayerModule", "LayerNucleus", "StateSource", "discover",
           "left_out", "matches", "select"]
