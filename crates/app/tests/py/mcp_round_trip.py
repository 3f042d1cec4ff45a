"""Connects the official MCP Python SDK to a running wms and reports what it saw, as JSON on stdout.

Usage: mcp_round_trip.py URL TOKEN CALLS_JSON
CALLS_JSON is a list of [tool, arguments] to call. The Rust test compares the report with the
capabilities manifest and the execute endpoint.

Every successful call's structuredContent is validated against the tool's outputSchema with
jsonschema (the SDK validates too; this also checks the schemas are valid JSON Schema), and every
resource listed is read.
"""

import asyncio
import json
import sys

import jsonschema
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError


async def main(url: str, token: str, calls: list) -> dict:
    report = {"tools": [], "calls": []}
    async with streamablehttp_client(url, headers={"Authorization": f"Bearer {token}"}) as (read, write, _):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            report["protocol_version"] = init.protocolVersion
            report["server_name"] = init.serverInfo.name
            report["has_instructions"] = bool(init.instructions)
            await session.send_ping()
            report["resources_capability"] = init.capabilities.resources is not None
            listed = await session.list_tools()
            schemas = {}
            for t in listed.tools:
                if t.outputSchema is not None:
                    jsonschema.validators.validator_for(t.outputSchema).check_schema(t.outputSchema)
                    schemas[t.name] = t.outputSchema
                report["tools"].append(
                    {
                        "name": t.name,
                        "description": t.description,
                        "input_schema": t.inputSchema,
                        "has_output_schema": t.outputSchema is not None,
                        "annotations": t.annotations.model_dump(exclude_none=True) if t.annotations else None,
                    }
                )
            for name, arguments in calls:
                result = await session.call_tool(name, arguments)
                texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
                validated = False
                if not result.isError:
                    # Raises, failing the run, when the result does not match the declared schema.
                    jsonschema.validate(result.structuredContent, schemas[name])
                    validated = True
                report["calls"].append(
                    {
                        "tool": name,
                        "arguments": arguments,
                        "is_error": result.isError,
                        "structured": result.structuredContent,
                        "validated": validated,
                        "text": texts[0] if texts else None,
                    }
                )
            report["resources"] = []
            resources = await session.list_resources()
            for r in resources.resources:
                read = await session.read_resource(r.uri)
                text = "".join(getattr(c, "text", "") for c in read.contents)
                report["resources"].append(
                    {
                        "uri": str(r.uri),
                        "name": r.name,
                        "title": r.title,
                        "mime_type": r.mimeType,
                        "read_mime_type": read.contents[0].mimeType if read.contents else None,
                        "text": text,
                    }
                )
            try:
                await session.read_resource("wms://docs/no-such-page")
                report["unknown_resource_error"] = None
            except McpError as e:
                report["unknown_resource_error"] = e.error.code
    return report


if __name__ == "__main__":
    out = asyncio.run(main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3])))
    print(json.dumps(out))
