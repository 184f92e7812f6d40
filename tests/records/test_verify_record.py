"""Verdicts: recording them as notes (on the commit and its tree), routing, show, signatures,
and two clones whose notes merge with git's cat_sort_uniq."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest
from conftest import git, okstra
from reports_data import verdict_report
from verify_world import KEY, World, make_world, merged_world

from okstra_git.core.errors import BadInput, Refused
from okstra_git.gate import signing
from okstra_git.git.repo import GitRepo, RefUpdate
from okstra_git.records.base import from_data
from okstra_git.records.task import require_task
from okstra_git.records.verdict import (
    VERDICTS_REF,
    Verdict,
    append_verdict,
    read_verdicts,
)
from okstra_git.services import verify
from okstra_git.services.context import open_context
from okstra_git.services.reportfiles import MAX_DATA_BYTES


def write_report(
    world: World, path: Path, token: str = "accepted", blockers: int = 0, stage: int | None = None
) -> Path:
    return verdict_report(world.ctx, world.key, path, token, blockers, stage)


@pytest.fixture
def merged(repo: Path) -> World:
    return merged_world(repo)


def test_accepted_whole_task_is_noted_on_head_and_tree_and_opens_release(
    merged: World, tmp_path: Path
):
    report = write_report(merged, tmp_path / "data.json")
    proc = okstra(merged.repo, "verify", "record", KEY, "--verdict", "accepted",
                  "--report", str(report), "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    head = git(merged.task_wt, "rev-parse", "HEAD")
    tree = git(merged.task_wt, "rev-parse", "HEAD^{tree}")
    v = out["verdict"]
    assert (v["head"], v["headTree"], v["base"]) == (head, tree, merged.base)
    assert (v["scope"], v["stages"], v["routing"]) == ("whole-task", [1, 2], "release-handoff")
    assert v["reportDigest"] == "sha256:" + hashlib.sha256(report.read_bytes()).hexdigest()
    assert v["recordedBy"] == "Test User <test@example.invalid>"
    assert out["nextPhase"] == "release-handoff"
    # Plain git reads it: one canonical JSON line, on the commit and on its tree.
    line = git(merged.repo, "notes", "--ref", "okstra/verdicts", "show", head)
    assert json.loads(line) == v
    assert git(merged.repo, "notes", "--ref", "okstra/verdicts", "show", tree) == line
    # Both notes came in one notes commit.
    assert git(merged.repo, "rev-list", "--count", VERDICTS_REF) == "1"
    flow = require_task(merged.ctx.repo, merged.key).task.workflow
    assert (flow.last_completed_phase, flow.next_recommended_phase) == (
        "final-verification",
        "release-handoff",
    )


def test_recording_again_adds_no_second_line(merged: World, tmp_path: Path):
    report = write_report(merged, tmp_path / "data.json")
    first = verify.record_verdict(merged.ctx, merged.key, "accepted", str(report), None)
    again = verify.record_verdict(merged.ctx, merged.key, "accepted", str(report), None)
    assert first.added and not again.added and again.verdict == first.verdict
    verdicts, problems = read_verdicts(merged.ctx.repo, first.verdict.head)
    assert len(verdicts) == 1 and not problems


def test_a_kill_mid_record_leaves_neither_the_note_nor_the_routing(merged: World, tmp_path: Path):
    import os
    import sys

    report = write_report(merged, tmp_path / "data.json")
    task_before = git(merged.repo, "rev-parse", "refs/okstra/tasks/grp/feat")
    killed = subprocess.run(
        [sys.executable, "-m", "okstra_git", "verify", "record", KEY, "--verdict", "accepted",
         "--report", str(report)],
        cwd=merged.repo, capture_output=True, text=True,
        env={**os.environ, "OKSTRA_TEST_CRASH_AT": "in-transaction"},
    )  # fmt: skip
    assert killed.returncode == -9
    # Both refs were locked together and neither moved.
    assert git(merged.repo, "rev-parse", "refs/okstra/tasks/grp/feat") == task_before
    assert git(merged.repo, "rev-parse", "-q", "--verify", VERDICTS_REF, check=False) == ""
    locks = sorted((merged.repo / ".git" / "refs").rglob("*.lock"))
    assert sorted(p.name for p in locks) == ["feat.lock", "verdicts.lock"]
    for lock in locks:
        lock.unlink()
    again = okstra(merged.repo, "verify", "record", KEY, "--verdict", "accepted",
                   "--report", str(report))  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert git(merged.repo, "rev-list", "--count", VERDICTS_REF) == "1"
    flow = require_task(merged.ctx.repo, merged.key).task.workflow
    assert flow.next_recommended_phase == "release-handoff"


def test_blocked_routes_back_to_implementation(merged: World, tmp_path: Path):
    report = write_report(merged, tmp_path / "data.json", "blocked", blockers=2)
    done = verify.record_verdict(merged.ctx, merged.key, "blocked", str(report), None)
    assert (done.verdict.routing, done.verdict.blocker_count) == ("implementation", 2)
    assert done.next_phase == "implementation"
    assert not done.verdict.opens_gate


def test_report_rules_refuse_with_the_field_named(merged: World, tmp_path: Path):
    blocked = write_report(merged, tmp_path / "b.json", "accepted", blockers=1)
    proc = okstra(merged.repo, "verify", "record", KEY, "--verdict", "accepted",
                  "--report", str(blocked))  # fmt: skip
    assert proc.returncode == 2
    assert "/finalVerification/acceptanceBlockers: verdict accepted requires zero" in proc.stderr
    mismatch = write_report(merged, tmp_path / "m.json", "blocked")
    with pytest.raises(BadInput, match=r"/finalVerdict/verdictToken: 'blocked' differs"):
        verify.record_verdict(merged.ctx, merged.key, "accepted", str(mismatch), None)
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(BadInput, match="expected a JSON object"):
        verify.record_verdict(merged.ctx, merged.key, "blocked", str(tmp_path / "bad.json"), None)
    (tmp_path / "junk.json").write_bytes(b"\xff\xfe")
    with pytest.raises(BadInput, match="not UTF-8 JSON"):
        verify.record_verdict(merged.ctx, merged.key, "blocked", str(tmp_path / "junk.json"), None)
    with pytest.raises(BadInput, match="--verdict 'maybe'"):
        verify.record_verdict(merged.ctx, merged.key, "maybe", str(mismatch), None)
    big = tmp_path / "big.json"
    with big.open("wb") as fh:
        fh.truncate(MAX_DATA_BYTES + 1)
    with pytest.raises(BadInput, match="larger than the 16 MiB cap"):
        verify.record_verdict(merged.ctx, merged.key, "blocked", str(big), None)
    assert merged.ctx.repo.read_ref(VERDICTS_REF) is None  # nothing stored


def test_record_re_runs_the_gate(merged: World, tmp_path: Path):
    report = write_report(merged, tmp_path / "data.json")
    verified = git(merged.task_wt, "rev-parse", "HEAD")
    (merged.task_wt / "late.py").write_text("x = 1\n")
    proc = okstra(merged.repo, "verify", "record", KEY, "--verdict", "accepted",
                  "--report", str(report))  # fmt: skip
    assert proc.returncode == 1
    assert "worktree has uncommitted source changes (outside .okstra/)" in proc.stderr
    git(merged.task_wt, "add", "late.py")
    git(merged.task_wt, "commit", "-q", "-m", "late change")
    with pytest.raises(Refused, match="not the verified"):
        verify.record_verdict(
            merged.ctx, merged.key, "accepted", str(report), None, expect_head=verified
        )
    assert merged.ctx.repo.read_ref(VERDICTS_REF) is None


def test_single_stage_verdict_never_routes_to_release(repo: Path, tmp_path: Path):
    world = make_world(repo, stages=2)
    world.do_stage(1)
    report = write_report(world, tmp_path / "data.json", stage=1)
    done = verify.record_verdict(world.ctx, world.key, "accepted", str(report), 1)
    v = done.verdict
    assert (v.scope, v.stages, v.routing) == ("single-stage", [1], "done")
    assert v.head == git(world.stage_wt(1), "rev-parse", "HEAD")
    assert done.next_phase == "implementation"  # stage 2 is still to do
    assert not v.opens_gate
    # A whole-task report (no valid one exists while stage 2 is open: report init refuses it).
    wrong_scope = write_report(world, tmp_path / "w.json", stage=1)
    data = json.loads(wrong_scope.read_text())
    data["finalVerification"]["verificationScope"] = "whole-task"
    wrong_scope.write_text(json.dumps(data))
    with pytest.raises(BadInput, match=r"/finalVerification/verificationScope: 'whole-task', but"):
        verify.record_verdict(world.ctx, world.key, "accepted", str(wrong_scope), 1)


def test_show_lists_same_tree_verdicts_newest_first(merged: World, tmp_path: Path):
    recorded = verify.record_verdict(
        merged.ctx, merged.key, "accepted", str(write_report(merged, tmp_path / "a.json")), None
    )
    older = recorded.verdict.replace(verdict="blocked", routing="implementation",
                    blocker_count=1, recorded_at="2020-01-01T00:00:00+00:00")  # fmt: skip
    assert append_verdict(merged.ctx.repo, older)
    head = recorded.verdict.head
    # A rebase that changes nothing: same tree, another commit.
    twin = git(merged.repo, "commit-tree", f"{head}^{{tree}}", "-p", merged.base, "-m", "twin")
    proc = okstra(merged.repo, "verify", "show", twin, "--json")
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    assert [(v["verdict"], v["sameCommit"]) for v in shown["verdicts"]] == [
        ("accepted", False),
        ("blocked", False),
    ]
    assert all(v["head"] == head and v["signatureStatus"] == "unsigned" for v in shown["verdicts"])
    text = okstra(merged.repo, "verify", "show", twin).stdout
    assert f"same tree, recorded on {head[:12]}" in text
    on_head = json.loads(okstra(merged.repo, "verify", "show", head, "--json").stdout)
    assert {v["sameCommit"] for v in on_head["verdicts"]} == {True}
    assert len(on_head["verdicts"]) == 2
    nothing = okstra(merged.repo, "verify", "show", merged.base)
    assert nothing.returncode == 0 and "no verdicts" in nothing.stdout


def test_two_clones_verdicts_on_one_commit_merge_with_cat_sort_uniq(merged: World, tmp_path: Path):
    # Clone B gets the code, the task and its claims, and its own task worktree at the same HEAD.
    b = tmp_path / "clone-b"
    git(tmp_path, "clone", "-q", str(merged.repo), str(b))
    git(b, "fetch", "-q", str(merged.repo), "refs/okstra/*:refs/okstra/*")
    git(b, "config", "user.name", "Other Reviewer")
    git(b, "config", "user.email", "other@example.invalid")
    head = git(merged.task_wt, "rev-parse", "HEAD")
    git(b, "fetch", "-q", str(merged.repo), head)
    git(b, "worktree", "add", "-q", "-b", merged.branch("task"), str(tmp_path / "b-task"), head)
    ctx_b = open_context(b)

    report = write_report(merged, tmp_path / "data.json")
    a_done = verify.record_verdict(merged.ctx, merged.key, "accepted", str(report), None)
    b_done = verify.record_verdict(ctx_b, ctx_b.key(KEY), "accepted", str(report), None)
    assert a_done.verdict.head == b_done.verdict.head == head
    assert a_done.verdict != b_done.verdict  # different reviewers

    git(merged.repo, "fetch", "-q", str(b), f"{VERDICTS_REF}:refs/notes/okstra-b/verdicts")
    git(merged.repo, "notes", "--ref", "okstra/verdicts", "merge", "-q", "-s", "cat_sort_uniq",
        "refs/notes/okstra-b/verdicts")  # fmt: skip
    lines = git(merged.repo, "notes", "--ref", "okstra/verdicts", "show", head).splitlines()
    assert lines == sorted([a_done.verdict.to_line(), b_done.verdict.to_line()])
    by_tree, problems = read_verdicts(merged.ctx.repo, a_done.verdict.head_tree)
    assert not problems
    assert {v.recorded_by for v in by_tree} == {
        "Test User <test@example.invalid>",
        "Other Reviewer <other@example.invalid>",
    }
    shown = verify.show_verdicts(open_context(merged.repo), head)
    assert len(shown.verdicts) == 2 and all(s.same_commit for s in shown.verdicts)


def _keypair(folder: Path, name: str) -> Path:
    key = folder / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


def test_signed_verdict_verifies_and_a_tampered_line_does_not(merged: World, tmp_path: Path):
    key = _keypair(tmp_path, "reviewer")
    stranger = _keypair(tmp_path, "stranger")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"test@example.invalid {key.with_suffix('.pub').read_text()}")
    git(merged.repo, "config", "user.signingKey", str(key))
    git(merged.repo, "config", "gpg.ssh.allowedSignersFile", str(allowed))

    report = write_report(merged, tmp_path / "data.json")
    proc = okstra(merged.repo, "verify", "record", KEY, "--verdict", "accepted",
                  "--report", str(report), "--sign")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    head = git(merged.task_wt, "rev-parse", "HEAD")
    [verdict], _ = read_verdicts(merged.ctx.repo, head)
    assert verdict.signature and signing.verify_signature(verdict, str(allowed))
    assert "signature: good by test@example.invalid" in okstra(merged.repo, "verify", "show",
                                                                head).stdout  # fmt: skip

    # Someone edits the stored line (blocked → accepted would be the attack; here the count).
    line = git(merged.repo, "notes", "--ref", "okstra/verdicts", "show", head)
    tampered = line.replace('"blockerCount":0', '"blockerCount":3').replace(
        '"verdict":"accepted"', '"verdict":"blocked"'
    )
    assert tampered != line
    (tmp_path / "note").write_text(tampered + "\n")
    git(merged.repo, "notes", "--ref", "okstra/verdicts", "add", "-f", "-F",
        str(tmp_path / "note"), head)  # fmt: skip
    [edited], _ = read_verdicts(open_context(merged.repo).repo, head)
    assert edited.verdict == "blocked"
    assert not signing.verify_signature(edited, str(allowed))
    shown = json.loads(okstra(merged.repo, "verify", "show", head, "--json").stdout)
    # The edited line is BAD; the untouched copy on the tree note still verifies.
    statuses = {(v["verdict"], v["signatureStatus"]) for v in shown["verdicts"]}
    assert statuses == {("blocked", "bad"), ("accepted", "good")}

    # A genuine signature by a key not in the allowed signers file does not count either.
    git(merged.repo, "config", "user.signingKey", str(stranger))
    proc = okstra(merged.repo, "verify", "record", KEY, "--verdict", "accepted",
                  "--report", str(report), "--sign", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    by_stranger = from_data(Verdict, json.loads(proc.stdout)["verdict"], "verify record --json")
    assert by_stranger in read_verdicts(merged.ctx.repo, head)[0]
    assert not signing.verify_signature(by_stranger, str(allowed))
    check = signing.check(by_stranger.signed_payload(), by_stranger.signature or "", None)
    assert check.good  # intact, just not by an allowed signer


def test_sign_without_a_signing_key_is_bad_input(merged: World, tmp_path: Path):
    report = write_report(merged, tmp_path / "data.json")
    with pytest.raises(BadInput, match=r"user\.signingKey"):
        verify.record_verdict(merged.ctx, merged.key, "accepted", str(report), None, sign=True)
    git(merged.repo, "config", "user.signingKey", str(tmp_path / "missing"))
    with pytest.raises(BadInput, match="not a file"):
        verify.record_verdict(merged.ctx, merged.key, "accepted", str(report), None, sign=True)
    assert merged.ctx.repo.read_ref(VERDICTS_REF) is None


def test_notes_written_by_git_at_any_fanout_are_read_and_rewritten(repo: Path):
    """Past ~65k notes git fans out 2/2/36; a verdict note there is still found and updated,
    and plain git still reads every note afterwards."""
    g = GitRepo.open(repo)
    head = git(repo, "rev-parse", "HEAD")
    other = git(repo, "rev-parse", "HEAD^{tree}")
    deep = {f"{t[:2]}/{t[2:4]}/{t[4:]}": f'{{"n":"{t[:4]}"}}\n'.encode() for t in (head, other)}
    tree = g.tree_with(None, deep)
    g.update_refs([RefUpdate(VERDICTS_REF, g.commit(tree, [], "git-made notes"), None)], "test")
    assert g.read_note(VERDICTS_REF, head) == f'{{"n":"{head[:4]}"}}\n'.encode()
    assert g.add_note_lines(VERDICTS_REF, head, ['{"n":"new"}'], "add")
    assert g.read_note(VERDICTS_REF, head) == f'{{"n":"{head[:4]}"}}\n{{"n":"new"}}\n'.encode()
    notes = g.files_of(g.read_ref(VERDICTS_REF))  # path → blob
    assert f"{head[:2]}/{head[2:4]}/{head[4:]}" not in notes  # moved, not duplicated
    assert git(repo, "notes", "--ref", "okstra/verdicts", "show", head).splitlines() == [
        f'{{"n":"{head[:4]}"}}',
        '{"n":"new"}',
    ]
    assert git(repo, "notes", "--ref", "okstra/verdicts", "show", other) == f'{{"n":"{other[:4]}"}}'
