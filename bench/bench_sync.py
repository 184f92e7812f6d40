"""``git okstra sync`` of many task refs to a bare remote, beside plain git doing the same.

A repository with N task refs (``bench_tasks.build``) and an empty bare remote:
- first push: ``git okstra sync origin`` beside one glob push
  (``git push origin 'refs/okstra/*:refs/okstra/*'``) of the same refs to another empty remote;
- steady state (nothing changed): ``git okstra sync origin`` again, beside the same
  ``git fetch`` sync runs (its refspecs, into its tracking namespace), with nothing new.
Wall time here (the work is in git's processes and the network path), medians of the rounds.

Both ways (``both``): a remote holding M/2 valid task records another clone published, and a
clone holding M/2 tasks of its own; ``git okstra sync origin`` (fetch M/2, check and adopt
them, push M/2) beside, in a copy of the same two, the ``git fetch`` of sync's refspecs plus
the ``git push --atomic`` of the clone's task refs that it needs. CPU (with every child, the
remote's receive-pack included) and wall medians; each round starts from fresh copies, the
disk synced (untimed) before each timed command.
A sync that fails (e.g. an argument list too long) is reported as such, not hidden.

Usage: python bench/bench_sync.py [N] [--rounds R] [--short]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import ENV, Row, Timed, git, okstra, run, table
from bench_tasks import build
from bench_team import tasks_into

from okstra_git.core.tracking import fetch_refspecs


def _wall(argv: list[str], cwd: Path) -> tuple[float, str | None]:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=ENV, capture_output=True, timeout=1800)
    took = (time.perf_counter() - start) * 1000
    error = None if proc.returncode == 0 else proc.stderr.decode()[-300:].strip()
    return took, error


def measure(
    short: bool, count: int | None = None, rounds: int | None = None
) -> tuple[list[Row], str]:
    count = count or (50 if short else 50_000)
    rounds = rounds or 1
    ok = okstra()
    firsts, globs, steadies, fetches, errors = [], [], [], [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory(prefix="okstra-bench-sync-") as tmp:
            root = Path(tmp)
            repo = root / "repo"
            build(repo, count)
            git(repo, "commit", "-q", "--allow-empty", "-m", "init")
            for name in ("remote.git", "glob.git"):
                git(root, "init", "-q", "--bare", str(root / name))
            git(repo, "remote", "add", "origin", str(root / "remote.git"))
            git(repo, "config", "okstra.projectId", "bench")
            glob_ms, _ = _wall(
                ["git", "push", "-q", str(root / "glob.git"), "refs/okstra/*:refs/okstra/*"], repo
            )
            first_ms, error = _wall([*ok, "sync", "origin"], repo)
            globs.append(glob_ms)
            firsts.append(first_ms)
            if error:
                errors.append(f"first sync of {count} refs failed: {error}")
                break
            steady_ms, error = _wall([*ok, "sync", "origin"], repo)
            # The same fetch as sync's, in steady state: its refs are all here already.
            fetch = ["git", "fetch", "-q", "origin", *fetch_refspecs("origin")]
            _wall(fetch, repo)
            fetch_ms, _ = _wall(fetch, repo)
            steadies.append(steady_ms)
            fetches.append(fetch_ms)
            if error:
                errors.append(f"steady sync failed: {error}")
                break
    med = statistics.median
    rows = [
        Row(
            f"sync, first push of {count} task refs (wall)",
            med(firsts),
            med(globs),
            "ms",
            "≤ 1.5× one glob push",
            not errors and med(firsts) <= 1.5 * med(globs),
            "FAILED" if errors else "",
        )
    ]
    if steadies:
        rows.append(
            Row(
                f"sync, steady state at {count} refs (wall)",
                med(steadies),
                med(fetches),
                "ms",
                "≤ 1.3× the same git fetch",
                not errors and med(steadies) <= 1.3 * med(fetches),
            )
        )
    details = [f"{count} task refs, {rounds} round(s), wall ms"]
    details += [f"  first sync {med(firsts):.0f}; one glob push {med(globs):.0f}"]
    if steadies:
        details += [f"  steady sync {med(steadies):.0f}; git fetch {med(fetches):.0f}"]
    details += [f"  {e}" for e in errors]
    found, said = both(20 if short else 20_000, 1 if short else 3)
    return rows + found, "\n".join([*details, said])


BOTH_GOAL = 1.5
"""A sync both ways: at most this × the git fetch + git push it needs."""
SUMMARY_LINES = 3
"""What sync prints without -v: a head line, a line per kind of ref (here one: every ref is a
task's) and a closing line, whatever the number of refs."""


def both(count: int, rounds: int) -> tuple[list[Row], str]:
    """The rows of a sync both ways of ``count`` task refs (``count``/2 each way)."""
    import shutil
    import tempfile

    ok = okstra()
    half = count // 2
    with tempfile.TemporaryDirectory(prefix="okstra-bench-sync-both-") as tmp:
        root = Path(tmp)
        pristine = root / "pristine"
        pristine.mkdir()
        git(pristine, "init", "-q", "--bare", "-b", "main", "remote.git")
        tasks_into(pristine / "remote.git", half)
        clone = pristine / "clone"
        git(pristine, "init", "-q", "-b", "main", str(clone))
        git(clone, "commit", "-q", "--allow-empty", "-m", "init")
        git(clone, "config", "okstra.projectId", "bench")
        tasks_into(clone, half, half)

        def fresh(name: str) -> Path:
            shutil.rmtree(root / name, ignore_errors=True)
            shutil.copytree(pristine, root / name, symlinks=True)
            repo = root / name / "clone"
            git(repo, "remote", "add", "origin", str(root / name / "remote.git"))
            return repo

        samples: dict[str, list[Timed]] = {"sync": [], "git": []}
        printed = b""
        for n in range(rounds + 1):
            for name in ("sync", "git")[:: 1 if n % 2 else -1]:
                repo = fresh(name)
                # The disk's writeback of the copy (and of the last round's deletes) lands
                # now, untimed: else whichever command comes next pays for it in sys time.
                os.sync()
                if name == "sync":
                    timed = run([*ok, "sync", "origin"], repo)
                    printed = timed.out
                    pushed = git(root / name / "remote.git", "for-each-ref", "refs/okstra/")
                    assert len(pushed.splitlines()) == 2 * half, "sync pushed too little"
                else:
                    fetch = run(["git", "fetch", "-q", "origin", *fetch_refspecs("origin")], repo)
                    push = [
                        "git",
                        "push",
                        "-q",
                        "--atomic",
                        "origin",
                        "refs/okstra/*:refs/okstra/*",
                    ]
                    sent = run(push, repo)
                    timed = Timed(fetch.cpu + sent.cpu, fetch.wall + sent.wall)
                if n:  # the first round warms the caches, uncounted
                    samples[name].append(timed)
    med = {
        (name, what): statistics.median(getattr(t, what) for t in timed)
        for name, timed in samples.items()
        for what in ("cpu", "wall")
    }
    rows = [
        Row(
            f"sync both ways, {half}+{half} task refs ({what})",
            med[("sync", what)],
            med[("git", what)],
            "ms",
            f"≤ {BOTH_GOAL:g}× git fetch + git push",
            med[("sync", what)] <= BOTH_GOAL * med[("git", what)],
            number=2,
        )
        for what in ("cpu", "wall")
    ]
    lines = printed.decode().splitlines()
    rows.append(
        Row(
            f"sync both ways, {half}+{half} task refs: lines on stdout",
            len(lines),
            None,
            "lines",
            f"≤ {SUMMARY_LINES} (a line per kind of ref)",
            len(lines) <= SUMMARY_LINES,
            number=2,
        )
    )
    details = (
        f"both ways, {half} fetched + {half} pushed, {rounds} round(s), ms (cpu / wall): sync "
        f"{med[('sync', 'cpu')]:.0f} / {med[('sync', 'wall')]:.0f}; git fetch + git push "
        f"{med[('git', 'cpu')]:.0f} / {med[('git', 'wall')]:.0f}\n"
        + "\n".join(f"  sync printed: {line}" for line in lines)
    )
    return rows, details


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", nargs="?", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--short", action="store_true", help="small and once: CI's smoke run")
    args = parser.parse_args()
    rows, details = measure(args.short, None if args.short else args.count, args.rounds)
    print(details + "\n\n" + table(rows))


if __name__ == "__main__":
    main()
