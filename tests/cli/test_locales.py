"""Output survives any locale: under a locale whose charset cannot hold okstra's text (an em
dash, a Korean stage title), every command still prints, and
`--json` stays valid JSON carrying the same data. The locales are generated with Debian's
`locales` package where missing (.ci/run); a test is skipped, saying which, when one is absent."""

from __future__ import annotations

import codecs
import json
import locale
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claims_world import approved_task

LOCALES = ["en_US.ISO-8859-1", "ja_JP.EUC-JP"]


def have(name: str) -> bool:
    try:
        old = locale.setlocale(locale.LC_CTYPE)
        locale.setlocale(locale.LC_CTYPE, name)
    except locale.Error:
        return False
    locale.setlocale(locale.LC_CTYPE, old)
    return True


def run(cwd: Path, loc: str, *args: str) -> tuple[int, bytes, bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "PYTHONIO", "LANG"))}
    env.update(LC_ALL=loc, PYTHONUTF8="0", OKSTRA_DEBUG="")
    proc = subprocess.run(
        [sys.executable, "-m", "okstra_git", *args], cwd=cwd, capture_output=True, env=env
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def task(repo: Path) -> Path:
    """An approved task whose stage titles are Korean, stage 1 claimed."""
    approved_task(repo)
    code, _, err = run(repo, "C.UTF-8", "stage", "claim", "p:g:i", "--no-worktree")
    assert code == 0, err
    return repo


COMMANDS = [
    ("-h",),
    ("stage", "claim", "-h"),
    ("task", "list"),
    ("task", "status", "p:g:i"),
    ("task", "show", "p:g:i"),
    ("stage", "list", "p:g:i"),
    ("stage", "claim", "p:g:i", "--stage", "1", "--resume"),
    ("task", "status", "no:such:task"),  # an error message too
]


@pytest.mark.parametrize("loc", LOCALES)
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_every_command_prints_under_a_narrow_locale(task: Path, loc: str, args: tuple[str, ...]):
    if not have(loc):
        pytest.skip(f"locale {loc} is not generated here (localedef -i … -f … {loc})")
    charset = codecs.lookup(loc.split(".")[1]).name
    wanted, out, _ = run(task, "C.UTF-8", *args)
    code, text, err = run(task, loc, *args)
    assert b"internal error" not in err, err.decode(charset, "replace")
    assert code == wanted, err.decode(charset, "replace")
    assert bool(text) == bool(out)  # it printed what it prints under UTF-8 …
    text.decode(charset), err.decode(charset)  # … in the locale's own charset
    data_here = run(task, "C.UTF-8", "--json", *args)[1]
    code, data, err = run(task, loc, "--json", *args)
    assert b"internal error" not in err
    if args[-1] != "-h":
        assert json.loads(data.decode(charset)) == json.loads(data_here.decode("utf-8"))
