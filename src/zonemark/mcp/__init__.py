"""The MCP server face: ``zonemark mcp LAYER`` puts a layer in front of AI agents (extra ``zonemark[mcp]``).

:mod:`.server` builds the server (tools, resources, instructions) on the official ``mcp``
SDK; :mod:`.paths` confines every file an agent names to the layer folder; :mod:`.refusals`
gives each refusal a stable code; :mod:`.zones` lists zones and guards ``edit_volatile``
with a base hash; :mod:`.serve` is what the CLI starts.  Importing this package imports
nothing of the SDK.
"""
