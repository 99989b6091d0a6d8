"""The official Python SDK client (`mcp` on PyPI) answering what examples/conformance's tools ask
of their host: a form (elicitation), a message from its model (sampling) and its roots.

Over stdio, in the client's default `auto` mode (2026-07-28: the asks come back as
`input_required` results, which the SDK fulfils through its callbacks and retries) and pinned to
the legacy era (2025-11-25: the server sends the requests on the session). Every check prints one
PASS/FAIL line; the exit code is 1 when any failed.

usage: check_asks.py CONFORMANCE_BINARY
"""

from __future__ import annotations

import sys
import warnings

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")  # sampling and roots are deprecated at 2026-07-28; we test them on purpose

SERVER = sys.argv[1]
failures = 0
passes = 0


def check(label: str, ok: bool, detail: object = "") -> None:
    global failures, passes
    if ok:
        passes += 1
        print(f"PASS python-asks {label}")
    else:
        failures += 1
        print(f"FAIL python-asks {label}: {detail}")


def said(result: types.CallToolResult) -> object:
    """A tool's value (its structured `value`), else its text."""
    if result.structured_content and "value" in result.structured_content:
        return result.structured_content["value"]
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def host(asked: list[str], decline: bool = False) -> dict:
    """Callbacks of a host that fills forms in from their field names, has its model say "Paris"
    and owns one root; each records what it was asked."""

    async def on_elicit(context, params):
        asked.append(f"elicit {params.message}")
        if decline:
            return types.ElicitResult(action="decline")
        fields = params.requested_schema.get("properties", {})
        values = {"name": "Ada", "username": "Ada", "color": "blue", "ok": True, "email": "ada@example.com", "context": "tests"}
        return types.ElicitResult(action="accept", content={k: v for k, v in values.items() if k in fields})

    async def on_sample(context, params):
        asked.append("sample")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Paris"), model="test-model", stop_reason="endTurn"
        )

    async def on_roots(context):
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="Work")])

    return {"elicitation_callback": on_elicit, "sampling_callback": on_sample, "list_roots_callback": on_roots}


async def scenario(mode: str) -> None:
    server = StdioServerParameters(command=SERVER, args=[])
    asked: list[str] = []
    with anyio.fail_after(60):
        async with Client(server, mode=mode, read_timeout_seconds=30, **host(asked)) as client:
            tag = f"stdio/{mode}"
            all_three = await client.call_tool("test_input_required_result_multiple_inputs", {})
            check(f"{tag} one round asks a form, the model and the roots", said(all_three) == "Paris Ada (roots: file:///work)", all_three)
            check(f"{tag} the host was asked each once", sorted(asked) == ["elicit What is your name?", "roots", "sample"], asked)
            two = await client.call_tool("test_input_required_result_multi_round", {})
            check(f"{tag} two asks in sequence, two rounds", said(two) == "Ada likes blue", two)
            sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
            check(f"{tag} a tool samples the host's model", said(sampled) == "LLM response: Paris", sampled)
            form = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            check(
                f"{tag} a typed form comes back accepted",
                said(form) == 'User response: action=accept, content={"email":"ada@example.com","username":"Ada"}',
                form,
            )
            prompt = await client.get_prompt("test_input_required_result_prompt", {})
            text = prompt.messages[0].content.text if prompt.messages else None
            check(f"{tag} a prompt asks before it renders", text == "Use this context: tests", prompt)

    # A host that declines: the tool hears `decline`.
    declined: list[str] = []
    async with Client(server, mode=mode, read_timeout_seconds=30, **host(declined, decline=True)) as client:
        answer = await client.call_tool("test_elicitation_sep1034_defaults", {})
        check(f"stdio/{mode} a declined form reaches the tool as decline", said(answer) == "Elicitation completed: action=decline, content=null", answer)

    # A host without the capabilities: refused (-32021 at 2026-07-28), or the tool's own error before.
    async with Client(server, mode=mode, read_timeout_seconds=30) as client:
        try:
            answer = await client.call_tool("test_missing_capability", {})
            check(f"stdio/{mode} sampling without the capability is a tool error", mode == "legacy" and answer.is_error, answer)
        except MCPError as e:
            check(f"stdio/{mode} sampling without the capability is refused with -32021", mode == "auto" and e.code == -32021, (e.code, e.message))


async def main() -> int:
    for mode in ("auto", "legacy"):
        try:
            await scenario(mode)
        except Exception as e:  # noqa: BLE001 - a crash is one more failure, reported with its cause
            check(f"stdio/{mode} session ran to the end", False, repr(e))
    print(f"python-asks: {passes} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
