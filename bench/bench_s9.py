"""S9 (parallel stages predicting one file) on plans where N independent stages share a file.

- ours: ``stagemap.validate`` — one finding per shared file, pairs counted with bit masks and
  listed up to ``S9_PAIRS_SHOWN``; and ``git okstra plan validate`` on the same plan as a whole
  process (time and bytes printed);
- baseline: the rule read literally — every pair of stages sharing the file checked for
  reachability both ways and reported one finding per pair (what S9 did before it was grouped),
  counting the same pairs.

Usage: python bench/bench_s9.py [--stages 500 1000 2000] [--rounds R]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _proc  # noqa: F401  (puts the checkout on sys.path: _proc.py says where)

from okstra_git.logic.stagemap import StageMap, parse_plan, reaches, validate
from tests.plans import plan_text


def literal_pairs(stage_map: StageMap) -> list[str]:
    """One line per parallel pair sharing a file, as the ungrouped check reported them."""
    owners: dict[str, list[int]] = {}
    for stage in stage_map.stages:
        for name in stage.predicted_files:
            owners.setdefault(name, []).append(stage.number)
    lines = []
    for name, numbers in owners.items():
        for i, a in enumerate(numbers):
            for b in numbers[i + 1 :]:
                if not reaches(stage_map, a, b) and not reaches(stage_map, b, a):
                    lines.append(f"stages {a} and {b} can run at once but both predict {name}")
    return lines


def best(rounds: int, run) -> tuple[float, object]:
    """Median CPU seconds of ``run()`` (CPU, not wall: the machine may be shared)."""
    times, out = [], None
    for _ in range(rounds):
        start = time.process_time()
        out = run()
        times.append(time.process_time() - start)
    return statistics.median(times), out


def child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stages", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print("CPU seconds (median) and bytes of findings")
    print(f"{'stages':>7} {'ours s':>9} {'ours bytes':>11} {'literal s':>10} {'literal bytes':>14}")
    for count in args.stages:
        stages = [(n, [], ["src/shared.py", f"src/own{n}.py"]) for n in range(1, count + 1)]
        text = plan_text(stages)
        stage_map = parse_plan(text, "plan.md")
        ours_s, findings = best(args.rounds, lambda m=stage_map: validate(m))
        ours_bytes = sum(len(f.render("plan.md")) + 1 for f in findings)  # type: ignore[union-attr]
        literal_s, lines = best(1, lambda m=stage_map: literal_pairs(m))
        literal_bytes = sum(len(line) + 1 for line in lines)  # type: ignore[union-attr]
        print(f"{count:>7} {ours_s:>9.4f} {ours_bytes:>11} {literal_s:>10.2f} {literal_bytes:>14}")
    with tempfile.TemporaryDirectory() as tmp:
        plan = Path(tmp) / "plan.md"
        plan.write_text(text, "utf-8")
        start = child_cpu()
        proc = subprocess.run(
            [sys.executable, "-m", "okstra_git", "plan", "validate", str(plan)],
            capture_output=True,
            cwd=tmp,
        )
        took = child_cpu() - start
    print(
        f"git okstra plan validate, {count} stages: exit {proc.returncode}, {took:.2f} CPU s "
        f"whole process, {len(proc.stdout) + len(proc.stderr)} bytes of output"
    )


if __name__ == "__main__":
    main()
