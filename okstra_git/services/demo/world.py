"""The demo's throw-away world: a sample project, a local bare remote, and a runner that has
each command told as a user types it."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ...core.errors import Refused
from ...core.resources import okstra_command
from ...core.shell import command
from ...core.values import Record, field
from ...git import process

SAMPLE_FILES = {
    "README.md": "# calc\n\nA tiny calculator used by the okstra demo.\n",
    "calc/__init__.py": "",
    "calc/core.py": "def add(a, b):\n    return a + b\n",
    "tests/test_core.py": (
        "from calc.core import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    ),
}


class Narrator(Protocol):
    """Tells the demo as it runs (``views/demo.py``'s ``Narration``: a service never imports a
    view, so the command hands it in)."""

    def started(self, root: Path) -> None: ...
    def command(self, shown: str, where: Path | None) -> None: ...
    def output(self, text: str) -> None: ...
    def line(self, text: str) -> None: ...
    def part(self, title: str) -> None: ...
    def note(self, text: str) -> None: ...
    def page(self, page: Path, what: str) -> None: ...
    def finished(self, root: Path) -> None: ...


class Demo(Record):
    """The demo's throw-away world and a runner that has each command told as a user types
    it."""

    root: Path
    """Folder holding everything the demo makes."""
    repo: Path
    """The sample project's main worktree."""
    remote: Path
    """A local bare repository standing in for the shared server."""
    narration: Narrator
    """Tells each command, its output and each part as the demo goes."""
    key: str = "demo:calc:add-mul"
    """The task the demo drives."""
    facts: dict[str, str] = field(default_factory=dict)
    """Values one step leaves for the next (commit ids, paths)."""

    def run(
        self, *args: str, expect: int = 0, cwd: Path | None = None, quiet: bool = False
    ) -> process.Completed:
        """Run a command; ``git okstra …`` goes to this installation's executable."""
        shown = command(*args)
        where = cwd or self.repo
        self.narration.command(shown, where if where != self.repo else None)
        argv = list(args)
        if argv[:2] == ["git", "okstra"]:
            argv = [*okstra_command(), *argv[2:]]
        proc = process.run(argv, where)
        if not quiet:
            for stream in (proc.stdout, proc.stderr):
                if stream.strip():
                    self.narration.output(stream)
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
        self.narration.part(title)


def make_world(root: Path, narration: Narrator) -> Demo:
    repo, remote = root / "calc", root / "remote.git"
    process.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    process.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    demo = Demo(root=root, repo=repo, remote=remote, narration=narration)
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
        process.run(cmd, repo, check=True)
    return demo
