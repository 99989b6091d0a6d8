"""The official Python SDK client's OAuth support against examples/ops as a protected resource.

The client is given only the server's URL. Its first request meets the `401`; from the challenge
and the Protected Resource Metadata it discovers the authorization server (interop/auth/issuer.mjs:
oauth2-mock-server with dynamic client registration), registers, runs the authorization-code flow
with PKCE (the "browser" here follows the authorize redirect), and calls a tool with the token it
got (`ops.read`). Then a step up: `proc_kill` needs `ops.admin`, so the call answers `403
insufficient_scope`, the client authorizes again with the wider scope, and the call succeeds. In
both eras (auto: 2026-07-28; legacy: initialize).

usage: check_oauth.py OPS_BINARY NODE ISSUER_SCRIPT
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from contextlib import contextmanager
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from report import Checks, text_of

OPS, NODE, ISSUER = sys.argv[1:4]
REDIRECT = "http://127.0.0.1:1/callback"  # never dialled: the redirect is read, not followed

check = Checks("python-oauth")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def issuer_and_ops():
    """A fresh authorization server and `ops --http` protected by it: the MCP endpoint's URL."""
    issuer = subprocess.Popen([NODE, ISSUER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ops = None
    try:
        issuer_url = json.loads(issuer.stdout.readline())["issuer"]
        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        ops = subprocess.Popen(
            [OPS, "--http", f"127.0.0.1:{port}", "--auth-issuer", issuer_url, "--auth-audience", url],
            stderr=subprocess.PIPE,
            text=True,
        )
        line = ops.stderr.readline()
        if "http://" not in line:
            raise RuntimeError(f"ops --http said {line!r}")
        yield url
    finally:
        for proc in (ops, issuer):
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=10)


class Memory:
    """The client's token storage, in memory; records every token it was given."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None
        self.granted: list[str | None] = []

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.granted.append(tokens.scope)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Browser:
    """Stands in for the user's browser: opens the authorization URL and reads where the
    authorization server redirects it (the mock approves at once)."""

    def __init__(self) -> None:
        self.redirect: str | None = None
        self.asked: list[str] = []

    async def open(self, authorization_url: str) -> None:
        self.asked.append(parse_qs(urlparse(authorization_url).query).get("scope", [""])[0])
        async with httpx2.AsyncClient() as http:
            answer = await http.get(authorization_url, follow_redirects=False)
        self.redirect = answer.headers["location"]

    async def callback(self) -> AuthorizationCodeResult:
        query = parse_qs(urlparse(self.redirect or "").query)
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])


async def scenario(mode: str) -> None:
    tag = mode
    with issuer_and_ops() as url:
        storage, browser = Memory(), Browser()
        auth = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(
                client_name="surface-interop",
                redirect_uris=[REDIRECT],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method="none",
            ),
            storage=storage,
            redirect_handler=browser.open,
            callback_handler=browser.callback,
        )
        with anyio.fail_after(60):
            async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
                transport = streamable_http_client(url, http_client=http)
                async with Client(transport, mode=mode, read_timeout_seconds=30) as client:
                    tools = {t.name for t in (await client.list_tools()).tools}
                    check(
                        f"{tag} the client registered and got a token for ops.read from the 401 alone",
                        storage.client is not None and storage.granted == ["ops.read"],
                        f"client {storage.client}, scopes granted {storage.granted}",
                    )
                    check(
                        f"{tag} tools/list shows what ops.read reaches",
                        "load_sample" in tools and "proc_kill" not in tools,
                        tools,
                    )
                    sample = await client.call_tool("load_sample", {})
                    check(f"{tag} a tool call with the token", not sample.is_error, text_of(sample))
                    killed = await client.call_tool("proc_kill", {"pid": 1})
                    check(
                        f"{tag} step up: 403 insufficient_scope, authorized again with ops.admin, the call succeeds",
                        not killed.is_error
                        and len(browser.asked) == 2
                        and "ops.admin" in browser.asked[1].split()
                        and "ops.admin" in (storage.granted[-1] or "").split(),
                        f"{text_of(killed)}; asked {browser.asked}; granted {storage.granted}",
                    )


async def main() -> int:
    for mode in ["auto", "legacy"]:
        try:
            await scenario(mode)
        except Exception as e:  # noqa: BLE001 - one FAIL line per scenario, whatever broke
            check(f"{mode} the OAuth scenario", False, repr(e))
    return check.summary()


if __name__ == "__main__":
    code = anyio.run(main)
    sys.exit(code)
