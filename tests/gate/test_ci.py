"""`git okstra ci check` (docs/hooks.md): exit codes, formats, --fetch, --task, signed verdicts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from conftest import git, okstra
from hooks_world import KEY, add_verdict, commit, pair

from okstra_git.gate import signing
from okstra_git.git.repo import GitRepo, RefUpdate
from okstra_git.records.verdict import VERDICTS_REF, append_verdict


def check(repo: Path, *args: str, env: dict[str, str] | None = None):
    """``git okstra ci check ARGS`` in this process (what it loads is test_cli's to check)."""
    return okstra(repo, "ci", "check", *args, env={**os.environ, **(env or {})})


def test_exit_0_only_for_an_accepted_whole_task_verdict(repo: Path):
    head = git(repo, "rev-parse", "HEAD")
    proc = check(repo)
    assert proc.returncode == 1
    assert proc.stdout.startswith(f"okstra gate FAILED: {head[:12]} does not pass")
    add_verdict(repo, verdict="conditional-accept")
    add_verdict(repo, scope="single-stage", stages=(1,))
    assert check(repo).returncode == 1
    add_verdict(repo)
    proc = check(repo, "HEAD")
    assert proc.returncode == 0, proc.stdout
    assert f"okstra gate passed: {head[:12]} carries an accepted whole-task verdict" in (
        proc.stdout
    )
    assert KEY in proc.stdout


def test_json_flag_gives_the_report_as_one_object_with_ok(repo: Path):
    """`ci check --json` is the CLI-wide --json: the report plus ok, and on failure the error
    fields; --format json keeps the report's own shape."""
    proc = check(repo, "--json")
    assert proc.returncode == 1
    failed = json.loads(proc.stdout)
    assert failed["ok"] is False and failed["passed"] is False and failed["exitCode"] == 1
    assert failed["error"] == failed["message"] and "hint" in failed
    add_verdict(repo)
    passed = json.loads(check(repo, "--json").stdout)
    assert passed["ok"] is True and passed["passed"] is True and "exitCode" not in passed
    assert "ok" not in json.loads(check(repo, "--format", "json").stdout)


def test_json_report(repo: Path):
    add_verdict(repo, verdict="blocked")
    proc = check(repo, "--format", "json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["passed"] is False and report["verdict"] is None
    assert report["rejected"][0]["why"] == "is blocked, not accepted"
    assert report["notes"] == ["refs/notes/okstra/verdicts"]
    add_verdict(repo)
    report = json.loads(check(repo, "--format", "json").stdout)
    assert report["passed"] is True and report["verdict"]["verdict"] == "accepted"
    assert report["commit"] == git(repo, "rev-parse", "HEAD")


def test_junit_output_parses_as_xml(repo: Path, tmp_path: Path):
    out = tmp_path / "okstra-gate.xml"
    proc = check(repo, "--format", "junit", "--output", str(out))
    assert proc.returncode == 1 and proc.stdout == ""
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites" and root.get("failures") == "1"
    (case,) = root.iter("testcase")
    failure = case.find("failure")
    assert failure is not None and "needs an accepted whole-task verdict" in (failure.text or "")
    add_verdict(repo)
    proc = check(repo, "--format", "junit")
    assert proc.returncode == 0
    root = ET.fromstring(proc.stdout)
    assert root.get("failures") == "0" and next(root.iter("testcase")).find("failure") is None
    # One test name on every commit (CI history follows it); the commit is a suite property.
    first = next(root.iter("testcase")).get("name")
    git(repo, "commit", "-q", "--allow-empty", "-m", "next")
    root = ET.fromstring(check(repo, "--format", "junit").stdout)
    assert next(root.iter("testcase")).get("name") == first == "accepted whole-task verdict"
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["commit"] == git(repo, "rev-parse", "HEAD")


def test_github_writes_the_step_summary_and_error_annotation(repo: Path, tmp_path: Path):
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(summary)}
    proc = check(repo, "--format", "github", env=env)
    assert proc.returncode == 1
    (line,) = proc.stdout.splitlines()  # one annotation; its newlines are escaped
    assert line.startswith("::error title=okstra verification gate::") and "%0A" in line
    text = summary.read_text()
    assert text.startswith("# earlier step\n")  # appended, never overwritten
    assert "## okstra verification gate: failed" in text
    add_verdict(repo)
    proc = check(repo, "--format", "github", env=env)
    assert proc.returncode == 0 and proc.stdout.startswith("::notice ")
    assert "## okstra verification gate: passed" in summary.read_text()
    assert f"| verdict | accepted (whole-task) for {KEY} |" in summary.read_text()


def github_outputs(path: Path) -> dict[str, str]:
    """``$GITHUB_OUTPUT`` read as the runner reads it: ``name=value`` and ``name<<DELIM``."""
    found, lines = {}, iter(path.read_text().splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            found[name] = "\n".join(iter(lambda: next(lines), delimiter))
        else:
            name, value = line.split("=", 1)
            found[name] = value
    return found


def test_github_writes_step_outputs(repo: Path, tmp_path: Path):
    outputs = tmp_path / "output"
    outputs.write_text("earlier=1\n")
    head = git(repo, "rev-parse", "HEAD")
    proc = check(repo, "--format", "github", env={"GITHUB_OUTPUT": str(outputs)})
    assert proc.returncode == 1
    found = github_outputs(outputs)
    assert found["earlier"] == "1"  # appended
    assert found["passed"] == "false" and found["commit"] == head and found["verdict"] == ""
    assert "does not pass the verification gate" in found["message"]
    assert "\n" in found["message"]  # a message of several lines, whole
    add_verdict(repo)
    proc = check(repo, "--format", "github", env={"GITHUB_OUTPUT": str(outputs)})
    assert proc.returncode == 0
    found = github_outputs(outputs)  # the later value of a name wins, as on the runner
    assert found["passed"] == "true" and found["verdict"] == "accepted" and found["task"] == KEY


@pytest.mark.parametrize(
    "args",
    [("no-such-rev",), ("--bogus",), ("HEAD", "--task", "not a key")],
    ids=["bad rev", "unknown option", "bad task key"],
)
def test_github_reports_usage_errors_as_error_annotations(repo: Path, args: tuple[str, ...]):
    for form in (("--format", "github"), ("--format=github",)):
        proc = check(repo, *form, *args)
        assert proc.returncode == 2, proc.stderr
        (line,) = proc.stdout.splitlines()
        assert line.startswith("::error title=git okstra ci check::"), proc.stdout
        assert proc.stderr.startswith("git okstra: ")  # and said as always
    assert check(repo, *args).stdout == ""  # other formats: stderr only


def test_fetch_reads_the_remote_notes_into_the_tracking_namespace(tmp_path: Path):
    work, _remote = pair(tmp_path)
    head = commit(work, "verified")
    add_verdict(work)
    git(work, "push", "-q", "origin", "main", "refs/notes/okstra/verdicts")
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), str(fresh))
    assert check(fresh).returncode == 1
    proc = check(fresh, "--fetch", "origin", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["notes"] == ["refs/notes/okstra-remotes/origin/verdicts"]
    assert report["verdict"]["head"] == head
    # The fetch never wrote the local notes ref.
    assert git(fresh, "for-each-ref", "refs/notes/okstra/") == ""
    # Packed (git gc does it), the copy is read from packed-refs, by a check that starts no
    # for-each-ref.
    git(fresh, "pack-refs", "--all")
    assert not (fresh / ".git" / "refs" / "notes" / "okstra-remotes" / "origin").exists()
    trace = tmp_path / "trace"
    proc = check(fresh, "--format", "json", env={"GIT_TRACE": str(trace)})
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["notes"] == ["refs/notes/okstra-remotes/origin/verdicts"]
    started = trace.read_text()
    assert "cat-file" in started and "for-each-ref" not in started
    proc = check(fresh, "--fetch", "nowhere")
    assert proc.returncode == 2 and "'nowhere' is not configured" in proc.stderr


def test_notes_git_fanned_out_2_2_36_are_read(repo: Path):
    """Past ~65k notes git rewrites a notes tree as 2/2/36; the gate finds verdicts there, on
    the commit and (a reworded commit, same tree) on the tree."""
    verdict = add_verdict(repo)
    g = GitRepo.open(repo)
    deep = {
        f"{t[:2]}/{t[2:4]}/{t[4:]}": g.read_note(VERDICTS_REF, t)
        for t in (verdict.head, verdict.head_tree)
    }
    old = g.read_ref(VERDICTS_REF)
    notes = g.commit(g.tree_with(None, deep), [old], "as git fans out past ~65k notes")
    g.update_refs([RefUpdate(VERDICTS_REF, notes, old)], "test")
    assert check(repo).returncode == 0
    git(repo, "commit", "-q", "--amend", "-m", "reworded, same tree")
    proc = check(repo)
    assert proc.returncode == 0, proc.stdout
    assert f"on {verdict.head[:12]} (identical tree" in proc.stdout


def test_task_filter(repo: Path):
    add_verdict(repo, key="proj:other:task")
    proc = check(repo, "--task", KEY)
    assert proc.returncode == 1 and f"is for task proj:other:task, not {KEY}" in proc.stdout
    assert check(repo, "--task", "proj:other:task").returncode == 0
    git(repo, "config", "okstra.projectId", "proj")
    assert check(repo, "--task", "other:task").returncode == 0  # the project id from config


def test_bad_input_is_exit_2(repo: Path):
    proc = check(repo, "no-such-rev")
    assert proc.returncode == 2 and "does not name a commit" in proc.stderr
    assert check(repo, "--format", "yaml").returncode == 2
    assert okstra(repo, "ci", "check", "--help").returncode == 0


def ssh_key(tmp_path: Path, name: str) -> Path:
    key = tmp_path / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key


def test_allowed_signers_only_signed_verdicts_count(repo: Path, tmp_path: Path):
    key, stranger = ssh_key(tmp_path, "signer"), ssh_key(tmp_path, "stranger")
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"test@example.invalid {key.with_suffix('.pub').read_text()}")
    git(repo, "config", "okstra.gate.allowedSigners", str(allowed))

    unsigned = add_verdict(repo)
    proc = check(repo)
    assert proc.returncode == 1 and "is not signed" in proc.stdout and "--sign" in proc.stdout

    grepo = GitRepo.open(repo)
    by_stranger = unsigned.replace(recorded_at="2026-06-06T12:01:00+00:00")
    by_stranger = by_stranger.replace(
        signature=signing.sign(by_stranger.signed_payload(), str(stranger))
    )
    append_verdict(grepo, by_stranger)
    proc = check(repo)
    assert proc.returncode == 1 and "has a signature that no key in" in proc.stdout

    signed = unsigned.replace(recorded_at="2026-06-06T12:02:00+00:00")
    signed = signed.replace(signature=signing.sign(signed.signed_payload(), str(key)))
    append_verdict(grepo, signed)
    assert check(repo).returncode == 0
    git(repo, "config", "okstra.gate.allowedSigners", str(tmp_path / "missing"))
    proc = check(repo)
    assert proc.returncode == 1 and "not a file" in proc.stdout


ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_ci_jobs_pass_on_a_verified_commit(tmp_path: Path):
    """Run every shell step of contrib/'s GitHub and GitLab jobs in a fresh clone, as the CI
    runner would. Installing runs against a `python` that records what pip was asked for: the
    job must refuse without OKSTRA_GIT_SPEC and hand pip exactly the spec the user set."""
    yaml = pytest.importorskip("yaml")
    work, _ = pair(tmp_path)
    head = commit(work, "verified")
    add_verdict(work)
    git(work, "push", "-q", "origin", "main", "refs/notes/okstra/verdicts")
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), str(fresh))
    summary = tmp_path / "summary.md"
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "python").write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$PIP_ARGS"\n')
    (shim / "python").chmod(0o755)
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary), "CI_COMMIT_SHA": head}
    spec = "okstra-git @ git+https://git.example.com/you/okstra-git.git@v0.1.0"

    def run(script: str) -> None:
        step_env = {**env, "PATH": f"{shim}:{env['PATH']}", "PIP_ARGS": str(tmp_path / "pip")}
        if '[ -z "$OKSTRA_GIT_SPEC" ]' in script:
            unset = subprocess.run(["bash", "-ec", script], cwd=fresh, env=step_env, text=True,
                                   capture_output=True)  # fmt: skip
            assert unset.returncode == 1 and "OKSTRA_GIT_SPEC" in unset.stdout + unset.stderr
        step_env["OKSTRA_GIT_SPEC"] = spec
        proc = subprocess.run(["bash", "-ec", script], cwd=fresh, env=step_env, text=True,
                              capture_output=True)  # fmt: skip
        assert proc.returncode == 0, f"{script}\n{proc.stdout}{proc.stderr}"
        if "pip install" in script:
            assert (tmp_path / "pip").read_text().splitlines()[-1] == spec

    workflow = yaml.safe_load((ROOT / "contrib/github-actions/okstra-gate.yml").read_text())
    job = workflow["jobs"]["okstra-gate"]
    assert job["env"]["OKSTRA_GIT_SPEC"] == "${{ vars.OKSTRA_GIT_SPEC }}"
    steps = job["steps"]
    assert steps[0]["with"]["fetch-depth"] == 0
    for step in steps:
        if "run" in step:
            run(step["run"])
    assert "## okstra verification gate: passed" in summary.read_text()

    job = yaml.safe_load((ROOT / "contrib/gitlab-ci/okstra-gate.yml").read_text())["okstra-gate"]
    assert job["variables"]["GIT_DEPTH"] == "0"
    for line in job["before_script"][1:] + job["script"]:  # [0] is apt-get, for the image
        run(line)
    assert ET.parse(fresh / "okstra-gate.xml").getroot().get("failures") == "0"


WORKFLOW = ROOT / "contrib/github-actions/okstra-gate.yml"


@pytest.mark.usefixtures("scripts_on_path")
@pytest.mark.parametrize(
    "argv",
    [
        ["actionlint", "-no-color"],
        ["zizmor", "--offline", "--persona", "pedantic", "--no-progress"],
    ],
    ids=["actionlint", "zizmor"],
)
def test_the_github_workflow_passes_the_linters(argv: list[str]):
    """actionlint (a workflow's types, expressions and shell) and zizmor's strictest persona
    (permissions, persisted credentials, unpinned actions, injection): no finding."""
    if shutil.which(argv[0]) is None:
        pytest.skip(f"{argv[0]} is not installed (it is in the test extra)")
    proc = subprocess.run([*argv, str(WORKFLOW)], text=True, capture_output=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_github_workflow_keeps_the_strict_rules():
    """What the linters are for, checked as such too: no default permissions, every job read
    only with a time limit, every action pinned to a commit, no token left in .git/config."""
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert workflow["permissions"] == {}
    for job in workflow["jobs"].values():
        assert job["permissions"] == {"contents": "read"} and 0 < job["timeout-minutes"] <= 30
        for step in job["steps"]:
            if "uses" in step:
                ref = step["uses"].partition("@")[2]
                assert len(ref) == 40 and all(c in "0123456789abcdef" for c in ref), step
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False
    gitlab = yaml.safe_load((ROOT / "contrib/gitlab-ci/okstra-gate.yml").read_text())
    assert gitlab["okstra-gate"]["timeout"]


@pytest.mark.parametrize(
    ("path", "schema"),
    [
        ("contrib/github-actions/okstra-gate.yml", "vendor.github-workflows"),
        ("contrib/gitlab-ci/okstra-gate.yml", "vendor.gitlab-ci"),
    ],
)
@pytest.mark.usefixtures("scripts_on_path")
def test_the_ci_templates_validate_against_their_platform_schema(
    path: str, schema: str, tmp_path: Path
):
    """check-jsonschema ships GitHub's and GitLab's schemas; a misspelt key must fail it."""
    exe = shutil.which("check-jsonschema")
    if exe is None:
        pytest.skip("check-jsonschema is not installed (it is in the test extra)")

    def lint(file: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, "--builtin-schema", schema, str(file)], text=True,
                              capture_output=True)  # fmt: skip

    proc = lint(ROOT / path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    broken = tmp_path / "broken.yml"
    text = (ROOT / path).read_text()
    broken.write_text(text.replace("runs-on:", "runs_on:").replace("  stage: test", "  stages: 1"))
    assert broken.read_text() != text
    assert lint(broken).returncode != 0
