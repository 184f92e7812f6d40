"""`git okstra sync` and claims through a shared remote (docs/storage.md, docs/workflow.md), with
real clones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from claims_world import approved_task
from conftest import git, okstra
from hooks_world import add_verdict, commit, pair, remote_ref
from sync_world import KEY, TASK_REF, new_task, refs, sync_json, wide_plan

from okstra_git.git.repo import GitRepo, RefUpdate
from okstra_git.records.verdict import VERDICTS_REF
from okstra_git.services import claims
from okstra_git.services.claims import remote as remote_claims
from okstra_git.services.context import open_context
from okstra_git.services.sync import engine as sync
from okstra_git.services.sync import transport

CLAIMS = "refs/okstra/claims/g/i/"


def test_sync_publishes_refs_and_notes_and_another_clone_receives_them(tmp_path: Path):
    a, remote = pair(tmp_path, "a")
    b, _ = pair(tmp_path, "b")
    new_task(a)
    head = commit(a, "work")
    add_verdict(a)

    out = sync_json(a, "origin")
    assert set(out["pushed"]) == {TASK_REF, VERDICTS_REF}
    assert remote_ref(remote, TASK_REF) == git(a, "rev-parse", TASK_REF)
    assert remote_ref(remote, VERDICTS_REF) == git(a, "rev-parse", VERDICTS_REF)
    # The tracking refs now say what the remote holds.
    assert git(a, "rev-parse", "refs/okstra-remotes/origin/tasks/g/i") == git(
        a, "rev-parse", TASK_REF
    )

    out = sync_json(b)  # the default remote is origin
    states = {r["ref"]: r["state"] for r in out["refs"]}
    assert states == {TASK_REF: "fetched", VERDICTS_REF: "fetched"}
    assert out["pushed"] == []
    git(b, "fetch", "-q", "origin", "main")
    assert git(b, "notes", "--ref", "okstra/verdicts", "show", head)  # plain git reads it
    # Nothing left to do: a second sync changes nothing.
    again = sync_json(b)
    assert again["refs"] == [] and again["pushed"] == [] and again["unchanged"] == 2


def test_diverged_notes_merge_like_cat_sort_uniq(tmp_path: Path):
    a, remote = pair(tmp_path, "a")
    b, _ = pair(tmp_path, "b")
    head = commit(a, "shared")
    git(a, "push", "-q", "origin", "HEAD:refs/heads/shared")
    git(b, "fetch", "-q", "origin", "shared")
    git(b, "checkout", "-q", "FETCH_HEAD")
    add_verdict(a, verdict="conditional-accept")
    # A line is split at \n only: U+2028 may stand raw in a JSON string (ensure_ascii=False).
    tree = git(a, "rev-parse", f"{head}^{{tree}}")
    odd = '{"recordedBy":"A\u2028B"}'
    GitRepo.open(a).add_notes_lines(VERDICTS_REF, {head: [odd], tree: [odd]}, "odd line")
    add_verdict(b)  # a different line on the same commit (and tree)
    other = commit(b, "only in b")
    add_verdict(b, rev=other, verdict="blocked")
    sync_json(a)

    # What git itself makes of the two notes refs, in a scratch ref of b.
    git(b, "fetch", "-q", "origin", f"{VERDICTS_REF}:refs/notes/theirs")
    git(b, "update-ref", "refs/notes/gitmerge", VERDICTS_REF)
    git(b, "notes", "--ref", "gitmerge", "merge", "-q", "-s", "cat_sort_uniq", "refs/notes/theirs")

    out = sync_json(b)
    states = {r["ref"]: r["state"] for r in out["refs"]}
    assert states[VERDICTS_REF] == "merged" and out["pushed"] == [VERDICTS_REF]
    ours = git(b, "notes", "--ref", "okstra/verdicts", "show", head)
    assert ours == git(b, "notes", "--ref", "gitmerge", "show", head)
    lines = ours.split("\n")
    assert len(lines) == 3 and lines == sorted(lines) and odd in lines
    assert git(b, "notes", "--ref", "okstra/verdicts", "show", tree) == ours
    assert "blocked" in git(b, "notes", "--ref", "okstra/verdicts", "show", other)
    merge = git(b, "rev-parse", VERDICTS_REF)
    assert len(git(b, "rev-list", "--parents", "-n1", merge).split()) == 3  # a merge commit
    assert remote_ref(remote, VERDICTS_REF) == merge

    # a fast-forwards to the merge: never a force-overwrite.
    out = sync_json(a)
    assert {r["ref"]: r["state"] for r in out["refs"]}[VERDICTS_REF] == "fast-forwarded"
    assert git(a, "rev-parse", VERDICTS_REF) == merge


def test_push_only_with_a_stale_view_lands_nothing(tmp_path: Path):
    a, remote = pair(tmp_path, "a")
    b, _ = pair(tmp_path, "b")
    new_task(a)
    sync_json(a)
    new_task(b, kind="error-analysis")  # the same key, created apart: must not replace a's
    proc = okstra(b, "sync", "--push-only")
    assert proc.returncode == 3 and "without --push-only" in proc.stderr
    assert remote_ref(remote, TASK_REF) == git(a, "rev-parse", TASK_REF)
    # --fetch-only never pushes, and reports the conflict (the task was created on both).
    proc = okstra(b, "sync", "--fetch-only")
    assert proc.returncode == 1 and "created on both sides" in proc.stderr
    assert okstra(b, "sync", "--fetch-only", "--push-only").returncode == 2


def test_a_remote_hook_refusal_is_reported_not_retried(tmp_path: Path):
    a, remote = pair(tmp_path, "a")
    new_task(a)
    hook = remote / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'no okstra data here' >&2\nexit 1\n")
    hook.chmod(0o755)
    proc = okstra(a, "sync")
    assert proc.returncode == 1 and "refused okstra's refs" in proc.stderr
    assert remote_ref(remote, TASK_REF) is None


def test_unknown_remote_is_bad_input(repo: Path):
    proc = okstra(repo, "sync", "nowhere")
    assert proc.returncode == 2 and "'nowhere' is not configured" in proc.stderr
    proc = okstra(repo, "sync")
    assert proc.returncode == 2 and "no remote" in proc.stderr


def test_init_remote_makes_plain_fetch_bring_okstra_data_and_bad_input_writes_nothing(
    tmp_path: Path,
):
    a, _remote = pair(tmp_path, "a")
    new_task(a)
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    git(b, "config", "--add", "okstra.protect", "refs/heads/keep")
    before = git(b, "config", "--list", "--local")
    for args in (
        ("--protect", "refs/heads/x", "--protect", "refs/heads/mai["),  # the second is bad
        ("--project-id", "p", "--remote", "nowhere"),  # the remote is bad
    ):
        proc = okstra(b, "init", *args)
        assert proc.returncode == 2, proc.stderr
        assert git(b, "config", "--list", "--local") == before

    assert okstra(b, "init", "--remote", "origin").returncode == 0
    assert okstra(b, "init", "--remote", "origin").stdout == "nothing to change\n"
    git(b, "fetch", "-q")
    # Into the tracking namespace only: sync decides what local refs become.
    assert git(b, "rev-parse", "refs/okstra-remotes/origin/tasks/g/i") == git(
        a, "rev-parse", TASK_REF
    )
    assert refs(b, "refs/okstra/") == {}


def test_init_makes_plain_git_notes_merge_and_status_work(tmp_path: Path):
    """After init, plain git merges two clones' verdict notes (cat_sort_uniq, no conflict) and
    `.okstra/` stays out of `git status`, in a linked worktree too."""
    a, _ = pair(tmp_path, "a")
    b, _ = pair(tmp_path, "b")
    for clone in (a, b):
        proc = okstra(clone, "init", "--remote", "origin", "--json")
        assert proc.returncode == 0, proc.stderr
    config = json.loads(proc.stdout)["config"]
    assert config["notes.okstra/verdicts.mergeStrategy"] == "cat_sort_uniq"
    assert config["notes.okstra/approvals.mergeStrategy"] == "cat_sort_uniq"
    mine = add_verdict(a, key="p:g:mine")
    add_verdict(b, key="p:g:theirs")
    git(a, "push", "-q", "origin", VERDICTS_REF)
    git(b, "fetch", "-q", "origin")  # init's refspecs bring the notes to the tracking ref
    merged = subprocess.run(
        ["git", "notes", "--ref", "okstra/verdicts", "merge",
         "refs/notes/okstra-remotes/origin/verdicts"],
        cwd=b, text=True, capture_output=True,
    )  # fmt: skip
    assert merged.returncode == 0, merged.stdout + merged.stderr
    lines = git(b, "notes", "--ref", "okstra/verdicts", "show", mine.head).splitlines()
    assert sorted(json.loads(line)["taskKey"] for line in lines) == ["p:g:mine", "p:g:theirs"]

    linked = tmp_path / "linked"
    git(b, "worktree", "add", "-q", "-b", "side", str(linked))
    for tree in (b, linked):
        (tree / ".okstra" / "tasks").mkdir(parents=True)
        (tree / ".okstra" / "tasks" / "view.md").write_text("x\n")
        assert git(tree, "status", "--porcelain") == ""
    exclude = (b / ".git" / "info" / "exclude").read_text()
    assert exclude.count("/.okstra/") == 1


def test_push_leased_reports_a_lost_race(tmp_path: Path):
    a, remote = pair(tmp_path, "a")
    b, _ = pair(tmp_path, "b")
    new_task(a)
    sync_json(a)
    new_task(b, kind="error-analysis")
    grepo = GitRepo.open(b)
    mine = grepo.read_ref(TASK_REF)
    outcome = transport.push_leased(grepo, "origin", [RefUpdate(TASK_REF, mine, None)])
    assert not outcome.ok and outcome.lost_race
    assert remote_ref(remote, TASK_REF) == git(a, "rev-parse", TASK_REF)


# -- claims through the shared remote ---------------------------------------------------------


@pytest.fixture
def two_machines(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two clones of one remote holding an approved task; each names its own user."""
    a, remote = pair(tmp_path, "a")
    approved_task(a, KEY, wide_plan(40))
    sync_json(a)
    b, _ = pair(tmp_path, "b")
    git(b, "config", "okstra.worktreeRoot", str(tmp_path / "wt-b"))
    sync_json(b)
    for clone, name in ((a, "Alice"), (b, "Bob")):
        git(clone, "config", "user.name", name)
    return a, b, remote


def test_a_claim_that_loses_on_the_remote_is_undone_and_reselected(two_machines, monkeypatch):
    a, b, remote = two_machines
    won = claims.claim(open_context(a), open_context(a).key(KEY), worktrees=False)
    assert remote_claims.push_claims_atomically(
        open_context(a),
        "origin",
        [RefUpdate(r, v, None) for r, v in refs(a, CLAIMS).items()]
        + [RefUpdate(TASK_REF, git(a, "rev-parse", TASK_REF), None)],
    )
    assert [p.stage for p in won.stages] == [1]
    before = {**refs(b, CLAIMS), **refs(b, TASK_REF)}

    # b's first round works from a stale view (its fetch "misses" a's claim), as if both
    # machines had fetched at the same moment: it claims stage 1 too, locally.
    real_pull = sync.pull
    calls: list[dict[str, str]] = []

    def pull(ctx, remote_name):
        if not calls:
            calls.append({})
            return sync.SyncReport(remote_name)
        calls.append({**refs(b, CLAIMS), **refs(b, TASK_REF)})
        return real_pull(ctx, remote_name)

    monkeypatch.setattr(remote_claims, "pull", pull)
    ctx = open_context(b)
    result = remote_claims.claim_via_remote(ctx, "origin", ctx.key(KEY))
    # The push lost, the local claim was put back exactly, then b chose again.
    assert calls[1] == before
    assert [p.stage for p in result.stages] == [2]
    # Worktrees come after the push: none was ever made for the stage b lost.
    stages_dir = b.parent / "wt-b" / "p" / "g" / "i"
    assert (stages_dir / "stage-2").is_dir() and not (stages_dir / "stage-1").exists()
    assert "okstra/g/i/stage-1" not in git(b, "branch", "--list", "okstra/*")
    assert refs(b, CLAIMS) == refs(remote, CLAIMS)
    assert remote_ref(remote, TASK_REF) == git(b, "rev-parse", TASK_REF)
    stage1 = json.loads(git(remote, "show", f"{CLAIMS}stage-1:claim.json"))
    assert stage1["user"].startswith("Alice")


ROUNDS = 8


@pytest.mark.slow
def test_two_clones_claiming_at_once_never_share_a_stage(two_machines):
    a, b, remote = two_machines
    env = {**os.environ, "OKSTRA_DEBUG": ""}
    argv = [sys.executable, "-m", "okstra_git", "stage", "claim", KEY, "--remote", "origin"]
    argv += ["--no-worktree", "--json"]
    owners: dict[int, str] = {}
    reselected = 0
    # 8 rounds of two real processes racing through the remote; the lost-race path itself is
    # pinned down deterministically above (a_claim_that_loses_on_the_remote…).
    for _round in range(ROUNDS):
        procs = {
            name: subprocess.Popen(argv, cwd=clone, env=env, text=True, stdout=-1, stderr=-1)
            for name, clone in (("Alice", a), ("Bob", b))
        }
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            reselected += "claimed first" in err
            (stage,) = json.loads(out)["stages"]
            assert stage not in owners, f"stage {stage} claimed twice"
            owners[stage] = name
        # Neither clone holds a claim the remote does not: the loser ended clean.
        on_remote = refs(remote, CLAIMS)
        for clone in (a, b):
            assert refs(clone, CLAIMS).items() <= on_remote.items()
    assert sorted(owners) == list(range(1, 2 * ROUNDS + 1))
    for stage, name in owners.items():
        record = json.loads(git(remote, "show", f"{CLAIMS}stage-{stage}:claim.json"))
        assert record["user"].startswith(name) and record["status"] == "started"
    print(f"{reselected} of {ROUNDS} rounds had a claim lose on the remote and choose again")


def many_tasks(repo: Path, count: int, group: str = "g") -> None:
    """``count`` valid task refs, one event each, in groups ``<group>0``…``<group>9``, written
    by ``git fast-import``."""
    lines = []
    for n in range(count):
        data = json.dumps(
            {
                "schemaVersion": 1,
                "taskKey": f"p:{group}{n % 10}:t{n}",
                "projectId": "p",
                "taskGroup": f"{group}{n % 10}",
                "taskId": f"t{n}",
                "taskType": "error-analysis",
                "workCategory": "feature",
                "currentStatus": "active",
                "createdAt": "x",
                "updatedAt": "x",
                "workflow": {
                    "currentPhase": "error-analysis",
                    "currentPhaseState": "pending",
                    "phaseStates": {},
                    "awaitingApproval": False,
                    "routingStatus": "ready",
                },
            }
        )
        lines += [
            f"commit refs/okstra/tasks/{group}{n % 10}/t{n}",
            "committer T <t@x> 1700000000 +0000",
            "data 8",
            "task new",
            "M 100644 inline task.json",
            f"data {len(data.encode())}",
            data,
            "",
        ]
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input="\n".join(lines) + "\n",
                   text=True, check=True)  # fmt: skip


def logging_git(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment whose ``git`` logs its argument count and arguments, and the log."""
    log = tmp_path / "argv.log"
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    real = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    shim.write_text(f'#!/bin/sh\necho "$#" "$@" >> {log}\nexec {real} "$@"\n')
    shim.chmod(0o755)
    return {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}"}, log


def test_the_push_command_line_does_not_grow_with_the_number_of_refs(tmp_path: Path):
    """500 tasks published by one sync: git is run with the same few arguments as for one."""
    a, remote = pair(tmp_path, "a")
    many_tasks(a, 500)
    env, log = logging_git(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "okstra_git", "sync", "--json"], cwd=a, env=env,
                          text=True, capture_output=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["pushed"]) == 500
    assert len(refs(remote, "refs/okstra/tasks/")) == 500
    pushes = [line for line in log.read_text().splitlines() if " push " in f" {line} "]
    assert pushes and all(int(line.split()[0]) <= 8 for line in pushes), pushes


def test_a_sync_in_step_at_scale_asks_for_the_ref_list_and_fetches_nothing(tmp_path: Path):
    """From PROBE_FROM refs on, a sync in step lists the remote's refs instead of fetching; a
    change there (a ref deleted) brings the fetch back, and sync publishes the ref again. From
    BULK_REFS on, tracking refs after a push and the refs a fresh clone adopts are written into
    packed-refs at once."""
    a, remote = pair(tmp_path, "a")
    count = max(transport.PROBE_FROM, transport.BULK_REFS)
    many_tasks(a, count)
    assert len(sync_json(a)["pushed"]) == count
    tracking = refs(a, "refs/okstra-remotes/origin/tasks/")
    assert len(tracking) == count and not (a / ".git" / "refs" / "okstra-remotes").exists()
    assert {n.replace("okstra-remotes/origin", "okstra"): v for n, v in tracking.items()} == refs(
        remote, "refs/okstra/tasks/"
    )
    env, log = logging_git(tmp_path)

    def run_sync() -> tuple[dict, list[str]]:
        log.write_text("")
        proc = subprocess.run([sys.executable, "-m", "okstra_git", "sync", "--json"], cwd=a,
                              env=env, text=True, capture_output=True)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout), [line.split()[1] for line in log.read_text().splitlines()]

    report, commands = run_sync()
    assert report["unchanged"] == count and report["pushed"] == [] and report["fetched"]
    assert "ls-remote" in commands and "fetch" not in commands and "push" not in commands
    gone = "refs/okstra/tasks/g3/t13"
    git(remote, "update-ref", "-d", gone)
    report, commands = run_sync()
    assert "fetch" in commands and report["pushed"] == [gone]
    assert remote_ref(remote, gone) == git(a, "rev-parse", gone)
    assert refs(a, "refs/okstra-remotes/origin/tasks/") == tracking
    # A fresh clone adopts them all in one packed-refs write too.
    b, _ = pair(tmp_path, "b")
    assert sync_json(b, "--fetch-only")["unchanged"] == 0
    assert refs(b, "refs/okstra/tasks/") == refs(remote, "refs/okstra/tasks/")
    assert not (b / ".git" / "refs" / "okstra").exists()


def test_a_first_sync_of_a_large_remote_fetches_by_id_and_packs_its_tracking_refs(
    tmp_path: Path,
):
    """From BULK_REFS changed tracking refs on, the fetch asks for the commits ls-remote
    listed and writes the tracking refs in one packed-refs write (git fetch writes a loose
    file each): the same refs and objects as git's fetch, connectivity checked, the records
    checked as ever; refs gone there are pruned, and fewer changes go through git's fetch."""
    a, remote = pair(tmp_path, "a")
    count = max(transport.PROBE_FROM, transport.BULK_REFS)
    many_tasks(a, count)
    new_task(a, "p:g:solo")
    add_verdict(a)
    assert len(sync_json(a)["pushed"]) == count + 2
    b, _ = pair(tmp_path, "b")
    many_tasks(b, count, "h")  # enough here to ask the remote for its list first
    env, log = logging_git(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "okstra_git", "sync", "--json", "--fetch-only"],
                          cwd=b, env=env, text=True, capture_output=True)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    commands = log.read_text().splitlines()
    fetches = [line for line in commands if " fetch " in f" {line} "]
    assert len(fetches) == 1 and "--stdin" in fetches[0], commands
    theirs = refs(remote, "refs/okstra/")
    tracking = refs(b, "refs/okstra-remotes/origin/")
    assert {n.replace("okstra-remotes/origin", "okstra"): v for n, v in tracking.items()} == theirs
    assert not (b / ".git" / "refs" / "okstra-remotes").exists()  # packed, no loose file
    notes = refs(b, "refs/notes/okstra-remotes/origin/")
    assert notes and notes == {
        n.replace("okstra/", "okstra-remotes/origin/"): v
        for n, v in refs(remote, "refs/notes/okstra/").items()
    }
    assert refs(b, "refs/okstra/tasks/g") == refs(remote, "refs/okstra/tasks/g")
    assert git(b, "rev-list", "--objects", "--all", "--quiet") == ""  # every object here
    # Most refs gone there (another clone deleted them): pruned here on the next sync.
    gone = sorted(refs(remote, "refs/okstra/tasks/g"))[1:]
    deletes = "".join(f"delete {name}\n" for name in gone)
    subprocess.run(["git", "update-ref", "--stdin"], cwd=remote, input=deletes, text=True,
                   check=True)  # fmt: skip
    assert sync_json(b, "--fetch-only")["fetched"]
    left = refs(b, "refs/okstra-remotes/origin/tasks/g")
    assert len(left) == 1, len(left)


def test_sync_sums_up_by_kind_of_ref_lists_every_ref_with_v_and_json_is_unchanged(
    tmp_path: Path,
):
    """Like git fetch: one line per kind of ref with the counts by default, however many
    refs; every ref by name with -v; --json lists every ref either way."""
    a, _ = pair(tmp_path, "a")
    b, _ = pair(tmp_path, "b")
    for n in range(3):
        new_task(a, f"p:g:t{n}")
    add_verdict(a)
    first = okstra(a, "sync", "origin")
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        "okstra sync with origin (fetched, 1 attempt)",
        "  tasks: 3 only here; 3 pushed",
        "  notes: 1 only here; 1 pushed",
        "0 ref(s) already in step; 4 pushed",
    ]
    new_task(b, "p:h:mine")
    verbose = okstra(b, "sync", "origin", "-v")
    assert verbose.returncode == 0, verbose.stderr
    lines = verbose.stdout.splitlines()
    assert lines[0] == "okstra sync with origin (fetched, 1 attempt)"
    assert [line.split(":")[0] for line in lines[1:-1]] == [
        "  refs/okstra/tasks/g/t0",
        "  refs/okstra/tasks/g/t1",
        "  refs/okstra/tasks/g/t2",
        "  refs/okstra/tasks/h/mine",
        "  refs/notes/okstra/verdicts",
    ]
    mine = git(b, "rev-parse", "refs/okstra/tasks/h/mine")[:12]
    assert lines[-3] == f"  refs/okstra/tasks/h/mine: not on the remote yet ({mine}); pushed"
    assert lines[-1] == "0 ref(s) already in step; 1 pushed"
    new_task(a, "p:g:t3")
    data = sync_json(a, "origin")  # every ref by name, as before
    states = {r["ref"]: r["state"] for r in data["refs"]}
    assert states == {"refs/okstra/tasks/h/mine": "fetched", "refs/okstra/tasks/g/t3": "local-only"}
    assert sync_json(a, "origin") == sync_json(a, "origin", "-v")  # in step: -v changes no JSON


def test_sync_shows_progress_on_a_terminal_only(tmp_path: Path):
    """git's progress meters (the fetch's, the push's) and okstra's own, in git's style, on
    stderr when it is a terminal; nothing there otherwise. GIT_PROGRESS_DELAY=0: meters show
    at once instead of after two seconds."""
    import pty

    a, _ = pair(tmp_path, "a")
    b, _ = pair(tmp_path, "b")
    for n in range(30):
        new_task(a, f"p:g:t{n}")
    env = {**os.environ, "GIT_PROGRESS_DELAY": "0"}
    quiet = okstra(a, "sync", "origin", env=env)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    main, side = pty.openpty()
    argv = [sys.executable, "-m", "okstra_git", "sync", "origin"]
    proc = subprocess.Popen(argv, cwd=b, env=env, stdout=subprocess.PIPE, stderr=side)
    os.close(side)
    said = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        said += chunk
    os.close(main)
    out, _ = proc.communicate()
    assert proc.returncode == 0, said
    assert b"remote: Counting objects: 100% (" in said, said  # the fetch, as git shows it
    assert b"Reconciling okstra tasks: 100% (30/30), done.\r\n" in said, said
    assert out.decode().splitlines()[1] == "  tasks: 30 fetched"
