"""Connects the official MCP Python SDK to a running wms and reports what it saw, as JSON on stdout.

Usage: mcp_round_trip.py URL TOKEN CALLS_JSON
CALLS_JSON is a list of [tool, arguments] to call. The Rust test compares the report with the
capabilities manifest and the execute endpoint.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(url: str, token: str, calls: list) -> dict:
    report = {"tools": [], "calls": []}
    async with streamablehttp_client(url, headers={"Authorization": f"Bearer {token}"}) as (read, write, _):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            report["protocol_version"] = init.protocolVersion
            report["server_name"] = init.serverInfo.name
            report["has_instructions"] = bool(init.instructions)
            await session.send_ping()
            listed = await session.list_tools()
            for t in listed.tools:
                report["tools"].append(
                    {
                        "name": t.name,
                        "description": t.description,
                        "input_schema": t.inputSchema,
                        "annotations": t.annotations.model_dump(exclude_none=True) if t.annotations else None,
                    }
                )
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
                report["calls"].append(
                    {
                        "tool": name,
                        "arguments": arguments,
                        "is_error": result.isError,
                        "structured": result.structuredContent,
                        "text": texts[0] if texts else None,
                    }
                )
    return report


if __name__ == "__main__":
    out = asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
    print(json.dumps(out))
