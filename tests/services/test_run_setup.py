"""What a run records at ``run start`` beyond its number: the critic opt-in and its base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, okstra

from okstra_git.core.errors import BadInput
from okstra_git.logic.critic import parse_critic
from okstra_git.services.context import open_context
from okstra_git.services.runs import start_run


def run_record(repo: Path, task_type: str, seq: str) -> dict:
    return json.loads(git(repo, "show", f"refs/okstra/tasks/g/i:runs/{task_type}/{seq}.json"))


@pytest.fixture
def task(repo: Path) -> Path:
    assert okstra(repo, "task", "new", "p:g:i", "--type", "final-verification").returncode == 0
    return repo


def test_the_critic_and_the_base_are_kept_in_the_run_record(task: Path):
    ctx = open_context(task)
    head = git(task, "rev-parse", "HEAD")
    _, record = start_run(ctx, ctx.key("p:g:i"), "error-analysis", critic="codex:gpt-5")
    stored = run_record(task, "error-analysis", record.seq)
    assert stored["convergence"] == {
        "critic": {"enabled": True, "provider": "codex", "model": "gpt-5", "mode": "coverage"}
    }
    # final-verification runs start only past the gate (test_task_status); their critic mode:
    assert parse_critic("codex:gpt-5", "final-verification")["mode"] == (
        "acceptance-devils-advocate"
    )
    assert stored["baseCommit"] == head
    _, second = start_run(ctx, ctx.key("p:g:i"), "implementation-planning", critic="claude")
    stored = run_record(task, "implementation-planning", second.seq)
    assert stored["convergence"]["critic"]["model"] == "default"
    assert stored["convergence"]["critic"]["mode"] == "coverage"


def test_a_named_base_is_resolved_to_its_commit(task: Path):
    first = git(task, "rev-parse", "HEAD")
    (task / "x.txt").write_text("x\n")
    git(task, "add", "x.txt")
    git(task, "commit", "-qm", "x")
    ctx = open_context(task)
    _, record = start_run(ctx, ctx.key("p:g:i"), "error-analysis", base="HEAD~1")
    assert run_record(task, "error-analysis", record.seq)["baseCommit"] == first
    assert "convergence" not in run_record(task, "error-analysis", record.seq)


@pytest.mark.parametrize(
    ("task_type", "critic", "message"),
    [
        ("implementation", "codex", "implementation runs have no critic pass"),
        ("release-handoff", "codex", "release-handoff runs have no critic pass"),
        ("final-verification", "openai", "the provider must be one of claude, codex, gemini"),
        ("final-verification", "codex:opus", "a codex model is one of"),
        ("final-verification", "", "the provider must be one of"),
    ],
)
def test_a_bad_critic_is_refused_and_records_nothing(task, task_type, critic, message):
    before = git(task, "rev-parse", "refs/okstra/tasks/g/i")
    ctx = open_context(task)
    with pytest.raises(BadInput, match=message):
        start_run(ctx, ctx.key("p:g:i"), task_type, critic=critic)
    with pytest.raises(BadInput, match="does not name a commit"):
        start_run(ctx, ctx.key("p:g:i"), "error-analysis", base="no-such-branch")
    assert git(task, "rev-parse", "refs/okstra/tasks/g/i") == before


# -- the files run start writes --------------------------------------------------------------


def _exist(paths: list[str], root: Path) -> None:
    for path in paths:
        where = root / path
        assert where.is_dir() if path.endswith("/") else where.is_file(), path


def _listed_text(text: str, root: Path) -> list[str]:
    """The paths run start's text lists as made or written, each checked to exist."""
    shown = [
        line.split(": ", 1)[1]
        for line in text.splitlines()
        if line.startswith(("  made ", "  wrote "))
    ]
    _exist(shown, root)
    return shown


def test_run_start_writes_every_file_it_lists_with_the_set_up_in_its_manifest(task: Path):
    argv = [
        "run", "start", "p:g:i", "--type", "error-analysis", "--base", "HEAD",
        "--critic", "codex:gpt-5", "--workers", "gemini,claude", "--model", "lead=opus",
        "--model", "gemini=gemini-2.5-flash", "--model", "reportWriter=",
        "--option", "directive=Look at the cache first.", "--option", "relatedTasks=p:g:j,p:g:k",
        "--option", "clarification=latest",
    ]  # fmt: skip
    proc = okstra(task, *argv, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out["wrote"]) == {"manifest", "state", "workerResults", "carry"}
    _exist(list(out["wrote"].values()), task)
    text = okstra(task, *argv).stdout  # a second run, 002, lists the same kinds as text
    assert text.startswith("started error-analysis run 002 of p:g:i\n"), text
    listed = _listed_text(text, task)
    assert sorted(listed) == sorted(p.replace("-001", "-002") for p in out["wrote"].values())
    manifest = json.loads((task / out["wrote"]["manifest"]).read_text())
    head = git(task, "rev-parse", "HEAD")
    assert manifest["taskKey"] == "p:g:i" and manifest["taskType"] == "error-analysis"
    assert manifest["seq"] == "001" and manifest["taskCommit"] == out["commit"]
    assert (manifest["baseRef"], manifest["baseCommit"]) == ("HEAD", head)
    assert manifest["workers"] == ["claude", "gemini"]
    assert manifest["models"] == {
        "lead": "opus",
        "claude": "default",
        "gemini": "gemini-2.5-flash",
        "reportWriter": "default",
    }
    assert manifest["options"] == {
        "directive": "Look at the cache first.",
        "relatedTasks": ["p:g:j", "p:g:k"],
        "clarification": "latest",
    }
    assert manifest["convergence"]["critic"]["provider"] == "codex"
    assert set(manifest["files"]) == set(out["wrote"])
    assert "stage" not in manifest  # only final-verification verifies a stage
    # The run record keeps the same set-up, so every clone sees it.
    assert run_record(task, "error-analysis", "001")["setup"] == {
        "baseRef": "HEAD",
        "workers": ["claude", "gemini"],
        "models": manifest["models"],
        "options": manifest["options"],
    }
    state_file = task / out["wrote"]["state"]
    assert json.loads(state_file.read_text())["status"] == "running"
    # The state file follows the run to its end.
    finished = okstra(
        task, "run", "finish", "p:g:i", "--type", "error-analysis", "--seq", "001",
        "--status", "error",
    )  # fmt: skip
    assert finished.returncode == 0, finished.stderr
    assert json.loads(state_file.read_text())["status"] == "error"


def test_run_starts_defaults_are_in_the_manifest_too(task: Path):
    proc = okstra(task, "run", "start", "p:g:i", "--type", "implementation-planning", "--json")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((task / json.loads(proc.stdout)["wrote"]["manifest"]).read_text())
    assert manifest["workers"] == ["claude", "codex"]
    assert manifest["models"] == dict.fromkeys(
        ["lead", "claude", "codex", "reportWriter"], "default"
    )
    assert manifest["options"] == {"directive": None, "relatedTasks": [], "clarification": "none"}
    assert manifest["baseRef"] is None and manifest["convergence"] is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--workers", "claude,openai"], "--workers 'claude,openai': a comma list of"),
        (["--workers", "codex,codex"], "names a worker twice"),
        (["--model", "executor=opus"], "the roles of this error-analysis run"),
        (["--workers", "claude", "--model", "codex=gpt-5"], "(workers claude) are lead, claude"),
        (["--model", "lead=gpt-5"], "the lead model is one of default, opus"),
        (["--model", "lead"], "expected ROLE=MODEL"),
        (["--model", "lead=opus", "--model", "lead=haiku"], "lead given more than once"),
        (["--option", "prTemplate=x.md"], "only release-handoff runs"),
        (["--option", "colour=red"], "not an option; one of directive"),
        (["--option", "directive="], "give a value"),
        (["--option", "relatedTasks=a:b"], "--option relatedTasks: task key 'a:b'"),
        (["--stage", "1"], "--stage picks what a final-verification run verifies"),
    ],
)
def test_a_bad_set_up_is_refused_naming_the_flag_and_records_nothing(task, args, message):
    before = git(task, "rev-parse", "refs/okstra/tasks/g/i")
    proc = okstra(task, "run", "start", "p:g:i", "--type", "error-analysis", *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert git(task, "rev-parse", "refs/okstra/tasks/g/i") == before
    assert not (task / ".okstra" / "tasks" / "g" / "i" / "runs" / "error-analysis").exists()


def test_a_phase_without_workers_refuses_a_roster(task: Path):
    proc = okstra(task, "run", "start", "p:g:i", "--type", "release-handoff", "--workers", "claude")
    assert proc.returncode == 2
    assert "release-handoff runs have no analysis workers" in proc.stderr


def test_run_start_remote_writes_every_file_it_lists_and_publishes_the_set_up(tmp_path: Path):
    from hooks_world import pair
    from sync_world import sync_json

    a, _remote = pair(tmp_path, "a")
    assert okstra(a, "task", "new", "p:g:i", "--type", "error-analysis").returncode == 0
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    assert okstra(b, "init", "--remote", "origin").returncode == 0
    sync_json(b)
    argv = ["run", "start", "p:g:i", "--type", "error-analysis", "--remote", "origin"]
    argv += ["--workers", "codex", "--model", "codex=gpt-5-codex"]
    proc = okstra(b, *argv, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    _exist(list(out["wrote"].values()), b)
    assert len(out["wrote"]) == 4
    manifest = json.loads((b / out["wrote"]["manifest"]).read_text())
    assert manifest["workers"] == ["codex"] and manifest["models"]["codex"] == "gpt-5-codex"
    # The other clone sees the set-up in the run record once it syncs.
    sync_json(a)
    record = run_record(a, "error-analysis", "001")
    assert record["setup"]["workers"] == ["codex"]
    assert record["setup"]["models"]["codex"] == "gpt-5-codex"
