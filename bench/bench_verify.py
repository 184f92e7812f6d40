"""``verify target`` on a 50,000-commit history with 50 stages, against the git CLI.

Builds (with ``git fast-import``) a main line of N commits (default 50,000), then S stages
(default 50): one commit per stage branch off the tip, merged one by one into the task branch,
which is checked out in a linked worktree. The task, its plan snapshot and one ``done`` claim
per stage are written with okstra's own record code. Then, in the same run and interleaved:

- ours: ``git okstra verify target KEY`` (text, and ``--json``) as a whole process;
- baseline: a shell script doing the same checks with the git CLI — ``git merge-base
  --is-ancestor`` per stage and ``git status --porcelain -- . ':(exclude).okstra'`` (given
  the stage heads up front: it reads no task, claim or plan, so it does less than we do).

Medians and ratios are printed, plus, in-process, one history walk (``not_contained``) next to
asking libgit2 ``descendant_of`` once per stage. Usage:
python bench/bench_verify.py [--commits N] [--stages S] [--rounds R]
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
from okstra_git.resources import okstra_command

KEY = "bench:grp:feat"
FILES = 500
STAMP = 1_700_000_000


def _blob(lines: list[bytes], path: str, text: str) -> None:
    data = text.encode()
    lines += [f"M 100644 inline {path}\n".encode(), f"data {len(data)}\n".encode(), data, b"\n"]


def _commit(lines: list[bytes], ref: str, mark: int, when: int, msg: str) -> None:
    body = msg.encode()
    lines += [
        f"commit {ref}\nmark :{mark}\n".encode(),
        f"committer Bench <bench@example.invalid> {when} +0000\n".encode(),
        f"data {len(body)}\n".encode(),
        body,
        b"\n",
    ]


def build_history(repo: Path, commits: int, stages: int) -> None:
    """Main line of ``commits`` commits; stage branches off its tip; the task branch merges
    each stage in turn (merge commits, as a user merging stage branches makes them)."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    lines: list[bytes] = []
    for n in range(1, commits + 1):
        _commit(lines, "refs/heads/main", n, STAMP + n, f"main {n}")
        if n > 1:
            lines.append(f"from :{n - 1}\n".encode())
        _blob(lines, f"files/f{n % FILES:03d}.txt", f"revision {n}\n")
    tip = commits
    mark = commits
    stage_marks = {}
    for s in range(1, stages + 1):
        mark += 1
        stage_marks[s] = mark
        _commit(lines, f"refs/heads/okstra/grp/feat/stage-{s}", mark, STAMP + mark, f"stage {s}")
        lines.append(f"from :{tip}\n".encode())
        _blob(lines, f"src/stage{s}.py", f"def stage_{s}():\n    return {s}\n")
    previous = tip
    for s in range(1, stages + 1):
        mark += 1
        _commit(lines, "refs/heads/okstra/grp/feat/task", mark, STAMP + mark, f"merge stage {s}")
        lines.append(f"from :{previous}\nmerge :{stage_marks[s]}\n".encode())
        _blob(lines, f"src/stage{s}.py", f"def stage_{s}():\n    return {s}\n")
        previous = mark
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(lines), check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=repo, check=True)


def build_task(repo: Path, worktree: Path, stages: int) -> list[str]:
    """The task, its plan, the task worktree and a done claim per stage; returns stage heads."""
    from okstra_git.gitlayer import RefUpdate
    from okstra_git.records.claim import CLAIM_PATH, Claim, claim_json, claim_ref
    from okstra_git.records.task import now_iso, write_event
    from okstra_git.services import plans, tasks
    from okstra_git.services.context import open_context
    from tests.plans import plan_text

    subprocess.run(["git", "worktree", "add", "-q", str(worktree), "okstra/grp/feat/task"],
                   cwd=repo, check=True)  # fmt: skip
    ctx = open_context(repo)
    key = ctx.key(KEY)
    tasks.new_task(ctx, key, "implementation-planning", "feature", None)
    stage_list = [(n, [], [f"src/stage{n}.py"]) for n in range(1, stages + 1)]
    (repo / "plan.md").write_text(plan_text(stage_list, steps=1))
    plans.submit_plan(ctx, key, str(repo / "plan.md"))
    base = ctx.repo.resolve_commit("main")

    def set_base(task, head):
        task.implementation_base_commit = base
        return task, {}

    write_event(ctx.repo, key, set_base, "implementation base")
    heads = []
    for s in range(1, stages + 1):
        head = ctx.repo.resolve_commit(f"okstra/grp/feat/stage-{s}")
        heads.append(head)
        now = now_iso()
        claim = Claim(
            task_key=KEY, stage=s, run_id=f"implementation-{s:03d}", status="done",
            started_at=now, host="bench", user="Bench <bench@example.invalid>",
            base_commit=base, started_head_commit=base,
            worktree_path=str(worktree.parent / f"stage-{s}"),
            branch=f"okstra/grp/feat/stage-{s}", batch=[s], done_at=now, head_commit=head,
            report_path=f".okstra/reports/stage-{s}.md",
        )  # fmt: skip
        ref = claim_ref(key, s)
        tree = ctx.repo.tree_with(None, {CLAIM_PATH: claim_json(claim, ref)})
        commit = ctx.repo.commit(tree, [], "claim done")
        ctx.repo.update_refs([RefUpdate(ref, commit, None)], "bench")
    return heads


BASELINE = """#!/bin/sh
# The same gate with the git CLI: every stage head an ancestor of HEAD, the tree clean
# outside .okstra/. Stage heads are given as arguments.
cd "$WORKTREE" || exit 2
status=0
for sha in "$@"; do
  git merge-base --is-ancestor "$sha" HEAD || { echo "not merged: $sha" >&2; status=1; }
done
if [ -n "$(git status --porcelain -- . ':(exclude).okstra')" ]; then
  echo "dirty" >&2; status=1
fi
git diff --stat "$BASE" HEAD >/dev/null
exit $status
"""


def interleaved(commands: dict[str, list[str]], cwd: Path, env: dict, rounds: int) -> dict:
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, argv in commands.items():
            start = time.perf_counter()
            proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
            samples[name].append(time.perf_counter() - start)
            if proc.returncode != 0:
                raise SystemExit(f"{name} failed ({proc.returncode}): {proc.stderr.decode()}")
    return {name: statistics.median(values) * 1000 for name, values in samples.items()}


def main() -> None:
    import os

    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=50_000)
    parser.add_argument("--stages", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="okstra-bench-verify-") as tmp:
        root = Path(tmp)
        repo, worktree = root / "repo", root / "task"
        env = {
            **os.environ,
            "HOME": str(root),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid",
        }
        # Byte-code caching as an installed package has it (this sandbox sets
        # PYTHONDONTWRITEBYTECODE, which would recompile every okstra module on every run).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ.update(env)
        started = time.perf_counter()
        build_history(repo, args.commits, args.stages)
        heads = build_task(repo, worktree, args.stages)
        print(
            f"built {args.commits} commits + {args.stages} stages merged into the task branch "
            f"in {time.perf_counter() - started:.1f}s"
        )
        script = root / "baseline.sh"
        script.write_text(BASELINE)
        script.chmod(0o755)
        base = subprocess.run(["git", "rev-parse", "main"], cwd=repo, capture_output=True,
                              text=True, check=True).stdout.strip()  # fmt: skip
        env_base = {**env, "WORKTREE": str(worktree), "BASE": base}
        ok = okstra_command()
        commands = {
            "git okstra verify target": [*ok, "verify", "target", KEY],
            "git okstra verify target --json": [*ok, "verify", "target", KEY, "--json"],
            "git CLI script": ["sh", str(script), *heads],
            "(floor) python -c 'import pygit2'": [sys.executable, "-c", "import pygit2"],
        }
        interleaved(commands, repo, env_base, 1)  # warm-up: byte-code caches, page cache
        medians = interleaved(commands, repo, env_base, args.rounds)
        print(f"\nmedian of {args.rounds} whole processes, interleaved")
        baseline = medians["git CLI script"]
        for name, ms in medians.items():
            print(f"{name:36} {ms:8.1f} ms   script/this = {baseline / ms:5.2f}")
        in_process(repo, worktree, base, heads)


def in_process(repo: Path, worktree: Path, base: str, heads: list[str]) -> None:
    import pygit2

    from okstra_git.gitlayer import GitRepo

    git_repo = GitRepo.open(repo)
    head = str(pygit2.Repository(str(worktree)).head.target)
    rounds = 5
    t0 = time.perf_counter()
    for _ in range(rounds):
        assert not git_repo.not_contained(head, heads, base)
    walk = (time.perf_counter() - t0) / rounds * 1000
    t0 = time.perf_counter()
    for _ in range(rounds):
        assert all(git_repo.contains(head, h) for h in heads)
    one_by_one = (time.perf_counter() - t0) / rounds * 1000
    print(
        f"\nin-process ancestry of {len(heads)} stage heads: one walk from HEAD hiding the base "
        f"{walk:.2f} ms; libgit2 descendant_of per stage {one_by_one:.1f} ms "
        f"({one_by_one / walk:.0f}x)"
    )


if __name__ == "__main__":
    main()
