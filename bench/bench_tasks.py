"""Task reads at scale: ``task show`` / ``task list`` against their plain-git equivalents.

Builds a repository holding N tasks (default 10,000) with ``git fast-import``, then times whole
processes side by side in the same run and prints medians and ratios, plus the cost of
``git okstra --help`` next to ``python -c pass`` and the prefix listing next to a full
reference iteration. Usage: python bench/bench_tasks.py [N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from okstra_git.resources import okstra_command

MANIFEST = {
    "schemaVersion": 1,
    "taskType": "implementation",
    "workCategory": "feature",
    "currentStatus": "active",
    "createdAt": "2026-11-30T00:00:00+00:00",
    "updatedAt": "2026-11-30T00:00:00+00:00",
    "workflow": {
        "currentPhase": "implementation",
        "currentPhaseState": "pending",
        "phaseStates": {},
        "awaitingApproval": False,
        "routingStatus": "ready",
    },
}


def build(repo: Path, count: int) -> None:
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    lines: list[bytes] = []
    for n in range(count):
        group, task = f"g{n % 100}", f"t{n}"
        data = json.dumps(
            {
                **MANIFEST,
                "taskKey": f"bench:{group}:{task}",
                "projectId": "bench",
                "taskGroup": group,
                "taskId": task,
            },
            sort_keys=True,
            indent=2,
        ).encode()
        msg = b"task new implementation\n"
        lines += [
            f"commit refs/okstra/tasks/{group}/{task}\n".encode(),
            b"committer Bench <bench@example.invalid> 1700000000 +0000\n",
            f"data {len(msg)}\n".encode(),
            msg,
            b"M 100644 inline task.json\n",
            f"data {len(data)}\n".encode(),
            data,
            b"\n",
        ]
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(lines), check=True)


def timed(argv: list[str], cwd: Path, rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("count", nargs="?", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    ok = okstra_command()
    with tempfile.TemporaryDirectory(prefix="okstra-bench-") as tmp:
        repo = Path(tmp) / "repo"
        started = time.perf_counter()
        build(repo, args.count)
        print(f"built {args.count} tasks in {time.perf_counter() - started:.1f}s ({repo})")
        key, ref = "bench:g7:t7", "refs/okstra/tasks/g7/t7"
        for layout in ("loose refs", "packed refs"):
            if layout == "packed refs":
                subprocess.run(["git", "pack-refs", "--all"], cwd=repo, check=True)
            rows = [
                (
                    "task show --json",
                    [*ok, "task", "show", key, "--json"],
                    ["git", "show", f"{ref}:task.json"],
                ),
                (
                    "task list --group --json",
                    [*ok, "task", "list", "--group", "g7", "--json"],
                    ["git", "for-each-ref", "refs/okstra/tasks/g7/"],
                ),
                (
                    "task list --json (all)",
                    [*ok, "task", "list", "--json"],
                    ["git", "for-each-ref", "refs/okstra/tasks/"],
                ),
            ]
            print(f"\n{layout}, {args.count} tasks, median of {args.rounds} whole processes")
            print(f"{'command':28} {'okstra ms':>10} {'plain git ms':>13} {'ratio':>7}")
            for name, ours, plain in rows:
                a, b = timed(ours, repo, args.rounds), timed(plain, repo, args.rounds)
                print(f"{name:28} {a:10.1f} {b:13.1f} {a / b:7.1f}x")
        py = timed([sys.executable, "-c", "pass"], repo, args.rounds)
        pyg = timed([sys.executable, "-c", "import pygit2"], repo, args.rounds)
        helped = timed([*ok, "--help"], repo, args.rounds)
        print(
            f"\npython -c pass {py:.1f} ms; import pygit2 {pyg:.1f} ms; "
            f"git okstra --help {helped:.1f} ms"
        )
        from okstra_git.gitlayer import GitRepo

        git_repo = GitRepo.open(repo)
        t0 = time.perf_counter()
        for _ in range(20):
            git_repo.list_refs("refs/okstra/tasks/g7/")
        prefix_ms = (time.perf_counter() - t0) / 20 * 1000
        t0 = time.perf_counter()
        full = [
            r for r in git_repo.repo.listall_references() if r.startswith("refs/okstra/tasks/g7/")
        ]
        full_ms = (time.perf_counter() - t0) * 1000
        print(
            f"prefix listing of one group ({len(full)} refs): list_refs {prefix_ms:.2f} ms vs "
            f"full reference iteration {full_ms:.1f} ms"
        )


if __name__ == "__main__":
    main()
