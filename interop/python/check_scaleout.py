"""The official Python SDK client against two ops instances sharing one Redis (issue 14).

Starts its own redis-server on a free loopback port (a temp dir, append-only file fsynced on
every write) and two `ops --http 127.0.0.1:0 --redis URL` instances, A and B, then in each era
(the client's `auto` mode: server/discover → 2026-07-28 and `subscriptions/listen`; `legacy`:
initialize → 2025-11-25 and `resources/subscribe`):

  - a subscriber on B hears a `proc_spawn` made through A, and reads the new process on B;
  - concurrent spawns through A and B get distinct pids, and the load counts every one;
  - Redis killed: a call fails as isError saying the store is unreachable, without hanging;
    Redis restarted: the instances reconnect by themselves, B's subscriber hears an `updated`
    (re-read: changes may have been missed), and calls succeed again.

Then failover (legacy: sessions are what moves): a client whose HTTP goes through a router
(an httpx transport that sends every request to A, later to B) keeps its session when A is
killed and the router points at B — B restores the session from Redis, serves its calls, and
the SDK's standalone stream, reconnecting with Last-Event-ID, resumes on B.

Prints one PASS/FAIL line per check (a NOTE saying it skipped when redis-server is not
installed); the exit code is 1 if any failed.

usage: check_scaleout.py OPS_BINARY   (ops built with `--features redis`)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from report import Checks, text_of

warnings.simplefilter("ignore")  # resources/subscribe is deprecated at 2026-07-28; legacy is tested on purpose

OPS = sys.argv[1]
PROCESSES = "surface://collections/processes"
LOAD = "surface://cells/load"

check = Checks("scaleout")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    def __init__(self) -> None:
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix="surface-scaleout-")
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", "always", "--dir", self.dir],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not answer PING within 10 s")

    def kill(self) -> None:
        if self.proc:
            self.proc.kill()
            self.proc.wait(timeout=10)
            self.proc = None

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def instance(redis: Redis) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([OPS, "--http", "127.0.0.1:0", "--redis", redis.url], stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    match = re.search(r"(http://\S+/mcp)", line)
    if not match:
        proc.kill()
        raise RuntimeError(f"ops --http --redis said {line!r}")
    return proc, match.group(1)


class Heard:
    """The URIs of the `resources/updated` one client heard, in either era."""

    def __init__(self) -> None:
        self.uris: list[str] = []

    async def on_message(self, message) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.uris.append(message.params.uri)

    async def wait_for(self, uri: str, seconds: float) -> bool:
        with anyio.move_on_after(seconds):
            while uri not in self.uris:
                await anyio.sleep(0.05)
            return True
        return False


async def pump(sub, heard: Heard) -> None:
    """Copies a 2026-07-28 listen stream's events into `heard`."""
    async for event in sub:
        uri = getattr(event, "uri", None)
        if uri:
            heard.uris.append(uri)


async def scenario(mode: str) -> None:
    redis = Redis()
    procs = []
    try:
        a_proc, a_url = instance(redis)
        b_proc, b_url = instance(redis)
        procs = [a_proc, b_proc]
        heard = Heard()
        with anyio.fail_after(90):
            async with (
                Client(a_url, mode=mode, read_timeout_seconds=30) as on_a,
                Client(b_url, mode=mode, message_handler=heard.on_message, read_timeout_seconds=30) as on_b,
            ):
                if mode == "auto":
                    async with on_b.listen(resource_subscriptions=[PROCESSES, LOAD]) as sub, anyio.create_task_group() as tg:
                        tg.start_soon(pump, sub, heard)
                        await checks(mode, on_a, on_b, heard, redis)
                        tg.cancel_scope.cancel()
                else:
                    await on_b.subscribe_resource(PROCESSES)
                    await on_b.subscribe_resource(LOAD)
                    await checks(mode, on_a, on_b, heard, redis)
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=10)
        redis.close()


async def checks(mode: str, on_a: Client, on_b: Client, heard: Heard, redis: Redis) -> None:
    want = "2026-07-28" if mode == "auto" else "2025-11-25"
    check(f"{mode} both instances negotiate {want}", on_a.protocol_version == want == on_b.protocol_version,
          (on_a.protocol_version, on_b.protocol_version))

    spawned = await on_a.call_tool("proc_spawn", {"name": "through-a"})
    pid = (spawned.structured_content or {}).get("pid")
    check(f"{mode} proc_spawn through A answers a pid", not spawned.is_error and isinstance(pid, int), spawned)
    check(f"{mode} a subscriber on B hears the spawn made through A", await heard.wait_for(PROCESSES, 10), heard.uris)
    item = json.loads((await on_b.read_resource(f"{PROCESSES}/{pid}")).contents[0].text)
    check(f"{mode} B reads the process A spawned", item.get("name") == "through-a", item)

    pids: list[int] = []

    async def spawn_many(client: Client, tag: str) -> None:
        for i in range(10):
            r = await client.call_tool("proc_spawn", {"name": f"{tag}{i}"})
            if not r.is_error:
                pids.append(r.structured_content["pid"])

    async with anyio.create_task_group() as tg:
        tg.start_soon(spawn_many, on_a, "a")
        tg.start_soon(spawn_many, on_b, "b")
    check(f"{mode} 20 concurrent spawns through A and B get 20 distinct pids", len(set(pids)) == 20 == len(pids), sorted(pids))
    keys = json.loads((await on_a.read_resource(PROCESSES)).contents[0].text)
    load = json.loads((await on_a.read_resource(LOAD)).contents[0].text)
    check(f"{mode} the load counts every process, whichever instance spawned it", load["procs"] == len(keys) == 23, (load, len(keys)))

    redis.kill()
    started = time.time()
    down = await on_a.call_tool("proc_spawn", {"name": "while-down"})
    check(
        f"{mode} with Redis down a call is an isError saying the store is unreachable",
        down.is_error and "the store is unreachable" in text_of(down),
        down,
    )
    check(f"{mode} and it does not hang", time.time() - started < 10, time.time() - started)

    await anyio.sleep(0.5)
    heard.uris.clear()
    redis.start()
    check(f"{mode} after Redis restarts, B's subscriber is told to re-read", await heard.wait_for(LOAD, 15), heard.uris)
    deadline = time.time() + 15
    again = None
    while time.time() < deadline:
        again = await on_a.call_tool("proc_spawn", {"name": "after"})
        if not again.is_error:
            break
        await anyio.sleep(0.2)
    check(f"{mode} the instances reconnect by themselves and calls succeed again", again is not None and not again.is_error, again)
    before = json.loads((await on_b.read_resource(f"{PROCESSES}/{pid}")).contents[0].text)
    check(f"{mode} a write acknowledged before the restart is still there", before.get("name") == "through-a", before)


class Router(httpx2.AsyncBaseTransport):
    """A load balancer in the client: every request goes to the instance on `port`."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        request.url = request.url.copy_with(port=self.port)
        request.headers["host"] = f"127.0.0.1:{self.port}"
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def failover() -> None:
    redis = Redis()
    procs = []
    try:
        a_proc, a_url = instance(redis)
        b_proc, b_url = instance(redis)
        procs = [a_proc, b_proc]
        router = Router(int(re.search(r":(\d+)/", a_url).group(1)))
        heard = Heard()
        with anyio.fail_after(90):
            async with (
                httpx2.AsyncClient(transport=router, timeout=httpx2.Timeout(30, read=300)) as http,
                Client(streamable_http_client(a_url, http_client=http), mode="legacy",
                       message_handler=heard.on_message, read_timeout_seconds=30) as client,
                Client(b_url, mode="legacy", read_timeout_seconds=30) as other,
            ):
                await client.subscribe_resource(LOAD)
                await anyio.sleep(0.5)  # the SDK's standalone stream attaches
                await other.call_tool("proc_spawn", {"name": "before"})
                check("failover the client hears, through A, a spawn made through B", await heard.wait_for(LOAD, 10), heard.uris)

                router.port = int(re.search(r":(\d+)/", b_url).group(1))
                a_proc.kill()
                a_proc.wait(timeout=10)
                heard.uris.clear()
                after = await client.call_tool("proc_spawn", {"name": "after"})
                check("failover with A killed, B serves the same session's calls (restored from Redis)",
                      not after.is_error and "pid" in (after.structured_content or {}), after)
                # Subscriptions lived in A's memory: the client subscribes again, now on B.
                await client.subscribe_resource(LOAD)
                await other.call_tool("proc_spawn", {"name": "later"})
                check("failover the SDK's stream, resumed on B with Last-Event-ID, carries B's notification",
                      await heard.wait_for(LOAD, 15), heard.uris)
                load = json.loads((await client.read_resource(LOAD)).contents[0].text)
                check("failover nothing acknowledged through A is lost", load["procs"] == 5, load)
    finally:
        for p in procs:
            p.kill()
            p.wait(timeout=10)
        redis.close()


async def main() -> int:
    if shutil.which("redis-server") is None:
        print("NOTE scaleout skipped: redis-server is not installed (apt-get install redis-server)")
        return 0
    for mode in ("auto", "legacy"):
        try:
            await scenario(mode)
        except Exception as e:  # noqa: BLE001 - a crash is one more failure, reported with its cause
            check(f"{mode} scenario ran to the end", False, repr(e))
    try:
        await failover()
    except Exception as e:  # noqa: BLE001 - a crash is one more failure, reported with its cause
        check("failover scenario ran to the end", False, repr(e))
    return check.summary()


if __name__ == "__main__":
    sys.exit(anyio.run(main))
