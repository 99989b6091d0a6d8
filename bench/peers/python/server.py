"""The ops tools on FastMCP, as its docs show them: decorated functions, `mcp.run()` on stdio
(`--http PORT`: `mcp.run(transport="http")`, Streamable HTTP at /mcp).

Same state and behaviour as examples/ops.rs: a process table, the load it implies, a log that
keeps every line, a stray line on stderr per spawn.
"""

import asyncio
import os
import sys
from typing import Annotated

from fastmcp import FastMCP
from pydantic import Field

mcp = FastMCP("ops", instructions="Everything here is about processes, not files.")

processes = {
    1: {"pid": 1, "name": "init", "state": "running"},
    2: {"pid": 2, "name": "shell", "state": "running"},
}
load = {"cpu": 0.0, "procs": 2}
log = []
next_pid = 3


@mcp.tool(name="proc_spawn", annotations={"readOnlyHint": False, "destructiveHint": True})
async def proc_spawn(name: Annotated[str, Field(description="Name of the new process.")]) -> dict:
    """Start a process."""
    global next_pid
    print(f"ops: executing proc.spawn {name}", file=sys.stderr)
    delay = os.environ.get("OPS_SPAWN_DELAY_MS")
    if delay and delay.isdigit():
        await asyncio.sleep(int(delay) / 1000)
    pid = next_pid
    next_pid += 1
    process = {"pid": pid, "name": name, "state": "running"}
    processes[pid] = process
    load["procs"] = len(processes)
    log.append(f"spawned {name} as {pid}")
    print(f"spawned {name} as {pid}", file=sys.stderr)
    return dict(process)


@mcp.tool(name="proc_kill", annotations={"readOnlyHint": False, "destructiveHint": True})
async def proc_kill(pid: Annotated[int, Field(ge=0, description="The process to kill.")]) -> dict:
    """Stop a process."""
    process = processes.pop(pid, None)
    if process is None:
        raise ValueError(f"there is no process {pid}")
    load["procs"] = len(processes)
    log.append(f"killed {process['pid']} ({process['name']})")
    return {"ok": True}


@mcp.tool(name="load_sample", annotations={"readOnlyHint": True, "destructiveHint": False})
async def load_sample() -> dict:
    """The current load."""
    return dict(load)


if __name__ == "__main__":
    if "--http" in sys.argv:
        # Streamable HTTP at /mcp, stateful sessions (FastMCP's default), as its docs show.
        port = int(sys.argv[sys.argv.index("--http") + 1])
        mcp.run(transport="http", host="127.0.0.1", port=port, show_banner=False, log_level="warning")
    else:
        mcp.run(show_banner=False)
