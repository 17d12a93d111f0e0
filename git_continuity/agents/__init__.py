"""The coding agents (Claude Code, Codex, Gemini CLI): the hooks each runs and what they
answer (``hooks``), the table of agents (``table``), their settings and instruction files
merged and taken out byte for byte (``settings``, ``jsonedit``, ``files``), the MCP
registration (``mcp_install``), whether their hooks would run (``probe``, ``shell``,
``codex_trust``), the briefs a conversation was given (``briefed``), the hooks' log, and
the in-session loop notice after a failed command (``loop_notice``).

May import: ``gate``, ``sessions`` and every folder below them.
"""
