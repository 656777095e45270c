"""What every ``zonemark`` command shares: its one-line error and its exit codes.

0 fine; 1 findings (errors in the files) or a refused write; 2 the command could not run
(bad flag, missing path, unreadable input).  The message is printed as one line on stderr.
"""

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
EXIT_REFUSED = EXIT_FINDINGS


class CliError(Exception):
    """A problem that stops the command: printed as one line, exit code attached."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.code = code


def json_text(data, indent: int | None = 2) -> str:
    """``data`` as JSON for a person or a program: an invalid byte kept from a file shows as ``\\xNN``
    inside its string (never a lone-surrogate ``\\udcNN``), and the JSON stays valid."""
    import json

    from ..core.text import printable

    def clean(value):
        if isinstance(value, str):
            return printable(value)
        if isinstance(value, dict):
            return {clean(k): clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return value
    return json.dumps(clean(data), ensure_ascii=False, indent=indent) + "\n"
