"""The ``git okstra`` command line: one module per command group, each only parsing, calling a
service and formatting output; ``declare.py`` is the framework (how to declare a command)."""

GROUP_MODULES = (
    "init",
    "task",
    "run",
    "report",
    "plan",
    "clarify",
    "stage",
    "worktree",
    "integrate",
    "work",
    "verify",
    "critic",
    "incremental",
    "wizard",
    "sync",
    "mcp",
    "hooks",
    "ci",
    "board",
    "demo",
    "docs",
    "completion",
)
"""The modules ``okstra_git/cli/<name>.py`` that declare commands, in the order help lists
them; the first word of ``git okstra WORD …`` must be one of these."""
