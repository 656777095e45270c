"""The MCP server face: ``zonemark mcp LAYER`` puts a layer in front of AI agents (extra ``zonemark[mcp]``).

:mod:`.server` builds the server (tools, resources, instructions) on the official ``mcp``
SDK; :mod:`.paths` confines every file an agent names to the layer folder; :mod:`.refusals`
says, for each refusal code, what an agent may do instead; :mod:`.zones` lists zones with their
hashes (the writer checks ``edit_volatile``'s base hash); :mod:`zonemark.layer.cache` keeps parsed files for
bytes that have not changed; :mod:`.serve` is what the CLI starts.  Importing this package
imports nothing of the SDK.
"""
