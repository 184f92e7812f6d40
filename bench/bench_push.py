"""What the okstra pre-push hook adds to a real ``git push`` to a local bare remote.

Clones of one bare remote, identical but for the hook: one has ``git okstra hooks
install``, one no hook. In the same run, interleaved round by round, each pushes:

- an unprotected branch (a new ``refs/heads/bench/...`` ref each round);
- a protected branch with an accepted whole-task verdict (a new ``refs/heads/release/...``);
- 20 protected refs at once (all carrying the verdict, so all 20 are checked).

Each push is timed by the CPU it costs, the hook's processes included (``_proc.py``); the
hook's cost is the difference of the medians. A third clone's hook is the floor of any gate
that is a Python program reading its config through git, as ours is: the same Python started
with ``-S`` to read stdin, then the same ``git config`` (it pushes unprotected branches beside
the other two, and its cost is the baseline of that row). Then ``git okstra ci check`` as a
whole process, beside ``python -c pass`` and ``python -c 'import pygit2'`` — the floor of a
hook that would read the verdicts with pygit2, which is why the gate reads through git's
plumbing — and an import check: neither may load pygit2, jsonschema or jinja2.
Usage: python bench/bench_push.py [--rounds R] [--short]
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import ENV, PYGIT2, Row, absolute_row, git, interleaved, rounds_main, run

from okstra_git.git.repo import GitRepo
from okstra_git.records.verdict import Verdict, append_verdict
from okstra_git.services import hooks as hookinstall

HEAVY = ("pygit2", "jsonschema", "jinja2")
CASES = ("unprotected branch", "protected + verdict", "20 protected refs")


def record_verdict(repo: Path, key: str = "bench:grp:feat", checkout: Path | None = None) -> str:
    """Note an accepted whole-task verdict for ``key`` on the HEAD of ``checkout`` (default: the
    repository's own); returns that commit."""
    grepo = GitRepo.open(repo)
    head = (
        GitRepo.open(checkout).resolve_commit("HEAD") if checkout else grepo.resolve_commit("HEAD")
    )
    append_verdict(
        grepo,
        Verdict(
            task_key=key,
            scope="whole-task",
            stages=[1],
            base=head,
            head=head,
            head_tree=grepo.tree_id(head),
            verdict="accepted",
            blocker_count=0,
            report_digest="sha256:" + "0" * 64,
            routing="release-handoff",
            recorded_at="2026-06-06T12:00:00+00:00",
            recorded_by="Bench <bench@example.invalid>",
        ),
    )
    return head


FLOOR_HOOK = """#!/bin/sh
# The floor of a gate written in Python that reads its config through git: no decision made.
{python} -S -c 'import sys; sys.stdin.buffer.read()'
git config -z --show-origin --get-regexp '^okstra\\.' >/dev/null
exit 0
"""


def recorded_python(script: str) -> str:
    """The Python the installed okstra hook starts (``OKSTRA_PYTHON=``), else this one."""
    for line in script.splitlines():
        if line.startswith("OKSTRA_PYTHON="):
            value = shlex.split(line[len("OKSTRA_PYTHON=") :])
            if value and value[0]:
                return value[0]
    return sys.executable


def setup(root: Path, files: int) -> tuple[Path, Path, str]:
    remote = root / "remote.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(remote))
    seed = root / "seed"
    git(root, "init", "-q", "-b", "main", str(seed))
    for n in range(files):  # a small project, so pushes pack real objects
        (seed / f"f{n}.txt").write_text(f"file {n}\n" * 20)
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "project")
    git(seed, "push", "-q", str(remote), "main")
    clones = []
    for name in ("with-hook", "no-hook", "floor-hook"):
        clone = root / name
        git(root, "clone", "-q", str(remote), str(clone))
        (clone / "work.txt").write_text("verified work\n")
        git(clone, "add", "work.txt")
        git(clone, "commit", "-q", "-m", "verified work")
        clones.append(clone)
    heads = {record_verdict(c) for c in clones}
    assert len(heads) == 1, "the two clones must push the same commit"
    hookinstall.install(clones[0])
    assert not (clones[1] / ".git" / "hooks" / "pre-push").exists()
    python = recorded_python((clones[0] / ".git" / "hooks" / "pre-push").read_text())
    floor = clones[2] / ".git" / "hooks" / "pre-push"
    floor.write_text(FLOOR_HOOK.format(python=shlex.quote(python)))
    floor.chmod(0o755)
    return clones[0], clones[1], heads.pop()


class Pusher:
    """A new ref name on every push, so every push creates refs (the hook checks them all)."""

    def __init__(self, clone: Path, case: str) -> None:
        self.clone, self.case, self.count = clone, case, 0

    def __call__(self):
        self.count += 1
        tag = f"{self.clone.name}-{self.count}"
        if self.case == "unprotected branch":
            specs = [f"HEAD:refs/heads/bench/{tag}"]
        elif self.case == "protected + verdict":
            specs = [f"HEAD:refs/heads/release/{tag}"]
        else:
            specs = [f"HEAD:refs/heads/release/{tag}-{k}" for k in range(20)]
        return run(["git", "push", "-q", "origin", *specs], self.clone)


def imports_of(cwd: Path, argv: list[str], stdin: bytes | None) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "okstra_git", *argv],
        cwd=cwd,
        env=ENV,
        input=stdin,
        capture_output=True,
    )
    lines = proc.stderr.decode().splitlines()
    return {ln.split("|")[-1].strip().split(".")[0] for ln in lines if "|" in ln}


def measure(rounds: int, short: bool) -> tuple[list[Row], str]:
    """The report rows, and the details this bench prints."""
    with tempfile.TemporaryDirectory(prefix="okstra-bench-push-") as tmp:
        hooked, plain, head = setup(Path(tmp), 20 if short else 200)
        script = (hooked / ".git" / "hooks" / "pre-push").read_text()
        exe = hookinstall.recorded_exe(script) or "git-okstra"
        warmup = 0 if short else 1
        lines = [
            f"okstra pre-push hook running {exe}; {rounds} rounds, CPU medians in ms",
            f"{'git push':<24} {'no hook':>9} {'okstra hook':>11} {'added':>10}",
        ]
        added: dict[str, tuple[float, float]] = {}
        for case in CASES:
            pushers = {"no hook": Pusher(plain, case), "hook": Pusher(hooked, case)}
            if case == "unprotected branch":
                pushers["floor hook"] = Pusher(hooked.parent / "floor-hook", case)
            medians = interleaved(pushers, rounds, warmup)
            base, ours = medians["no hook"], medians["hook"]
            added[case] = (ours - base, base)
            lines.append(f"{case:<24} {base:9.1f} {ours:11.1f} {ours - base:+10.1f}")
            if "floor hook" in medians:
                floored = medians["floor hook"]
                floor = floored - base
                lines.append(f"{'  the floor hook':<24} {base:9.1f} {floored:11.1f} {floor:+10.1f}")
        alone = interleaved(
            {
                "python -c pass": lambda: run([sys.executable, "-c", "pass"], hooked),
                "python -c 'import pygit2'": lambda: run(PYGIT2, hooked),
                "ci check": lambda: run([exe, "ci", "check"], hooked),
            },
            rounds,
            warmup,
        )
        lines.append(f"\n{'process alone':<28} {'CPU ms':>9}")
        lines += [f"{name:<28} {ms:9.1f}" for name, ms in alone.items()]
        line = f"refs/heads/main {head} refs/heads/main {'0' * 40}\n".encode()
        for what, argv, stdin in (
            ("hooks run pre-push", ["hooks", "run", "pre-push", "origin", "url"], line),
            ("ci check", ["ci", "check"], None),
        ):
            heavy = sorted(set(HEAVY) & imports_of(hooked, argv, stdin))
            lines.append(
                f"imports of {what}: " + (f"LOADS {', '.join(heavy)}" if heavy else "lean")
            )
    pygit2 = alone["python -c 'import pygit2'"]
    rows = [
        Row(
            "pre-push hook: CPU added to a protected push",
            added["protected + verdict"][0],
            pygit2,
            "ms",
            "≤ 30 ms",
            added["protected + verdict"][0] <= 30,
            "baseline: python -c 'import pygit2', a pygit2 reader's floor",
            number=6,
        ),
        absolute_row(
            "pre-push hook: CPU added to an unprotected push",
            added["unprotected branch"][0],
            20,
            floor,
            number=6,
            note="baseline: a hook that only starts the same python -S and runs git config",
        ),
        absolute_row(
            "pre-push hook: added to a push of 20 protected refs",
            added["20 protected refs"][0],
            60,
        ),
        absolute_row("ci check (whole process)", alone["ci check"], 40, pygit2, number=6),
    ]
    return rows, "\n".join(lines)


if __name__ == "__main__":
    rounds_main(__doc__, measure, 25)
