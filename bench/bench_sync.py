"""``git okstra sync`` of many task refs to a bare remote, beside plain git doing the same.

A repository with N task refs (``bench_tasks.build``) and an empty bare remote:
- first push: ``git okstra sync origin`` beside one glob push
  (``git push origin 'refs/okstra/*:refs/okstra/*'``) of the same refs to another empty remote;
- steady state (nothing changed): ``git okstra sync origin`` again, beside the same
  ``git fetch`` sync runs (its refspecs, into its tracking namespace), with nothing new.
Wall time here (the work is in git's processes and the network path), medians of the rounds.
A sync that fails (e.g. an argument list too long) is reported as such, not hidden.

Usage: python bench/bench_sync.py [N] [--rounds R] [--short]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _proc import ENV, Row, git, okstra, table
from bench_tasks import build

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
    return rows, "\n".join(details)


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
