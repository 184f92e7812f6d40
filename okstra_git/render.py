"""Rendering the Jinja templates shipped in ``templates/`` (imported only where used)."""

from __future__ import annotations

import functools
from typing import Any

from . import shell
from .resources import data_dir

ONE_LINE_VALUES = frozenset(
    {"run-directive.md.j2", "verification-target.md.j2", "task-index.md.j2"}
)
"""Templates an agent acts on line by line: every value in them is shown on one line, a line
break as its escape, so a value (a plan path, a file name from git status, a title from a
fetched record) can never add a line — a directive line it added would be read as scope.
The report templates encode their multi-line prose themselves."""
_BREAKS = {
    ord(ch): ch.encode("unicode_escape").decode() for ch in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
}


def _one_line(value: Any) -> Any:
    return value.translate(_BREAKS) if isinstance(value, str) else value


@functools.cache
def _environment(one_line: bool) -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        # HTML templates escape every value unless it is marked safe; Markdown and text are
        # written as they are (their values are encoded by the code that renders them).
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default=False),
        finalize=_one_line if one_line else None,
    )
    # Commands in templates are argv tuples: ``{{ ("stage", "done", key) | okstra }}``.
    env.filters["okstra"] = lambda words: shell.okstra(*words)
    env.filters["shell"] = lambda words: shell.command(*words)
    return env


def render(template: str, **context: Any) -> str:
    return _environment(template in ONE_LINE_VALUES).get_template(template).render(**context)
