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
