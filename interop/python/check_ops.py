"""The official Python SDK client (`mcp` on PyPI) against examples/ops.

Runs the same checks over stdio and over Streamable HTTP, in the client's default `auto` mode
(server/discover first, so 2026-07-28 against us) and pinned to the legacy era (initialize,
2025-11-25). Every check prints one PASS/FAIL line; the exit code is the number of failures
(capped at 1).

usage: check_ops.py OPS_BINARY
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
from mcp import Client
from report import Checks, text_of
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

warnings.simplefilter("ignore")  # subscribe/unsubscribe are deprecated at 2026-07-28; we test legacy on purpose

OPS = sys.argv[1]
# The transports to check (default both); `http` alone for a server that serves only HTTP, such
# as examples/axum_app (ops mounted at /mcp beside the app's own routes).
TRANSPORTS = sys.argv[2:] or ["stdio", "http"]
INSTRUCTIONS = "Everything here is about processes, not files."
TOOLS = {"proc_spawn", "proc_kill", "load_sample", "count", "processes_view", "proc_wait"}
RESOURCES = {
    "surface://cells/load",
    "surface://collections/processes",
    "surface://streams/log",
    "surface://events/autosave",
    "skill://triage/SKILL.md",
}  # no ui://ops/processes: this client does not declare the MCP Apps extension
TEMPLATES = {"surface://collections/processes/{id}"}

check = Checks("python")


@asynccontextmanager
async def ops_over(transport: str):
    """Yields what `Client(...)` connects to: stdio parameters, or the URL of a fresh HTTP server."""
    if transport == "stdio":
        yield StdioServerParameters(command=OPS, args=[])
        return
    proc = subprocess.Popen([OPS, "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        match = re.search(r"(http://\S+)", line)
        if not match:
            raise RuntimeError(f"ops --http said {line!r}")
        yield match.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


async def scenario(transport: str, mode: str) -> None:
    tag = f"{transport}/{mode}"
    updates: list[str] = []

    async def on_message(message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)

    async with ops_over(transport) as server:
        with anyio.fail_after(60):
            async with Client(server, mode=mode, message_handler=on_message, read_timeout_seconds=30) as client:
                await run_checks(tag, mode, client, updates)


async def run_checks(tag: str, mode: str, client: Client, updates: list[str]) -> None:
    want_version = "2026-07-28" if mode == "auto" else "2025-11-25"
    check(f"{tag} negotiates {want_version}", client.protocol_version == want_version, client.protocol_version)
    check(f"{tag} reads the instructions", client.instructions == INSTRUCTIONS, client.instructions)
    info = client.server_info
    check(f"{tag} server is called ops", info is not None and info.name == "ops", info)

    # list
    tools = {t.name: t for t in (await client.list_tools()).tools}
    check(f"{tag} tools/list names exactly the exposed tools", set(tools) == TOOLS, sorted(tools))
    check(f"{tag} proc_configure is never listed", "proc_configure" not in tools)
    kill = tools.get("proc_kill")
    check(
        f"{tag} proc_kill is marked destructive with an object input schema",
        kill is not None
        and kill.annotations is not None
        and kill.annotations.destructive_hint is True
        and kill.input_schema.get("type") == "object"
        and "pid" in kill.input_schema.get("properties", {}),
        kill,
    )
    resources = {r.uri for r in (await client.list_resources()).resources}
    check(f"{tag} resources/list", resources == RESOURCES, sorted(resources))
    templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
    check(f"{tag} resources/templates/list", templates == TEMPLATES, sorted(templates))

    # read
    load = await client.read_resource("surface://cells/load")
    body = json.loads(load.contents[0].text)
    check(f"{tag} read a cell", body == {"cpu": 0.0, "procs": 2}, body)
    item = await client.read_resource("surface://collections/processes/1")
    body = json.loads(item.contents[0].text)
    check(f"{tag} read a collection item through the template", body.get("name") == "init", body)

    # call
    spawned = await client.call_tool("proc_spawn", {"name": "py"})
    check(
        f"{tag} call proc_spawn answers structured content",
        not spawned.is_error and spawned.structured_content == {"pid": 3, "name": "py", "state": "running"},
        spawned,
    )
    check(f"{tag} the text block carries the same JSON", json.loads(text_of(spawned)) == spawned.structured_content)
    counted = await client.call_tool("count", {})
    check(f"{tag} bespoke tool count sees the spawn", counted.structured_content == {"value": 3}, counted)
    sampled = await client.call_tool("load_sample")
    check(f"{tag} a tool without input takes no arguments", sampled.structured_content == {"cpu": 0.0, "procs": 3}, sampled)

    # subscribe and receive updated
    uri = "surface://cells/load"
    if mode == "auto":
        async with client.listen(resource_subscriptions=[uri]) as sub:
            check(f"{tag} subscriptions/listen is acknowledged", sub.honored.resource_subscriptions == [uri], sub.honored)
            await client.call_tool("proc_spawn", {"name": "watched"})
            event = None
            with anyio.move_on_after(10):
                async for e in sub:
                    event = e
                    break
            check(f"{tag} listen delivers resources/updated", getattr(event, "uri", None) == uri, event)
    else:
        await client.subscribe_resource(uri)
        await client.call_tool("proc_spawn", {"name": "watched"})
        with anyio.move_on_after(10):
            while uri not in updates:
                await anyio.sleep(0.05)
        check(f"{tag} resources/subscribe delivers resources/updated", uri in updates, updates)
        await client.unsubscribe_resource(uri)
        updates.clear()
        await client.call_tool("proc_spawn", {"name": "unwatched"})
        await anyio.sleep(0.8)  # past the 200 ms debounce
        check(f"{tag} resources/unsubscribe stops updates", updates == [], updates)
    reread = json.loads((await client.read_resource(uri)).contents[0].text)
    check(f"{tag} the re-read shows the change", reread["procs"] >= 4, reread)

    # refusals
    refused = await client.call_tool("proc_kill", {"pid": 999})
    check(
        f"{tag} a refusal is an isError answer with its detail",
        refused.is_error
        and text_of(refused) == "surface-mcp: there is no process 999"
        and refused.structured_content == {"kind": "no-such-process", "pid": 999},
        refused,
    )
    bad = await client.call_tool("proc_kill", {"pid": "nine"})
    check(f"{tag} a wrong argument type is an isError answer naming the field", bad.is_error and "pid" in text_of(bad), bad)
    try:
        await client.call_tool("proc_configure", {"pid": 1, "nice": 3})
        check(f"{tag} an unexposed procedure is refused", False, "it answered")
    except MCPError as e:
        check(f"{tag} an unexposed procedure is refused with -32602", e.code == -32602, (e.code, e.message))
    try:
        await client.read_resource("surface://cells/nope")
        check(f"{tag} an unknown resource is refused", False, "it answered")
    except MCPError as e:
        want = -32602 if mode == "auto" else -32002
        check(f"{tag} an unknown resource is refused with {want}", e.code == want, (e.code, e.message))
    try:
        await client.read_resource("surface://collections/processes/424242")
        check(f"{tag} a missing collection item is refused", False, "it answered")
    except MCPError as e:
        check(f"{tag} a missing collection item is refused", "424242" in e.message, (e.code, e.message))


async def main() -> int:
    for transport in TRANSPORTS:
        for mode in ("auto", "legacy"):
            try:
                await scenario(transport, mode)
            except Exception as e:  # noqa: BLE001 - a crash is one more failure, reported with its cause
                check(f"{transport}/{mode} session ran to the end", False, repr(e))
    return check.summary()


if __name__ == "__main__":
    sys.exit(anyio.run(main))
