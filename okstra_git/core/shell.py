"""Commands printed for a person or an agent to run (docs/cli.md): shell-quoted and one line.

Every hint, refusal and directive that names a command builds it here, so a task key such as
``p:g:x';touch PWNED;'`` or a path with spaces comes back from ``shlex.split`` as the same argv.
"""

from __future__ import annotations

import shlex

from .errors import BadInput
from .strict import line_break


def command(*argv: object) -> str:
    """``argv`` as one shell line: each word quoted so that ``shlex.split`` gives it back.

    A word holding a line break cannot be printed on one line; such values are refused where
    they enter (keys, paths), and this refuses rather than print a command that runs wrong.
    """
    words = [str(word) for word in argv]
    for word in words:
        if "\0" in word or line_break(word) is not None:
            raise BadInput(f"cannot print a one-line command holding {word!r}: it has a line break")
    return " ".join(shlex.quote(word) for word in words)


def okstra(*args: object) -> str:
    """``git okstra ARGS`` as one quoted shell line."""
    return command("git", "okstra", *args)
