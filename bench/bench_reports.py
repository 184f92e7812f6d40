"""``report validate`` and ``report render`` as whole processes, on a small and a large report.

The large report has R rows in every table and R §5 items (default 500), with values that
need escaping. Each command runs as a user runs it (``git okstra …`` through this
installation), interleaved with two baselines in the same run:

- ``python -c 'import json; json.load(…)'``: reading the data at all;
- ``git okstra --version``: the CLI's start-up.

Medians of the wall time are printed. Usage: python bench/bench_reports.py [--rows R] [--rounds N]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _proc  # noqa: F401  (puts the checkout on sys.path: _proc.py says where)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from reports_data import full_report

from okstra_git.core.resources import okstra_command

HOSTILE = "value | with `code`, <tags> and\na second line"


def large_report(rows: int) -> dict:
    data = full_report("error-analysis")
    data["summary"] = [
        {"id": f"S-{n}", "ticketId": f"T-{n % 7}", "source": "claude, codex", "text": HOSTILE}
        for n in range(rows)
    ]
    data["consensus"] = [
        {"id": f"CS-{n}", "sourceItems": [f"claude:F-{n}", f"codex:{n}.1"],
         "statement": HOSTILE, "evidence": HOSTILE}
        for n in range(rows)
    ]  # fmt: skip
    data["risks"] = [
        {"id": f"R-{n}", "item": HOSTILE, "riskIfIgnored": HOSTILE, "mitigationOwner": "lead"}
        for n in range(rows)
    ]
    data["clarificationItems"] = [
        {"id": f"C-{n:03d}", "ticketId": f"T-{n % 7}", "kind": "decision", "statement": HOSTILE,
         "expectedForm": "(a) or (b)", "blocks": "none", "status": "open", "userInput": ""}
        for n in range(rows)
    ]  # fmt: skip
    return data


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    okstra = okstra_command()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        small, large = root / "small.data.json", root / "large.data.json"
        small.write_text(json.dumps(full_report("error-analysis")))
        large.write_text(json.dumps(large_report(args.rows)))
        commands = {
            "baseline: git okstra --version": [*okstra, "--version"],
            "baseline: json.load(large)": [
                sys.executable, "-c", f"import json; json.load(open({str(large)!r}))"
            ],
            "report validate small": [*okstra, "report", "validate", str(small)],
            "report render small": [*okstra, "report", "render", str(small)],
            f"report validate large ({args.rows})": [*okstra, "report", "validate", str(large)],
            f"report render large ({args.rows})": [*okstra, "report", "render", str(large)],
        }  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name in commands}
        for argv in commands.values():
            timed(argv, root)  # warm-up
        for _ in range(args.rounds):
            for name, argv in commands.items():
                times[name].append(timed(argv, root))
        sizes = {p.name: p.stat().st_size for p in sorted(root.iterdir())}
    print(f"whole-process wall time, median of {args.rounds} interleaved rounds")
    for name, values in times.items():
        print(f"  {name:<40} {statistics.median(values) * 1000:8.1f} ms")
    print("files: " + ", ".join(f"{name} {size // 1024} KiB" for name, size in sizes.items()))


if __name__ == "__main__":
    main()
