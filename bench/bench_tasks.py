"""Task reads at scale: ``task list`` / ``task show`` against their plain-git equivalents.

Builds a repository holding N tasks (default 100,000) with ``git fast-import``, packs its refs,
then times whole processes side by side in the same run (CPU medians): ``task list --json``
beside ``git for-each-ref | git cat-file --batch`` (every manifest, raw), ``task show --json``
beside ``git show REF:task.json``. ``task list`` is timed twice: as it runs again and again
(its index of the commits it has read is there) and as the first listing, which reads and
checks every manifest (the index is removed before each run).
Usage: python bench/bench_tasks.py [N] [--rounds R]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import Row, Timed, interleaved, okstra, ratio_row, run, table

from okstra_git.records.taskindex import INDEX_PATH

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


def measure(count: int, rounds: int) -> tuple[list[Row], str]:
    """``task list --json`` over ``count`` tasks beside the plain-git listing of the same data:
    ``git for-each-ref`` piped into ``git cat-file --batch`` (every manifest, raw)."""
    with tempfile.TemporaryDirectory(prefix="okstra-bench-tasks-") as tmp:
        repo = Path(tmp) / "repo"
        started = time.perf_counter()
        build(repo, count)
        subprocess.run(["git", "pack-refs", "--all"], cwd=repo, check=True)
        built = time.perf_counter() - started
        ok = okstra()
        show = [*ok, "task", "show", "bench:g7:t7", "--json"]
        plain = (
            "git for-each-ref --format='%(objectname):task.json' refs/okstra/tasks/ "
            "| git cat-file --batch"
        )
        index = repo / ".git" / INDEX_PATH

        def first_listing() -> Timed:
            index.unlink(missing_ok=True)  # before the timed process: as if no listing ran
            return run([*ok, "task", "list", "--json"], repo)

        medians = interleaved(
            {
                "task list --json": lambda: run([*ok, "task", "list", "--json"], repo),
                "task list --json, no index": first_listing,
                "for-each-ref | cat-file --batch": lambda: run(["sh", "-c", plain], repo),
                "task show --json": lambda: run(show, repo),
                "git show ref:task.json": lambda: run(
                    ["git", "show", "refs/okstra/tasks/g7/t7:task.json"], repo
                ),
            },
            rounds,
            0 if rounds == 1 else 1,
        )
    listed = medians["task list --json"]
    base = medians["for-each-ref | cat-file --batch"]
    first = medians["task list --json, no index"]
    rows = [
        ratio_row(
            f"task list --json, {count} tasks", listed, base, 1.5, "for-each-ref + cat-file", 6
        ),
        Row(f"  the first listing ({count} manifests read)", first, base, "ms", "—", None),
    ]
    details = [f"built {count} tasks (packed refs) in {built:.1f}s; CPU medians of {rounds} runs"]
    details += [f"  {name:<34} {ms:9.1f} ms" for name, ms in medians.items()]
    return rows, "\n".join(details)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("count", nargs="?", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows, details = measure(args.count, args.rounds)
    print(details + "\n\n" + table(rows))


if __name__ == "__main__":
    main()
