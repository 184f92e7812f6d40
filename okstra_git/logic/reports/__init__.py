"""A run's report data (``data.json``, docs/workflow.md): its rules, starter data and the Markdown
and HTML views rendered from it. Pure: plain functions on plain data, no git.

``rules`` checks the schema and every rule beyond it; ``starter`` builds a valid starting
point for a phase; ``render`` writes the canonical Markdown and the self-contained HTML view;
``labels`` holds the Korean and English labels in one table.
"""
