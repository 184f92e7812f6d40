"""Rendering the Jinja templates shipped in ``templates/`` (imported only where used)."""

from __future__ import annotations

import functools
from typing import Any

from ..core import shell
from ..core.resources import data_dir


@functools.cache
def _environment() -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        # HTML templates escape every value unless it is marked safe; Markdown and text are
        # written as they are (their values are encoded by the code that renders them).
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default=False),
    )
    # Commands in templates are argv tuples: ``{{ ("stage", "done", key) | okstra }}``.
    env.filters["okstra"] = lambda words: shell.okstra(*words)
    env.filters["shell"] = lambda words: shell.command(*words)
    return env


def render(template: str, **context: Any) -> str:
    return _environment().get_template(template).render(**context)
