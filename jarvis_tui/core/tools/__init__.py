"""Tools: specs, outputs (cut, stubbed), MCP servers and their content, the built-in search tool."""
