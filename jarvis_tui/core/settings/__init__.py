"""Settings: the schema (each setting once), the config file, API keys, MCP server tables."""
