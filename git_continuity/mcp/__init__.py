"""``git continuity mcp``: a stdio MCP server whose tools are rows naming commands
(``tools``), so a tool call runs the same function as the command line; ``summary`` is the
short text beside each tool's JSON document.

May import: ``cli`` (its peer) and every folder below.
"""
