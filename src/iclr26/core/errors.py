"""`UserError`: bad input from the person running the code, as opposed to a bug.

Validation anywhere raises a `UserError` (or a subclass such as `ConfigError`) whose message
names the problem and the fix. The CLI prints it as one line and exits with status 2; any other
exception is a bug and keeps its traceback. `--debug` shows the traceback for user errors too.
"""

from __future__ import annotations


class UserError(Exception):
    """Bad input or a missing prerequisite the user can fix; the message says what and how."""

    exit_code = 2
