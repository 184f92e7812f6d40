"""Claims and dones through a shared remote, beside the plain git they need.

A local bare remote holding N other tasks and one approved task with independent stages, all
synced; the clone in step with it. Round by round, as whole processes:
- ``git okstra stage claim KEY --stage K --remote origin --no-worktree`` (fetch, bring the
  task and claims in step, claim, one leased atomic push of the claim, task and approval refs);
- then, a commit made for it (untimed), ``git okstra stage done KEY --stage K --head SHA
  --remote origin`` (fetch, done, one leased atomic push of the claim, the stage branch and
  the task ref).
Beside each, against a copy of the remote as it was just before (in step with the clone):
``git fetch`` of the same refspecs plus ``git push --atomic`` of exactly the refs the command
pushed, each leased on the remote's old value. CPU medians of the processes with their
children (``_proc.py``; a local push's receive-pack is one), and wall medians.

Usage: python bench/bench_remote.py [--tasks N] [--rounds R] [--short]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import ENV, PYGIT2, Row, Timed, git, okstra, run, table
from bench_team import tasks_into

from okstra_git.core.tracking import fetch_refspecs

GOAL = 1.5
"""A claim or done through the remote: at most this × the git fetch + git push it needs."""

KEY = "bench:team:work"


def _okstra_refs(remote: Path) -> dict[str, str]:
    out = git(
        remote,
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        "refs/okstra/",
        "refs/notes/okstra/",
    )
    return dict(line.split(" ") for line in out.splitlines())


def _plain(repo: Path, before: dict[str, str], after: dict[str, str]) -> Timed:
    """The fetch and the leased atomic push of what moved from ``before`` to ``after``, to
    the copy of the remote as it was (``base``), as one figure."""
    fetch = run(["git", "fetch", "-q", "base", *fetch_refspecs("base")], repo)
    moved = sorted(ref for ref in after if after[ref] != before.get(ref))
    leases = [f"--force-with-lease={ref}:{before.get(ref, '')}" for ref in moved]
    specs = [f"{after[ref]}:{ref}" for ref in moved]
    push = run(["git", "push", "-q", "--atomic", "--porcelain", *leases, "base", *specs], repo)
    return Timed(fetch.cpu + push.cpu, fetch.wall + push.wall)


def measure(rounds: int, short: bool, tasks: int | None = None) -> tuple[list[Row], str]:
    import os

    from tests.plans import plan_text

    tasks = tasks if tasks is not None else (5 if short else 500)
    ok = okstra()
    with tempfile.TemporaryDirectory(prefix="okstra-bench-remote-") as tmp:
        root = Path(tmp)
        env = {**ENV, "HOME": str(root)}
        saved = os.environ.get("HOME")
        os.environ["HOME"] = str(root)  # the clone's worktree root and identity stay in here
        remote, clone, base = root / "remote.git", root / "clone", root / "base.git"
        git(root, "init", "-q", "--bare", "-b", "main", str(remote))
        tasks_into(remote, tasks)
        git(root, "init", "-q", "-b", "main", str(clone))
        git(clone, "config", "okstra.worktreeRoot", str(root / "wt"))
        (clone / "plans").mkdir()
        stages = rounds + 1
        plan = plan_text([(n, [], [f"src/p{n}.py"]) for n in range(1, stages + 1)], 1)
        (clone / "plans" / "work.md").write_text(plan)
        git(clone, "add", ".")
        git(clone, "commit", "-q", "-m", "plan")
        git(clone, "remote", "add", "origin", str(remote))
        git(clone, "push", "-q", "origin", "main")
        git(clone, "remote", "add", "base", str(base))
        for argv in (
            ["init", "--project-id", "bench", "--remote", "origin"],
            ["task", "new", KEY, "--type", "implementation-planning"],
            ["plan", "submit", KEY, "plans/work.md"],
            ["plan", "approve", KEY],
            ["sync", "origin"],
        ):
            run([*ok, *argv], clone, env=env)
        names = ("claim", "done", "git-c", "git-d", "pygit2")
        samples: dict[str, list[Timed]] = {name: [] for name in names}

        def snapshot() -> dict[str, str]:
            shutil.rmtree(base, ignore_errors=True)
            shutil.copytree(remote, base, symlinks=True)
            run(["git", "fetch", "-q", "base", *fetch_refspecs("base")], clone)  # in step
            return _okstra_refs(remote)

        try:
            for n in range(rounds + 1):
                stage = str(n + 1)
                before = snapshot()
                claim = [*ok, "stage", "claim", KEY, "--stage", stage, "--remote", "origin"]
                timed = {"claim": run([*claim, "--no-worktree"], clone, env=env)}
                timed["git-c"] = _plain(clone, before, _okstra_refs(remote))
                # The stage's work: one commit on the main commit (a claim without a worktree
                # names its done head with --head).
                tree = git(clone, "rev-parse", "main^{tree}")
                work = git(clone, "commit-tree", tree, "-p", "main", "-m", f"stage {stage}")
                before = snapshot()
                done = [*ok, "stage", "done", KEY, "--stage", stage, "--head", work]
                done += ["--remote", "origin"]
                timed["done"] = run(done, clone, env=env)
                after = _okstra_refs(remote)
                assert after != before, "the done published nothing"
                timed["git-d"] = _plain(clone, before, after)
                timed["pygit2"] = run(PYGIT2, clone)
                if n:  # the first round warms the caches, uncounted
                    for name, value in timed.items():
                        samples[name].append(value)
        finally:
            if saved is not None:
                os.environ["HOME"] = saved
    med = {
        (name, what): statistics.median(getattr(t, what) for t in values)
        for name, values in samples.items()
        for what in ("cpu", "wall")
    }
    floor = med[("pygit2", "cpu")]
    rows = []
    for name, base_name, words in (
        ("claim", "git-c", "stage claim --remote"),
        ("done", "git-d", "stage done --remote"),
    ):
        for what in ("cpu", "wall"):
            ours, plain = med[(name, what)], med[(base_name, what)]
            rows.append(
                Row(
                    f"{words}, {tasks} other tasks ({what})",
                    ours,
                    plain,
                    "ms",
                    f"≤ {GOAL:g}× git fetch + git push",
                    ours <= GOAL * plain,
                    number=5,
                )
            )
        rows.append(
            Row(
                "  against import pygit2 + that git (cpu)",
                med[(name, "cpu")],
                floor + med[(base_name, "cpu")],
                "ms",
                "— (any okstra process's floor)",
                None,
            )
        )
    details = f"{tasks} other tasks on the remote, {rounds} round(s), medians in ms (cpu / wall):"
    for name, base_name in (("claim", "git-c"), ("done", "git-d")):
        details += (
            f"\n  {name} {med[(name, 'cpu')]:.0f} / {med[(name, 'wall')]:.0f}; git fetch + "
            f"git push {med[(base_name, 'cpu')]:.0f} / {med[(base_name, 'wall')]:.0f}"
        )
    details += f"\n  python -c 'import pygit2' {floor:.0f} cpu"
    return rows, details


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--short", action="store_true", help="small and once: CI's smoke run")
    args = parser.parse_args()
    rounds = 1 if args.short else args.rounds
    rows, details = measure(rounds, args.short, None if args.short else args.tasks)
    print(details + "\n\n" + table(rows))


if __name__ == "__main__":
    main()
