"""Commands run exactly as okstra printed them, where a user met a printed step that failed
without saying what to do (the trial of 2026-12-02, /work/coord/trial.md)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from conftest import git, okstra
from reports_data import fill_prompts
from team_world import run_step


def test_run_finish_of_a_report_nobody_wrote_says_how_to_write_it(repo: Path):
    """run start names a report .md and the run finish for it; run as printed before the
    report exists, the refusal's hint starts the report data, then (data beside the .md) renders
    it, and the same printed finish then records the run."""
    assert okstra(repo, "task", "new", "p:g:i", "--type", "error-analysis").returncode == 0
    start = okstra(repo, "run", "start", "p:g:i", "--type", "error-analysis", "--json")
    assert start.returncode == 0, start.stderr
    finish = json.loads(start.stdout)["next"]
    report = Path(finish["report"])
    assert not report.exists()

    refused = run_step(finish)
    assert refused.returncode == 2, refused.stderr
    assert f"report {report}: no such file; start the run's report data with: " in refused.stderr
    hint = refused.stderr.split("hint: ", 1)[1].strip()
    assert shlex.split(hint)[:4] == ["git", "okstra", "report", "init"], hint
    started = okstra(repo, *shlex.split(hint)[2:])
    assert started.returncode == 0, started.stderr
    data = report.with_name(report.name.removesuffix(".md") + ".data.json")
    data.write_text(json.dumps(fill_prompts(json.loads(data.read_text()))))

    refused = run_step(finish)
    assert refused.returncode == 2, refused.stderr
    assert "its report data is beside it" in refused.stderr
    hint = refused.stderr.split("hint: ", 1)[1].strip()
    assert shlex.split(hint) == ["git", "okstra", "report", "render", str(data)]
    rendered = okstra(repo, *shlex.split(hint)[2:])
    assert rendered.returncode == 0, rendered.stderr
    assert report.is_file()

    done = run_step(finish)
    assert done.returncode == 0, done.stderr
    run = json.loads(git(repo, "show", "refs/okstra/tasks/g/i:runs/error-analysis/001.json"))
    assert run["status"] == "completed"
