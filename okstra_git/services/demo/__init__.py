"""``git okstra demo``: the whole lifecycle on a throw-away repository, as a user would type it.

Each part of okstra adds one step module here; a step runs real commands through
:class:`Demo` and states what it expects, so the demo exits 0 only if everything behaved.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import Refused
from ...core.resources import okstra_command
from ...core.shell import command

SAMPLE_FILES = {
    "README.md": "# calc\n\nA tiny calculator used by the okstra demo.\n",
    "calc/__init__.py": "",
    "calc/core.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": (
        "from calc.core import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    ),
}


@dataclass
class Demo:
    """The demo's throw-away world and a runner that prints commands as a user types them."""

    root: Path
    """Folder holding everything the demo makes."""
    repo: Path
    """The sample project's main worktree."""
    remote: Path
    """A local bare repository standing in for the shared server."""
    key: str = "demo:calc:add-mul"
    """The task the demo drives."""
    facts: dict[str, str] = field(default_factory=dict)
    """Values one step leaves for the next (commit ids, paths)."""

    def run(
        self, *args: str, expect: int = 0, cwd: Path | None = None, quiet: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """Run a command; ``git okstra …`` goes to this installation's executable."""
        shown = command(*args)
        where = cwd or self.repo
        print(f"\n$ {shown}" + (f"    # in {where}" if where != self.repo else ""), flush=True)
        argv = list(args)
        if argv[:2] == ["git", "okstra"]:
            argv = [*okstra_command(), *argv[2:]]
        proc = subprocess.run(argv, cwd=where, text=True, capture_output=True)
        if not quiet:
            for stream in (proc.stdout, proc.stderr):
                if stream.strip():
                    print(stream.rstrip(), flush=True)
        if proc.returncode != expect:
            raise Refused(
                f"demo step failed: `{shown}` exited {proc.returncode}, expected {expect}"
            )
        return proc

    def write(self, relpath: str, text: str, cwd: Path | None = None) -> None:
        path = (cwd or self.repo) / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")

    def step(self, title: str) -> None:
        print(f"\n=== {title} ===", flush=True)


def _make_world(root: Path) -> Demo:
    repo, remote = root / "calc", root / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    demo = Demo(root=root, repo=repo, remote=remote)
    for path, text in SAMPLE_FILES.items():
        demo.write(path, text)
    for cmd in (
        ["git", "config", "user.name", "Demo User"],
        ["git", "config", "user.email", "demo@example.invalid"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "calc: initial version"],
        ["git", "remote", "add", "origin", str(remote)],
        ["git", "push", "-q", "origin", "main"],
    ):
        subprocess.run(cmd, cwd=repo, check=True)
    return demo


def _steps() -> list[Callable[[Demo], None]]:
    from . import claims, foundation, incremental, plans, push, reports, verify

    return [
        foundation.step, plans.step, incremental.step, claims.step, verify.step, reports.step,
        push.step,
    ]  # fmt: skip


def run_demo(directory: Path | None) -> int:
    """Run every step; returns 0 only when every command behaved as expected."""
    root = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="okstra-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    if any(root.iterdir()):
        from ...core.errors import BadInput

        raise BadInput(f"demo folder {root} is not empty; give --dir an empty or new folder")
    demo = _make_world(root.resolve())
    print(f"okstra demo in {demo.root}")
    for step in _steps():
        step(demo)
    print(f"\nThe demo finished: every step behaved as expected. Files are in {demo.root}")
    return 0
