"""Connects the official MCP Python SDK to a running wms the way a hosted client does: no token
configured, so the SDK's OAuth support discovers the authorization server from the MCP
endpoint's 401, registers itself, and sends the member to the consent page, which headless
Chromium (Playwright) signs in to and allows. The code comes back to a loopback redirect URI
served here, the SDK exchanges it, and lists the tools. Then the member revokes the app on the
connected apps page and its token is refused. Reports JSON on stdout.

Usage: mcp_oauth_flow.py MCP_URL EMAIL PASSWORD
"""

import asyncio
import json
import os
import socket
import sys
import threading
import urllib.parse

import httpx
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from playwright.async_api import async_playwright


class Memory(TokenStorage):
    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull):
        self.client = client_info


class Callback(BaseHTTPRequestHandler):
    """The app's loopback redirect URI: keeps the query and tells the member they may close."""

    received = []

    def do_GET(self):
        parsed = urllib.parse.urlparse(self.path)
        if parsed.path == "/callback":  # not the browser's /favicon.ico
            Callback.received.append(parsed.query)
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.end_headers()
        self.wfile.write(b"<p id=done>Connected. You can close this window.</p>")

    def log_message(self, *args):
        pass


async def main(url: str, email: str, password: str) -> dict:
    # WMS_CALLBACK_HOST=::1: a native app's IPv6 loopback redirect URI (RFC 8252).
    host = os.environ.get("WMS_CALLBACK_HOST", "127.0.0.1")
    server_class = ThreadingHTTPServer
    if ":" in host:
        server_class = type("Server6", (ThreadingHTTPServer,), {"address_family": socket.AF_INET6})
    server = server_class((host, 0), Callback)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    shown = f"[{host}]" if ":" in host else host
    callback = f"http://{shown}:{server.server_address[1]}/callback"
    report = {}
    storage = Memory()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = await browser.new_page()
        csp_violations = []
        page.on("console", lambda m: csp_violations.append(m.text) if "Content Security Policy" in m.text else None)

        async def redirect_handler(authorization_url: str) -> None:
            report["authorization_url"] = authorization_url
            await page.goto(authorization_url)
            # Signed out: the usual sign-in page, which comes back here.
            report["sign_in_url"] = page.url
            await page.fill("#email", email)
            await page.fill("#password", password)
            await page.click("form[action='/login'] button[type=submit]")
            await page.wait_for_selector("#consent-allow")
            report["consent"] = {
                "client": await page.inner_text("#consent-client"),
                "workspace": await page.inner_text("#consent-workspace"),
                "scope": await page.inner_text("#consent-scope code"),
            }
            await page.click("#consent-allow")
            await page.wait_for_selector("#done")

        async def callback_handler():
            query = urllib.parse.parse_qs(Callback.received[-1])
            if "code" not in query:
                raise RuntimeError(f"the redirect URI received {Callback.received[-1]!r} after {report!r}")
            return query["code"][0], query.get("state", [None])[0]

        provider = OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(
                client_name="Playwright MCP client",
                redirect_uris=[callback],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method="none",
            ),
            storage=storage,
            redirect_handler=redirect_handler,
            callback_handler=callback_handler,
            timeout=60,
        )
        async with streamablehttp_client(url, auth=provider) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listed = await session.list_tools()
                report["tools"] = sorted(t.name for t in listed.tools)
        # The member revokes the app on the connected apps page; its token stops working.
        base = url.split("/workspaces/")[0]
        await page.goto(f"{base}/settings/account/connected-apps")
        report["connected_apps"] = await page.inner_text("#connected-apps tbody")
        await page.click("button[aria-label='Revoke Playwright MCP client']")
        await page.wait_for_selector("#connected-apps-empty")
        async with httpx.AsyncClient() as http:
            after = await http.post(
                url,
                headers={"Authorization": f"Bearer {storage.tokens.access_token}"},
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            )
            report["after_revoke"] = [after.status_code, after.json().get("code")]
        await browser.close()
    server.shutdown()
    report["csp_violations"] = csp_violations
    report["access_token"] = storage.tokens.access_token
    report["refresh_token"] = storage.tokens.refresh_token
    report["scope"] = storage.tokens.scope
    report["client_id"] = storage.client.client_id
    return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))))
