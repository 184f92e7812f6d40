"""core/lightos: the hook's process reads its environment and starts git without loading
``os``, and sees what ``os`` would show it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import okstra_git
from okstra_git.core import lightos

ROOT = str(Path(okstra_git.__file__).resolve().parent.parent)

CHECK = f"""
import sys
sys.path.insert(0, {ROOT!r})
from okstra_git.core import lightos
seen = dict(lightos.environ())
child = dict(lightos.child_environ(GIT_NO_REPLACE_OBJECTS="1"))
asked = lightos.getenv("OKSTRA_T"), lightos.absolute("a/b"), lightos.absolute("/c")
assert "os" not in sys.modules, "lightos loaded os"
import os
assert seen == dict(os.environ), (seen, dict(os.environ))
assert child == {{**{{os.fsencode(k): os.fsencode(v) for k, v in os.environ.items()}},
                 b"GIT_NO_REPLACE_OBJECTS": b"1"}}
assert asked == (os.environ["OKSTRA_T"], os.path.join(os.getcwd(), "a/b"), "/c"), asked
"""


def test_without_os_it_reads_what_os_would(tmp_path: Path):
    """In a process started without site, as the hook's is: the environment (a value that is
    not UTF-8 too), one for a child, and a path made absolute, as ``os`` gives them."""
    env = {**os.environb, b"OKSTRA_T": b"caf\xe9 \xff"}
    proc = subprocess.run(
        [sys.executable, "-S", "-c", CHECK], cwd=tmp_path, env=env, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr.decode()


def test_with_os_loaded_it_reads_os_environ(monkeypatch):
    """In a process that loaded ``os`` (every in-process caller), a change to ``os.environ``
    is seen, by the child's environment too."""
    monkeypatch.setenv("OKSTRA_LIGHTOS", "changed")
    assert lightos.getenv("OKSTRA_LIGHTOS") == "changed"
    child = lightos.child_environ(GIT_NO_REPLACE_OBJECTS="1")
    assert child["OKSTRA_LIGHTOS"] == "changed" and child["GIT_NO_REPLACE_OBJECTS"] == "1"
    monkeypatch.delenv("OKSTRA_LIGHTOS")
    assert lightos.getenv("OKSTRA_LIGHTOS") is None
