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


PATHS = f"""
import sys
sys.path.insert(0, {ROOT!r})
from okstra_git.core import lightos
cases = sys.argv[1:]
got = [(lightos.realpath(p), lightos.isdir(p), lightos.dirname(p)) for p in cases]
joins = [lightos.join(*parts) for parts in (("a", "b"), ("a/", "b"), ("", "b"), ("a", "/b", "c"),
         ("/", "x"), ("a", ""), ("a", "b", "c"))]
import os
want = [(os.path.realpath(p), os.path.isdir(p), os.path.dirname(p)) for p in cases]
assert got == want, (got, want)
assert joins == [os.path.join(*parts) for parts in (("a", "b"), ("a/", "b"), ("", "b"),
                 ("a", "/b", "c"), ("/", "x"), ("a", ""), ("a", "b", "c"))], joins
"""


def test_paths_as_os_makes_them(tmp_path: Path):
    """realpath, isdir, dirname and join give what os.path gives: for a plain absolute path
    (answered without os), and for the paths left to os — through a symbolic link (a folder
    and a file), with ``..``, ``.`` or ``//``, relative, missing, a file named as a folder."""
    real = tmp_path / "real"
    (real / "sub").mkdir(parents=True)
    (real / "sub" / "f.py").write_text("")
    (tmp_path / "link").symlink_to(real)
    (real / "flink.py").symlink_to(real / "sub" / "f.py")
    cases = [
        str(real / "sub" / "f.py"),
        str(real / "sub"),
        str(tmp_path / "link" / "sub" / "f.py"),
        str(real / "flink.py"),
        f"{real}/sub/../sub/f.py",
        f"{real}/./sub",
        f"{real}//sub/",
        "sub/f.py",
        str(real / "missing" / "x"),
        str(real / "sub" / "f.py" / "x"),
        "/",
        "",
    ]
    proc = subprocess.run(
        [sys.executable, "-S", "-c", PATHS, *cases], cwd=real, capture_output=True
    )
    assert proc.returncode == 0, proc.stderr.decode()


def test_a_plain_path_is_made_real_without_os(tmp_path: Path):
    """The path the package's data folder is found by (no link in it) needs no os."""
    code = (
        f"import sys; sys.path.insert(0, {ROOT!r}); from okstra_git.core import lightos; "
        f"assert lightos.realpath({str(tmp_path)!r}) == {str(tmp_path)!r}; "
        "from okstra_git.core.resources import data_path; "
        "assert lightos.isdir(data_path('schemas')); assert 'os' not in sys.modules"
    )
    real = str(tmp_path.resolve())
    code = code.replace(repr(str(tmp_path)), repr(real))
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
