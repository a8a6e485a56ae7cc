"""User-facing errors: one line, a hint, a non-zero exit."""

from __future__ import annotations


class SuperviseError(Exception):
    """An error the user can act on. Rendered as `supervise: MESSAGE (hint: HINT)`."""

    def __init__(self, message: str, hint: str | None = None, exit_code: int = 1):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.exit_code = exit_code

    def __str__(self) -> str:
        if self.hint:
            return f"supervise: {self.message} (hint: {self.hint})"
        return f"supervise: {self.message}"
