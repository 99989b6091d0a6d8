"""The official Python SDK client (`mcp` on PyPI) answering examples/release's `publish`, which
sends the user to a sign-in page with a URL-mode elicitation (the SDK declares URL mode when it
has an elicitation callback).

Over stdio, in the client's default `auto` mode (2026-07-28: the ask is an `input_required`
round) and pinned to the legacy era (2025-11-25: `elicitation/create` on the session, then
`notifications/elicitation/complete`; a call that does not wait is the error -32042). Every check
prints one PASS/FAIL line; the exit code is 1 when any failed.

usage: check_url.py RELEASE_BINARY
"""

from __future__ import annotations

import sys

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError
from report import Checks, text_of

SERVER = sys.argv[1]
PAGE = "https://registry.example.com/sign-in?package=release&version=1.4.2"
check = Checks("python-url")


def said(result: types.CallToolResult) -> object:
    if result.structured_content and "value" in result.structured_content:
        return result.structured_content["value"]
    return text_of(result)


async def scenario(mode: str) -> None:
    server = StdioServerParameters(command=SERVER, args=[])
    asked: list[tuple[str, str, str]] = []

    async def on_elicit(context, params):
        asked.append((getattr(params, "mode", "form"), getattr(params, "url", ""), getattr(params, "elicitation_id", "")))
        return types.ElicitResult(action="accept")

    tag = f"stdio/{mode}"
    with anyio.fail_after(60):
        async with Client(server, mode=mode, read_timeout_seconds=30, elicitation_callback=on_elicit) as client:
            done = await client.call_tool("publish", {})
            check(f"{tag} publish answers once the user accepted", said(done) == "published 1.4.2", done)
            check(
                f"{tag} the host was sent the page, in URL mode, with an id",
                len(asked) == 1 and asked[0][0] == "url" and asked[0][1] == PAGE and len(asked[0][2]) == 32,
                asked,
            )
            if mode == "legacy":
                try:
                    answer = await client.call_tool("publish", {"wait": False})
                    check(f"{tag} not waiting is -32042", False, answer)
                except MCPError as e:
                    check(f"{tag} not waiting is -32042", e.code == -32042, (e.code, e.message))


async def main() -> int:
    for mode in ("auto", "legacy"):
        try:
            await scenario(mode)
        except Exception as e:  # noqa: BLE001 - a crash is one more failure, reported with its cause
            check(f"stdio/{mode} session ran to the end", False, repr(e))
    return check.summary()


if __name__ == "__main__":
    sys.exit(anyio.run(main))
