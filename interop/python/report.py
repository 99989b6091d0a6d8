"""What every Python interop check shares: one PASS/FAIL line per check, counted."""

from __future__ import annotations

import mcp_types as types


class Checks:
    """Prints `PASS <tag> <label>` or `FAIL <tag> <label>: <detail>` and counts them."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.passes = 0
        self.failures = 0

    def __call__(self, label: str, ok: bool, detail: object = "") -> None:
        if ok:
            self.passes += 1
            print(f"PASS {self.tag} {label}")
        else:
            self.failures += 1
            print(f"FAIL {self.tag} {label}: {detail}")

    def summary(self) -> int:
        """Prints the totals; answers the exit code (1 if any failed)."""
        print(f"{self.tag}: {self.passes} passed, {self.failures} failed")
        return 1 if self.failures else 0


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))
