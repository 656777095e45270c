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
