"""What a user trial with a bare remote, a planner and two agents found (each clone doing only
what the tool prints)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from conftest import git, okstra
from hooks_world import pair
from reports_data import fill_prompts
from sync_world import KEY, new_task, sync_json
from team_world import TWO_FREE, Team, approve_here, run_json, run_line, run_step, work_on


def test_a_plain_clone_of_a_remote_that_has_the_task_is_not_told_to_create_it(tmp_path: Path):
    """A `git clone` nobody ran `git okstra init --remote` in does not fetch okstra's refs, so
    `task status KEY` of a task the planner published said `no task …; create it with task new`
    — a second task of that key, conflicting with origin's at the next sync. It names the set-up
    that brings origin's records instead, and following the hints reaches the task."""
    a, _remote = pair(tmp_path, "a")
    new_task(a)
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    proc = okstra(b, "task", "status", KEY, "--json")
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    assert out["hint"] == f"git -C {b.resolve()} okstra init --remote origin", out
    assert "does not fetch okstra's records from origin" in out["error"], out["error"]
    assert run_line(out["hint"]).returncode == 0
    again = json.loads(okstra(b, "task", "status", KEY, "--json").stdout)
    assert again["hint"] == f"git -C {b.resolve()} okstra sync origin", again
    assert run_line(again["hint"]).returncode == 0
    assert okstra(b, "task", "status", KEY).returncode == 0
    assert "git okstra" not in out["error"], out["error"]  # the one command is the hint


def test_init_says_when_this_clone_has_no_identity_to_record(tmp_path: Path, monkeypatch):
    """With no user.name/user.email, okstra records every claim, approval and verdict of the
    clone as `okstra <okstra@localhost>` and said nothing (git commit in the stage worktree was
    the first to ask, after the claim was recorded). init names what is missing and the
    commands that set it, each one line that runs from any folder."""
    (Path.home() / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    clone, _ = pair(tmp_path, "c")
    git(clone, "config", "--unset", "user.name")
    git(clone, "config", "--unset", "user.email")
    proc = okstra(clone, "init", "--remote", "origin")
    assert proc.returncode == 0, proc.stderr
    said = [ln for ln in proc.stdout.splitlines() if "user.name" in ln]
    assert len(said) == 1 and "okstra <okstra@localhost>" in said[0], proc.stdout
    where = str(clone.resolve())
    assert shlex.join(["git", "-C", where, "config", "user.name", "NAME"]) in said[0]
    assert shlex.join(["git", "-C", where, "config", "user.email", "EMAIL"]) in said[0]
    out = json.loads(okstra(clone, "init", "--json").stdout)
    assert out["identityUnset"] == ["user.name", "user.email"], out
    git(clone, "config", "user.name", "Ann")
    git(clone, "config", "user.email", "ann@x")
    again = okstra(clone, "init", "--lease", "1h")
    assert "user.name" not in again.stdout, again.stdout
    assert json.loads(okstra(clone, "init", "--json").stdout)["identityUnset"] == []


def test_stage_done_run_as_printed_before_the_report_exists_says_how_to_write_it(tmp_path: Path):
    """The claim and task status print `stage done KEY --stage N --report R.md` with R.md not
    written yet; run as printed it said only `--report R.md: no such file` (exit 2, no hint).
    As run finish does, it now says how to write it: the hint starts the stage's report data;
    once that is beside R.md, it says so and the hint renders R.md; the printed done then works."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, TWO_FREE)
    claim = run_json(pat, "stage", "claim", KEY, "--remote", "origin", "--stage", "1")
    work_on(Path(claim["placements"][0]["worktreePath"]), 1, "Pat")
    step = run_json(pat, "task", "status", KEY)["next"]
    report = Path(step["report"])
    assert not report.exists() and step["argv"][-2:] == ["--report", str(report)], step

    refused = run_step(step)
    assert refused.returncode == 2, refused.stderr
    message, hint = refused.stderr.split("\nhint: ", 1)
    assert f"--report {report}: no such file; " in message, message
    argv = shlex.split(hint.strip())
    assert argv[3:] == ["okstra", "report", "init", KEY, "--type", "implementation", "--stage", "1"]
    assert run_line(hint.strip()).returncode == 0
    data = report.with_name(report.name.removesuffix(".md") + ".data.json")
    data.write_text(json.dumps(fill_prompts(json.loads(data.read_text()))))

    refused = run_step(step)
    assert refused.returncode == 2 and "its report data is beside it" in refused.stderr
    hint = refused.stderr.split("\nhint: ", 1)[1].strip()
    assert shlex.split(hint)[3:] == ["okstra", "report", "render", str(data)], hint
    assert run_line(hint).returncode == 0 and report.is_file()
    done = run_step(step)
    assert done.returncode == 0, done.stderr


def test_work_usage_puts_the_agents_command_after_dashes_and_json_before(repo: Path):
    """`work -h` read `… [--once] CMD... [--json]`: typed that way, `--json` after `--` goes to
    the agent's command (`wants_json` stops at `--`), and a CMD with options of its own needs
    the `--` the usage left out. It reads as the command line must: `[--json] -- CMD...`."""
    usage = okstra(repo, "work", "-h").stdout.split("\n\n", 1)[0]
    flat = " ".join(usage.split())
    assert flat.endswith("[--once] [--json] -- CMD..."), flat
    assert not any(ln.rstrip().endswith(" --") for ln in usage.splitlines()), usage
    # As the usage says: okstra takes --json before --, the agent gets what follows.
    proc = okstra(repo, "work", "p:g:nosuch", "--json", "--", "sh", "-c", "exit 0", "--json")
    assert proc.returncode != 0 and json.loads(proc.stdout)["ok"] is False, proc


def test_a_claim_that_lost_every_stage_it_was_offered_names_them_in_plural(tmp_path: Path):
    """`nothing claimed: stage 1, 2, ready in this clone's records, was claimed by another clone
    meanwhile.` — several stages read as one; they are named as stages, which were claimed."""
    team = Team.make(tmp_path)
    pat = team.clone("pat", "Pat")
    approve_here(pat, TWO_FREE)
    assert okstra(pat, "sync", "origin").returncode == 0
    bob = team.clone("bob", "Bob")
    assert okstra(bob, "sync", "origin").returncode == 0
    taken = run_json(pat, "stage", "claim", KEY, "--remote", "origin")
    assert taken["stages"] == [1, 2], taken["stages"]
    lost = okstra(bob, "stage", "claim", KEY, "--remote", "origin")
    assert lost.returncode == 0, lost.stderr
    assert lost.stdout.startswith(
        "nothing claimed: stages 1, 2, ready in this clone's records, were claimed by another "
        "clone meanwhile."
    ), lost.stdout
