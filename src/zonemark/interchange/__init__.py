"""Chat text in and out of a layer: log entries (§N.19) and neural traces (§N.18).

``extract_logs(text)`` and ``parse_trace(text)`` are pure functions of the text;
``ingest(...)`` files extracted entries through the safe writer; ``read_trace(text, layer)``
validates a trace against a loaded :class:`zonemark.layer.Layer`.
"""
