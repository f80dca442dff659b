"""memdesk's servers: the local HTTP API (``memdesk serve``) and the MCP server (``memdesk mcp``).

Both work through :class:`core.project.Project`, so agents' writes get the operator's guards. Nothing
here imports Qt, runs a command, or opens a connection other than the one it listens on.
"""
