"""``verify target`` on a 50,000-commit history with 50 stages, against the git CLI.

Builds (with ``git fast-import``) a main line of N commits (default 50,000), then S stages
(default 50): one commit per stage branch off the tip, merged one by one into the task branch,
which is checked out in a linked worktree. The task, its plan snapshot and one ``done`` claim
per stage are written with okstra's own record code. Then, in the same run and interleaved:

- ours: ``git okstra verify target KEY`` (text, and ``--json``) as a whole process;
- baseline: a shell script doing the same checks with the git CLI — ``git merge-base
  --is-ancestor`` per stage and ``git status --porcelain -- . ':(exclude).okstra'`` (given
  the stage heads up front: it reads no task, claim or plan, so it does less than we do).

CPU medians and ratios are printed, plus, in-process, one history walk (``not_contained``)
next to asking libgit2 ``descendant_of`` once per stage. The report (``report.py``) runs it at
50 and 200 stages. Usage: python bench/bench_verify.py [--commits N] [--stages S] [--rounds R]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _proc import ENV, PYGIT2, Row, git, interleaved, okstra, ratio_row, run

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
    from okstra_git.git.repo import RefUpdate
    from okstra_git.records.claim import Claim, claim_commit, claim_ref
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
        commit = claim_commit(ctx.repo, key, claim, None, "claim done")
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


def world(root: Path, commits: int, stages: int) -> tuple[Path, Path, list[str], dict]:
    """The repository, the task worktree, the stage heads and the environment to run in."""
    import os

    repo, worktree = root / "repo", root / "task"
    env = {
        **ENV,
        "HOME": str(root),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_DATE": "",  # real dates: the records are built in-process too
        "GIT_COMMITTER_DATE": "",
    }
    env = {k: v for k, v in env.items() if v}
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        build_history(repo, commits, stages)
        heads = build_task(repo, worktree, stages)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return repo, worktree, heads, env


def compare(commits: int, stages: int, rounds: int) -> tuple[dict[str, float], str]:
    """Median CPU ms of ours and the script at one size, and the details."""
    with tempfile.TemporaryDirectory(prefix="okstra-bench-verify-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        repo, worktree, heads, env = world(root, commits, stages)
        built = time.perf_counter() - started
        script = root / "baseline.sh"
        script.write_text(BASELINE)
        script.chmod(0o755)
        base = git(repo, "rev-parse", "main")
        env_base = {**env, "WORKTREE": str(worktree), "BASE": base}
        ok = okstra()
        medians = interleaved(
            {
                name: (lambda argv=argv: run(argv, repo, env=env_base))
                for name, argv in {
                    "git okstra verify target": [*ok, "verify", "target", KEY],
                    "git okstra verify target --json": [*ok, "verify", "target", KEY, "--json"],
                    "git CLI script": ["sh", str(script), *heads],
                    "(floor) python -c 'import pygit2'": PYGIT2,
                }.items()
            },
            rounds,
        )
        lines = [
            f"{commits} commits + {stages} stages merged into the task branch, built in "
            f"{built:.1f}s; CPU median of {rounds} whole processes, interleaved"
        ]
        baseline = medians["git CLI script"]
        lines += [
            f"{name:36} {ms:8.1f} ms   this/script = {ms / baseline:5.2f}"
            for name, ms in medians.items()
        ]
        lines.append(in_process(repo, worktree, base, heads))
    return medians, "\n".join(lines)


def measure(short: bool) -> tuple[list[Row], str]:
    """The report rows (50 and 200 stages), and the details this bench prints."""
    rows, details = [], []
    for stages, limit in ((50, 1.0), (200, 0.5)):
        commits, count, rounds = (200, max(2, stages // 25), 1) if short else (50_000, stages, 9)
        medians, text = compare(commits, count, rounds)
        details.append(text)
        for mode in ("", " --json"):
            rows.append(
                ratio_row(
                    f"verify target{mode}, {count} stages",
                    medians[f"git okstra verify target{mode}"],
                    medians["git CLI script"],
                    limit,
                    "shell script",
                    6,
                )
            )
    return rows, "\n\n".join(details)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=50_000)
    parser.add_argument("--stages", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print(compare(args.commits, args.stages, args.rounds)[1])


def in_process(repo: Path, worktree: Path, base: str, heads: list[str]) -> str:
    import pygit2

    from okstra_git.git.repo import GitRepo

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
    return (
        f"in-process ancestry of {len(heads)} stage heads: one walk from HEAD hiding the base "
        f"{walk:.2f} ms; libgit2 descendant_of per stage {one_by_one:.1f} ms "
        f"({one_by_one / max(walk, 1e-6):.0f}x)"
    )


if __name__ == "__main__":
    main()
