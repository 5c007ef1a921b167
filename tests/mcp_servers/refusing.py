"""An MCP server whose tool fails with a JSON-RPC error, as many servers report a failure, rather
than with an isError result: for the wording of a failed call.

    python -m tests.mcp_servers.refusing
"""

REFUSAL = "the disk is full\n(try again later)"  # a message of two lines, as servers write them


def main() -> int:
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.exceptions import MCPError
    from mcp_types import INTERNAL_ERROR

    server = MCPServer("refusing", log_level="WARNING")

    @server.tool()
    def store(text: str) -> str:
        """Store the text (it never can)."""
        raise MCPError(code=INTERNAL_ERROR, message=REFUSAL)

    server.run("stdio")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
