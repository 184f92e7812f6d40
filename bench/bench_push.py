"""What the okstra pre-push hook adds to a real ``git push`` to a local bare remote.

Two clones of one bare remote, identical but for the hook: one has ``git okstra hooks
install``, the other no hook. In the same run, interleaved round by round, each pushes:

- an unprotected branch (a new ``refs/heads/bench/...`` ref each round);
- a protected branch with an accepted whole-task verdict (a new ``refs/heads/release/...``);
- 20 protected refs at once (all carrying the verdict, so all 20 are checked).

Medians, and the milliseconds the hook adds, are printed side by side. Then the hook's entry
alone (``git okstra hooks run pre-push``) and ``git okstra ci check`` as whole processes, next
to a bare ``python -c pass`` of the same interpreter, and an import check: neither may load
typer, pydantic, jsonschema or jinja2. Usage: python bench/bench_push.py [--rounds R]
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from okstra_git import hookinstall
from okstra_git.gitlayer import GitRepo
from okstra_git.records.verdict import Verdict, append_verdict

HEAVY = ("typer", "pydantic", "jsonschema", "jinja2")
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def git(cwd: Path, *args: str, stdin: str | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, input=stdin, text=True, capture_output=True
    )
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed in {cwd}:\n{proc.stderr}")
    return proc.stdout.strip()


def timed(argv: list[str], cwd: Path, stdin: str | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=ENV, input=stdin, text=True, capture_output=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    return elapsed * 1000


def record_verdict(repo: Path) -> str:
    grepo = GitRepo.open(repo)
    head = grepo.resolve_commit("HEAD")
    append_verdict(
        grepo,
        Verdict(
            task_key="bench:grp:feat",
            scope="whole-task",
            stages=[1],
            base=head,
            head=head,
            head_tree=str(grepo.repo[head].tree_id),
            verdict="accepted",
            blocker_count=0,
            report_digest="sha256:" + "0" * 64,
            routing="release-handoff",
            recorded_at="2026-06-06T12:00:00+00:00",
            recorded_by="Bench <bench@example.invalid>",
        ),
    )
    return head


def setup(root: Path) -> tuple[Path, Path, str]:
    remote = root / "remote.git"
    git(root, "init", "-q", "--bare", "-b", "main", str(remote))
    seed = root / "seed"
    git(root, "init", "-q", "-b", "main", str(seed))
    for n in range(200):  # a small project, so pushes pack real objects
        (seed / f"f{n}.txt").write_text(f"file {n}\n" * 20)
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "project")
    git(seed, "push", "-q", str(remote), "main")
    clones = []
    for name in ("with-hook", "no-hook"):
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
    return clones[0], clones[1], heads.pop()


def push_case(clone: Path, case: str, rnd: int) -> float:
    tag = f"{clone.name}-{rnd}"
    if case == "unprotected branch":
        specs = [f"HEAD:refs/heads/bench/{tag}"]
    elif case == "protected + verdict":
        specs = [f"HEAD:refs/heads/release/{tag}"]
    else:
        specs = [f"HEAD:refs/heads/release/{tag}-{k}" for k in range(20)]
    return timed(["git", "push", "-q", "origin", *specs], clone)


def summarize(name: str, base: list[float], ours: list[float]) -> str:
    b, o = statistics.median(base), statistics.median(ours)
    return f"{name:<24} {b:9.1f} {o:11.1f} {o - b:+10.1f} {o / b:7.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args()
    # An installed wheel has its bytecode; a source tree under PYTHONDONTWRITEBYTECODE would
    # recompile every module on every push and time the compiler, not the hook.
    compileall.compile_dir(Path(hookinstall.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory(prefix="okstra-bench-push-") as tmp:
        hooked, plain, head = setup(Path(tmp))
        script = (hooked / ".git" / "hooks" / "pre-push").read_text()
        exe = hookinstall.recorded_exe(script) or "git-okstra"
        print(f"okstra pre-push hook running {exe}; {args.rounds} rounds, medians in ms\n")
        print(f"{'git push':<24} {'no hook':>9} {'okstra hook':>11} {'added':>10} {'ratio':>8}")
        for case in ("unprotected branch", "protected + verdict", "20 protected refs"):
            base: list[float] = []
            ours: list[float] = []
            for rnd in range(args.rounds):
                # Interleaved, alternating who goes first, so drift hits both alike.
                pair = [(plain, base), (hooked, ours)]
                for clone, bucket in pair if rnd % 2 else reversed(pair):
                    bucket.append(push_case(clone, case, rnd))
            print(summarize(case, base, ours))

        line = f"refs/heads/main {head} refs/heads/main {'0' * 40}\n"
        other = f"refs/heads/topic {head} refs/heads/topic {'0' * 40}\n"
        python = [sys.executable, "-c", "pass"]
        entry = [exe, "hooks", "run", "pre-push", "origin", "url"]
        runs = {
            # Without site: what this machine's site-packages .pth files add to every start.
            "python -S -c pass": lambda: timed([sys.executable, "-S", "-c", "pass"], hooked),
            "python -c pass": lambda: timed(python, hooked),
            "hooks run, unprotected": lambda: timed(entry, hooked, other),
            "hooks run, protected": lambda: timed(entry, hooked, line),
            "ci check": lambda: timed([exe, "ci", "check"], hooked),
        }
        samples: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            for name, run in runs.items():
                samples[name].append(run())
        print(f"\n{'process alone':<24} {'median':>9} {'vs python':>11}")
        floor = statistics.median(samples["python -c pass"])
        for name, values in samples.items():
            med = statistics.median(values)
            print(f"{name:<24} {med:9.1f} {med - floor:+11.1f}")

        for what, argv, stdin in (
            ("hooks run pre-push", ["hooks", "run", "pre-push", "origin", "url"], line),
            ("ci check", ["ci", "check"], None),
        ):
            proc = subprocess.run(
                [sys.executable, "-X", "importtime", "-m", "okstra_git", *argv],
                cwd=hooked,
                env=ENV,
                input=stdin,
                text=True,
                capture_output=True,
            )
            loaded = {ln.split("|")[-1].strip().split(".")[0] for ln in proc.stderr.splitlines()}
            heavy = sorted(set(HEAVY) & loaded)
            print(f"imports of {what}: " + (f"LOADS {', '.join(heavy)}" if heavy else "lean"))


if __name__ == "__main__":
    main()
