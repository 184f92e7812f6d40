"""The team flow's reads and syncs at scale, beside plain git doing the same in the same run.

A bare remote holding N task refs (valid ``task.json`` records, so sync checks every one it
adopts), built with ``git fast-import``; then, as whole processes, CPU medians (``_proc``):

- ``sync --fetch-only`` of a fresh clone (fetch into the tracking namespaces, check every
  record, adopt all N refs in one transaction) beside ``git fetch`` of the same two refspecs
  into another fresh clone;
- ``sync`` when everything is already in step beside the same no-op ``git fetch``;
- ``task status --json`` of one fully set-up task (plan approved, four stages claimed, task
  worktree) among 10,000 tasks, beside ``task show --json`` and ``import pygit2``.

Usage: python bench/bench_team.py [--sizes 1000,10000] [--rounds R] [--short]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import PYGIT2, Row, absolute_row, git, interleaved, okstra, ratio_row, run, table

REFSPECS = [
    "+refs/okstra/*:refs/okstra-remotes/origin/*",
    "+refs/notes/okstra/*:refs/notes/okstra-remotes/origin/*",
]


def _manifest(n: int) -> bytes:
    group, task = f"g{n % 100}", f"t{n}"
    flow = {
        "currentPhase": "error-analysis",
        "currentPhaseState": "pending",
        "phaseStates": {},
        "awaitingApproval": False,
        "routingStatus": "ready",
    }
    record = {
        "schemaVersion": 1,
        "taskKey": f"bench:{group}:{task}",
        "projectId": "bench",
        "taskGroup": group,
        "taskId": task,
        "taskType": "error-analysis",
        "workCategory": "feature",
        "currentStatus": "active",
        "createdAt": "2026-11-30T00:00:00+00:00",
        "updatedAt": "2026-11-30T00:00:00+00:00",
        "workflow": flow,
    }
    return json.dumps(record, sort_keys=True, indent=2).encode()


def tasks_into(repo: Path, count: int, start: int = 0) -> None:
    """``count`` valid task refs (one event each, from task ``start`` on) into ``repo``, with
    ``git fast-import``."""
    chunks: list[bytes] = []
    for n in range(start, start + count):
        data, message = _manifest(n), b"task new error-analysis\n"
        chunks += [
            f"commit refs/okstra/tasks/g{n % 100}/t{n}\n".encode(),
            b"committer Bench <bench@example.invalid> 1700000000 +0000\n",
            f"data {len(message)}\n".encode() + message,
            b"M 100644 inline task.json\n",
            f"data {len(data)}\n".encode() + data + b"\n",
        ]
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(chunks), check=True)


def _fresh(root: Path, name: str, remote: Path) -> Path:
    """An empty repository whose ``origin`` is ``remote`` (what a clone of the code gives)."""
    repo = root / name
    shutil.rmtree(repo, ignore_errors=True)
    git(root, "init", "-q", "-b", "main", str(repo))
    git(repo, "remote", "add", "origin", str(remote))
    return repo


def sync_rows(root: Path, count: int, rounds: int) -> tuple[list[Row], str]:
    ok = okstra()
    remote = root / f"remote-{count}.git"
    git(root, "init", "-q", "--bare", str(remote))
    tasks_into(remote, count)

    def first_sync():
        return run([*ok, "sync", "origin", "--fetch-only"], _fresh(root, "a", remote))

    def first_fetch():
        return run(["git", "fetch", "-q", "origin", *REFSPECS], _fresh(root, "b", remote))

    firsts = interleaved({"sync": first_sync, "fetch": first_fetch}, rounds)
    synced, fetched = _fresh(root, "a", remote), _fresh(root, "b", remote)
    run([*ok, "sync", "origin"], synced)
    run(["git", "fetch", "-q", "origin", *REFSPECS], fetched)
    steady = interleaved(
        {
            "sync": lambda: run([*ok, "sync", "origin"], synced),
            "fetch": lambda: run(["git", "fetch", "-q", "origin", *REFSPECS], fetched),
        },
        rounds,
    )
    rows = [
        ratio_row(
            f"sync, fresh clone of {count} task refs (CPU)",
            firsts["sync"],
            firsts["fetch"],
            2.5,
            "git fetch",
        ),
        ratio_row(
            f"sync, all in step at {count} refs (CPU)",
            steady["sync"],
            steady["fetch"],
            3,
            "git fetch",
        ),
    ]
    details = (
        f"{count} task refs, {rounds} round(s), CPU ms: fresh clone sync {firsts['sync']:.0f} "
        f"vs git fetch {firsts['fetch']:.0f}; in step sync {steady['sync']:.0f} vs git fetch "
        f"{steady['fetch']:.0f}"
    )
    return rows, details


def status_rows(root: Path, count: int, rounds: int) -> tuple[list[Row], str]:
    """``task status`` of one fully set-up task among ``count`` tasks (packed refs)."""
    from tests.plans import plan_text

    ok = okstra()
    repo = root / "status"
    git(root, "init", "-q", "-b", "main", str(repo))
    git(repo, "config", "okstra.worktreeRoot", str(root / "wt"))
    git(repo, "commit", "-q", "--allow-empty", "-m", "init")
    tasks_into(repo, count)
    key = "bench:real:task"
    (repo / "plan.md").write_text(plan_text([(n, [], [f"src/p{n}.py"]) for n in range(1, 5)], 2))
    git(repo, "add", "plan.md")
    git(repo, "commit", "-q", "-m", "plan")
    for args in (
        ("task", "new", key, "--type", "implementation-planning"),
        ("plan", "submit", key, "plan.md"),
        ("plan", "approve", key),
        ("stage", "claim", key),
    ):
        run([*ok, *args], repo)
    git(repo, "pack-refs", "--all")
    found = interleaved(
        {
            "status": lambda: run([*ok, "task", "status", key, "--json"], repo),
            "show": lambda: run([*ok, "task", "show", key, "--json"], repo),
            "pygit2": lambda: run(PYGIT2, repo),
        },
        rounds,
    )
    rows = [
        absolute_row(
            f"task status --json, {count} tasks",
            found["status"],
            150,
            found["show"],
        )
    ]
    details = (
        f"task status --json {found['status']:.0f} CPU ms; task show --json "
        f"{found['show']:.0f}; import pygit2 {found['pygit2']:.0f} (among {count} tasks)"
    )
    return rows, details


def measure(short: bool, sizes: tuple[int, ...] = (1000, 10_000), rounds: int = 3):
    if short:
        sizes, rounds = (50,), 1
    rows: list[Row] = []
    details: list[str] = []
    with tempfile.TemporaryDirectory(prefix="okstra-bench-team-") as tmp:
        root = Path(tmp)
        for size in sizes:
            found, said = sync_rows(root, size, rounds)
            rows += found
            details.append(said)
        found, said = status_rows(root, 200 if short else 10_000, rounds)
        rows += found
        details.append(said)
    return rows, "\n".join(details)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--short", action="store_true", help="small and once: CI's smoke run")
    args = parser.parse_args()
    sizes = tuple(int(s) for s in args.sizes.split(","))
    rows, details = measure(args.short, sizes, args.rounds)
    print(details + "\n\n" + table(rows))


if __name__ == "__main__":
    main()
