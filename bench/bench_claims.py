"""Stage claims: latency and contention, side by side with what okstra did.

Baseline: okstra's own design done right (seed 000 §2.3/§4): one ``consumers.jsonl`` per task;
under one ``flock`` a claimer reads it, picks the batch from the stages without a
``started``/``done`` row and appends one ``started`` row per batch stage. (okstra itself read
and decided outside the lock, so two runs could take the same stage: not a baseline worth
beating.) Both sides are checked for double claims in the race; a double claim stops the bench.
Ours: ``services.claims.claim(..., worktrees=False)`` — approval gate, claims read, batch
selection, one ref transaction over the claim refs and the task ref (which also allocates the
run). Both take the same batches of the same plans; both run in-process here, so the numbers
compare the claim logic, not interpreter start-up.

Reported, in one run:
- latency (median, interleaved rounds, fresh task each round): one stage; a batch of 5;
  plus ours with its stage worktree made (what ``stage claim`` does by default), for scale;
- contention: 8 processes racing over T fresh tasks whose ready set has 5 stages (batches
  {1,2,3,4} and {5}); wall time, claims (batches) per second, median claim latency inside the
  race, and double-claims (a stage held by more than one run: must be none). A third racer kind,
  the floor (``floor_claim``), is the baseline with git as its store: the objects and the one
  ref transaction an okstra claim writes, under the same flock, and nothing else. It prices
  storing claims in git at all, which the goal's ratio to the JSONL file cannot show. The
  kinds race in turn, K times (``--races``, 3 in the report), each on fresh tasks; the rows
  give the median claims/s of each kind (one race swings by a third on a loaded machine).

Usage: python bench/bench_claims.py [--rounds R] [--tasks T] [--racers N] [--races K] [--short]
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _proc  # noqa: F401  (puts the checkout on sys.path: _proc.py says where)

BUDGET = 8
FLOOR_SHARE = 0.5
"""Racing claims: at least this share of the floor racer's claims per second (issue 25)."""
LONE_LIMIT = 1.5
"""A lone ``stage claim --no-worktree``: at most this × ``python -c 'import pygit2'``."""
ONE = (2,)
FIVE = (1, 1, 1, 1, 1)  # the whole ready set fits the budget: a batch of 5
RACE = (2, 2, 2, 2, 2)  # two batches: {1, 2, 3, 4} and {5}


def plan_for(steps: tuple[int, ...]) -> str:
    """Independent stages of equal steps, from the test suite's plan builder."""
    from tests.plans import plan_text

    (each,) = set(steps)
    return plan_text([(n, [], [f"src/p{n}.py"]) for n in range(1, len(steps) + 1)], each)


def make_repo(root: Path) -> Path:
    repo = root / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    for args in (
        ["config", "user.name", "Bench"],
        ["config", "user.email", "bench@example.invalid"],
        ["config", "okstra.worktreeRoot", str(root / "wt")],
        ["commit", "-q", "--allow-empty", "-m", "init"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def make_tasks(repo: Path, prefix: str, count: int, steps: tuple[int, ...]) -> list[str]:
    """Tasks with a submitted plan whose approval is already recorded (first claim's work)."""
    from okstra_git.services import plans, tasks
    from okstra_git.services.context import open_context

    ctx = open_context(repo)
    plan = repo / "plans" / f"{prefix}.md"
    plan.parent.mkdir(exist_ok=True)
    plan.write_text(plan_for(steps))
    keys = []
    for n in range(count):
        key = ctx.key(f"bench:{prefix}:t{n:03d}")
        tasks.new_task(ctx, key, "implementation-planning", "feature", None)
        plans.submit_plan(ctx, key, str(plan))
        plans.ensure_approved(ctx, key)
        keys.append(str(key))
    return keys


# --- the baseline: okstra's consumers.jsonl under a filelock ------------------------------


def pick(steps: tuple[int, ...], taken: set[int]) -> list[int]:
    """The batch: the stages not taken, in order, while their steps fit the budget."""
    batch, total = [], 0
    for number, cost in enumerate(steps, 1):
        if number in taken:
            continue
        if batch and total + cost > BUDGET:
            break
        batch.append(number)
        total += cost
    return batch


def baseline_claim(folder: Path, steps: tuple[int, ...], run_id: str) -> list[int] | None:
    """Under one flock on the file: read the rows, pick the batch from the stages without a
    started/done row, append a started row per stage, flush to the disk's cache."""
    path = folder / "consumers.jsonl"
    with path.open("a+", encoding="utf-8") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file closes
        fh.seek(0)
        taken = {
            row["stage"] for row in map(json.loads, fh) if row["status"] in ("started", "done")
        }
        batch = pick(steps, taken)
        if not batch:
            return None
        now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        fh.writelines(
            json.dumps(
                {"stage": n, "status": "started", "startedAt": now, "runId": run_id},
                sort_keys=True,
            )
            + "\n"
            for n in batch
        )
        fh.flush()
    return batch


def baseline_tasks(root: Path, prefix: str, count: int) -> list[Path]:
    folders = [root / "okstra" / prefix / f"t{n:03d}" for n in range(count)]
    for folder in folders:
        folder.mkdir(parents=True)
    return folders


# --- the floor: the least a claim stored in git refs costs, without okstra --------------------


def floor_claim(
    repo: Any, folder: Path, task: int, steps: tuple[int, ...], run_id: str
) -> list[int] | None:
    """The JSONL baseline's claim with git as the store, and nothing else: under the same flock,
    read the task's claim refs, pick the batch, write per stage a claim blob, tree and commit,
    a task event (manifest and run blobs, three trees, a commit), and land every ref in one
    libgit2 transaction — the objects and refs an okstra claim writes, with none of its
    reading, checking or deciding. No okstra claim can go faster than this."""
    import pygit2

    prefix = f"refs/floor/t{task:03d}"
    blob, tree = pygit2.enums.FileMode.BLOB, pygit2.enums.FileMode.TREE
    sig = pygit2.Signature("Bench", "bench@example.invalid")

    def write_tree(entries: list[tuple[str, Any, Any]]) -> Any:
        builder = repo.TreeBuilder()
        for name, oid, mode in entries:
            builder.insert(name, oid, mode)
        return builder.write()

    with (folder / "floor.lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        taken = set()
        for number in range(1, len(steps) + 1):
            try:
                repo.lookup_reference(f"{prefix}/stage-{number}")
                taken.add(number)
            except KeyError:
                pass
        batch = pick(steps, taken)
        if not batch:
            return None
        now = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
        updates = []
        for number in batch:
            record = {"stage": number, "status": "started", "startedAt": now, "runId": run_id}
            data = json.dumps(record, sort_keys=True, indent=2).encode()
            root = write_tree([("claim.json", repo.create_blob(data), blob)])
            commit = repo.create_commit(None, sig, sig, f"claim stage {number}", root, [])
            updates.append((f"{prefix}/stage-{number}", commit))
        task_ref = f"{prefix}/task"
        try:
            parents = [repo.lookup_reference(task_ref).target]
        except KeyError:
            parents = []
        manifest = repo.create_blob(json.dumps({"runs": run_id, "at": now}).encode())
        run = repo.create_blob(json.dumps({"run": run_id, "stages": batch}).encode())
        runs = write_tree([("implementation", write_tree([(f"{run_id}.json", run, blob)]), tree)])
        root = write_tree([("runs", runs, tree), ("task.json", manifest, blob)])
        updates.append((task_ref, repo.create_commit(None, sig, sig, "claim", root, parents)))
        with repo.transaction() as tx:
            for name, _ in updates:
                tx.lock_ref(name)
            for name, oid in updates:
                tx.set_target(name, oid, message="claim")
    return batch


# --- latency ------------------------------------------------------------------------------------


def latency(root: Path, repo: Path, rounds: int) -> dict[str, float]:
    from okstra_git.logic.workspace import run_paths
    from okstra_git.services import claims
    from okstra_git.services.context import open_context
    from okstra_git.services.runs import make_workspace

    ctx = open_context(repo)
    ours = {
        "one": make_tasks(repo, "lat1", rounds, ONE),
        "five": make_tasks(repo, "lat5", rounds, FIVE),
        "one+worktree": make_tasks(repo, "latw", rounds, ONE),
    }
    base = {
        "one": baseline_tasks(root, "lat1", rounds),
        "five": baseline_tasks(root, "lat5", rounds),
    }
    samples: dict[str, list[float]] = defaultdict(list)
    for i in range(rounds):
        for name, steps in (("one", ONE), ("five", FIVE)):
            t = time.perf_counter()
            got = claims.claim(ctx, ctx.key(ours[name][i]), worktrees=False)
            samples[f"ours {name}"].append(time.perf_counter() - t)
            assert len(got.stages) == len(steps)
            t = time.perf_counter()
            batch = baseline_claim(base[name][i], steps, f"run-{i}")
            samples[f"baseline {name}"].append(time.perf_counter() - t)
            assert batch is not None and len(batch) == len(steps)
        t = time.perf_counter()
        claims.claim(ctx, ctx.key(ours["one+worktree"][i]))
        samples["ours one+worktree"].append(time.perf_counter() - t)
        # The part of every claim that is not ref work: the run's .okstra/ folders (8 leaves).
        t = time.perf_counter()
        make_workspace(ctx, run_paths(ctx.key(f"bench:workspace:t{i:03d}"), claims.RUN_TYPE, "001"))
        samples["workspace"].append(time.perf_counter() - t)
    return {name: statistics.median(values) * 1000 for name, values in samples.items()}


# --- contention ---------------------------------------------------------------------------------


def racer(kind: str, target: str, tasks: list[str], go: str, out: str) -> None:
    """One racing process: walks every task in order, claiming until nothing is ready."""
    wins: list[dict[str, object]] = []
    durations: list[float] = []
    if kind == "ours":
        from okstra_git.core.errors import Conflict, Refused
        from okstra_git.services import claims
        from okstra_git.services.context import open_context

        ctx = open_context(target)
        keys = [ctx.key(k) for k in tasks]
    elif kind == "floor":
        import pygit2

        repo = pygit2.Repository(target)
    while not os.path.exists(go):
        time.sleep(0.0005)
    start = time.perf_counter()
    for n, task in enumerate(tasks):
        while True:
            t = time.perf_counter()
            if kind == "ours":
                try:
                    result = claims.claim(ctx, keys[n], worktrees=False)
                except (Refused, Conflict):
                    break
                run, stages = result.run_id, [p.stage for p in result.stages]
            else:
                run = f"{os.getpid()}-{len(wins)}"
                got = (
                    floor_claim(repo, Path(task), n, RACE, run)
                    if kind == "floor"
                    else baseline_claim(Path(task), RACE, run)
                )
                if got is None:
                    break
                stages = got
            durations.append(time.perf_counter() - t)
            wins.append({"task": task, "run": run, "stages": stages})
    Path(out).write_text(
        json.dumps(
            {"wins": wins, "durations": durations, "start": start, "end": time.perf_counter()}
        )
    )


def contention(kind: str, root: Path, target: str, tasks: list[str], racers: int) -> dict:
    go = root / f"go-{kind}"
    outs = [root / f"{kind}-{i}.json" for i in range(racers)]
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--racer", kind, target, json.dumps(tasks), str(go), str(o)]
        )
        for o in outs
    ]
    time.sleep(1.0)  # every racer imported and waiting
    go.write_text("go")
    for proc in procs:
        proc.wait(timeout=600)
        assert proc.returncode == 0
    results = [json.loads(o.read_text()) for o in outs]
    wall = max(r["end"] for r in results) - min(r["start"] for r in results)
    holders: dict[tuple[str, int], set[str]] = defaultdict(set)
    wins = [w for r in results for w in r["wins"]]
    for win in wins:
        for stage in win["stages"]:
            holders[(win["task"], stage)].add(win["run"])
    durations = [d for r in results for d in r["durations"]]
    return {
        "wall": wall,
        "claims": len(wins),
        "stages": len(holders),
        "double": sum(1 for runs in holders.values() if len(runs) > 1),
        "median_ms": statistics.median(durations) * 1000,
    }


def whole_process(root: Path, repo: Path, rounds: int) -> dict[str, float]:
    """``git okstra stage claim KEY --no-worktree`` as a process, beside ``import pygit2``."""
    from _proc import PYGIT2, interleaved, okstra, run

    keys = iter(make_tasks(repo, "proc", rounds + 1, ONE))
    exe = okstra()
    return interleaved(
        {
            "stage claim --no-worktree": lambda: run(
                [*exe, "stage", "claim", next(keys), "--no-worktree"], repo
            ),
            "python -c 'import pygit2'": lambda: run(PYGIT2, repo),
        },
        rounds,
    )


def measure(rounds: int, tasks: int, racers: int, races: int = 1) -> tuple[list, str]:
    """The report rows, and the details this bench prints; claims/s are the medians of
    ``races`` races of each kind, run in turn."""
    from _proc import Row, ratio_row

    root = Path(tempfile.mkdtemp(prefix="okstra-bench-claims-"))
    home = os.environ.get("HOME")
    os.environ["HOME"] = str(root)  # ~/.okstra and the global git config stay out of it
    lines = []
    try:
        repo = make_repo(root)
        lat = latency(root, repo, rounds)
        lines.append(f"claim latency, median of {rounds} interleaved rounds (in-process):")
        for name in ("one", "five"):
            ours, base = lat[f"ours {name}"], lat[f"baseline {name}"]
            label = "1 stage " if name == "one" else "5 stages"
            lines.append(
                f"  {label}: ours {ours:7.2f} ms   baseline {base:7.2f} ms   "
                f"ours/baseline {ours / base:6.1f}x"
            )
        lines.append(
            f"  of ours, making the run's .okstra/ folders: {lat['workspace']:.2f} ms; "
            f"1 stage with its worktree made (the default): {lat['ours one+worktree']:.2f} ms"
        )
        proc = whole_process(root, repo, rounds)
        lines.append(
            f"\ncontention: {racers} processes racing over {tasks} tasks, "
            "ready set of 5 stages (batches {1,2,3,4} and {5}), "
            f"{races} race(s) of each kind in turn:"
        )
        rates: dict[str, list[float]] = defaultdict(list)
        for rep in range(races):
            floor_repo = root / f"floor-{rep}"
            subprocess.run(["git", "init", "-q", "--bare", str(floor_repo)], check=True)
            files = [str(p) for p in baseline_tasks(root, f"race{rep}", tasks)]
            floors = [str(p) for p in baseline_tasks(root, f"floor{rep}", tasks)]
            kinds = [
                ("ours", str(repo), make_tasks(repo, f"race{rep}", tasks, RACE)),
                ("baseline", "", files),
                ("floor", str(floor_repo), floors),
            ]
            for kind, target, names in kinds[:: 1 if rep % 2 == 0 else -1]:
                r = contention(kind, root, target, names, racers)
                rates[kind].append(r["claims"] / r["wall"])
                lines.append(
                    f"  {kind:<8}: {r['claims']:4d} claims ({r['stages']} stages) in "
                    f"{r['wall']:6.2f} s = {r['claims'] / r['wall']:7.1f} claims/s, "
                    f"median claim {r['median_ms']:6.2f} ms, double-claimed stages: {r['double']}"
                )
                # Correct means: every stage claimed once, in exactly two batches per task.
                if r["double"] or r["claims"] != 2 * tasks or r["stages"] != 5 * tasks:
                    raise SystemExit(f"{kind} claimed wrongly: {r}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        if home is not None:
            os.environ["HOME"] = home
    rate = {kind: statistics.median(found) for kind, found in rates.items()}
    rows = [
        Row(
            f"claims/s, {racers} racing processes (in-process, median of {races})",
            rate["ours"],
            rate["baseline"],
            "claims/s",
            "— (retired)",
            None,
        ),
        Row(
            "claims/s, floor: git objects+refs only",
            rate["floor"],
            rate["baseline"],
            "claims/s",
            "— (no okstra claim beats it)",
            None,
        ),
        Row(
            "claims/s, ours against the floor",
            rate["ours"],
            rate["floor"],
            "claims/s",
            f"≥ {FLOOR_SHARE:g}× the floor",
            rate["ours"] >= FLOOR_SHARE * rate["floor"],
            number=4,
        ),
        ratio_row(
            "stage claim --no-worktree (whole process)",
            proc["stage claim --no-worktree"],
            proc["python -c 'import pygit2'"],
            LONE_LIMIT,
            "import pygit2",
            4,
        ),
    ]
    return rows, "\n".join(lines)


def main() -> None:
    from _proc import table

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--tasks", type=int, default=40)
    parser.add_argument("--racers", type=int, default=8)
    parser.add_argument("--races", type=int, default=3, help="races of each kind (medians)")
    parser.add_argument("--short", action="store_true", help="small and once: CI's smoke run")
    args = parser.parse_args()
    if args.short:
        args.rounds, args.tasks, args.racers, args.races = 1, 2, 2, 1
    rows, details = measure(args.rounds, args.tasks, args.racers, args.races)
    print(details + "\n\n" + table(rows))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--racer":
        racer(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5], sys.argv[6])
    else:
        main()
