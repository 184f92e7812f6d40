"""Plans in the task and the approval gate (docs/plan-format.md, docs/workflow.md), against real
repositories and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import git, okstra, race
from plans import BLOCKED_PLAN, BLOCKED_PLAN_CHECKED, DIAMOND_PLAN, LINEAR_PLAN

from okstra_git.core.errors import OkstraError, Refused
from okstra_git.core.shell import okstra as okstra_command
from okstra_git.records.approval import APPROVALS_REF, read_approvals
from okstra_git.services import plans, snapshots
from okstra_git.services.context import open_context

KEY = "p:g:i"
TASK_REF = "refs/okstra/tasks/g/i"
PLAN = "docs/plan.md"


def stored(repo: Path) -> str:
    """Every okstra ref and notes ref with its value: what "nothing stored changed" compares."""
    return git(
        repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/okstra/", "refs/notes/"
    )


def setup_task(repo: Path, text: str, path: str = PLAN) -> Path:
    assert okstra(repo, "task", "new", KEY, "--type", "implementation-planning").returncode == 0
    file = repo / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, "utf-8")
    return file


def submit(repo: Path, path: str = PLAN) -> dict:
    proc = okstra(repo, "plan", "submit", KEY, path, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def note_lines(repo: Path, blob: str) -> list[dict]:
    """The approval note as plain git prints it; every line must be one JSON object."""
    out = git(repo, "notes", "--ref", "okstra/approvals", "show", blob)
    return [json.loads(line) for line in out.splitlines()]


def test_submit_approve_status_round_trip(repo: Path) -> None:
    file = setup_task(repo, LINEAR_PLAN)
    done = submit(repo)
    blob = git(repo, "hash-object", PLAN)
    assert done["plan"] == {"seq": "001", "path": PLAN, "blob": blob} and done["created"]
    manifest = json.loads(git(repo, "show", f"{TASK_REF}:task.json"))
    assert manifest["latestPlan"] == done["plan"]
    assert manifest["currentStatus"] == "awaiting-approval"
    assert manifest["workflow"]["awaitingApproval"] is True
    assert manifest["workflow"]["routingStatus"] == "awaiting-approval"
    assert git(repo, "show", f"{TASK_REF}:plans/plan-001.md") + "\n" == LINEAR_PLAN

    status = okstra(repo, "plan", "status", KEY, "--json")
    assert status.returncode == 1
    assert json.loads(status.stdout)["reasons"] == ["marker-missing"]

    approved = okstra(repo, "plan", "approve", KEY, "--json")
    assert approved.returncode == 0, approved.stderr
    result = json.loads(approved.stdout)
    new_blob = git(repo, "hash-object", PLAN)
    assert result["blob"] == new_blob and result["changedFile"] and not result["alreadyApproved"]
    # Only the marker line changed; the audit line was inserted right after it.
    before, after = LINEAR_PLAN.split("\n"), file.read_text("utf-8").split("\n")
    marker = before.index("- [ ] Approved")
    assert after[:marker] == before[:marker]
    assert after[marker] == "- [x] Approved"
    assert after[marker + 1] == f"- Approved at (CLI ack): {result['approval']['approvedAt']}"
    assert after[marker + 2 :] == before[marker + 1 :]

    manifest = json.loads(git(repo, "show", f"{TASK_REF}:task.json"))
    assert manifest["latestPlan"] == {"seq": "002", "path": PLAN, "blob": new_blob}
    assert manifest["currentStatus"] == "active"
    assert manifest["workflow"]["awaitingApproval"] is False
    assert git(repo, "rev-parse", f"{TASK_REF}:plans/plan-002.md") == new_blob
    [line] = note_lines(repo, new_blob)
    assert line == {
        **result["approval"],
        "method": "B",
        "taskKey": KEY,
        "planPath": PLAN,
        "blob": new_blob,
        "approvedBy": "Test User <test@example.invalid>",
    }

    status = okstra(repo, "plan", "status", KEY, "--json")
    assert status.returncode == 0, status.stdout
    assert json.loads(status.stdout)["approved"] is True
    assert okstra(repo, "run", "start", KEY, "--type", "implementation").returncode == 0


def test_refusal_texts_are_exact_and_store_nothing(repo: Path) -> None:
    setup_task(repo, BLOCKED_PLAN)
    submit(repo)
    before, text = stored(repo), (repo / PLAN).read_bytes()
    proc = okstra(repo, "plan", "approve", KEY)
    assert proc.returncode == 1
    assert proc.stderr == (
        "git okstra: cannot approve: §5 has 1 unresolved Blocks=approval row(s); resolve them "
        "or mark them obsolete before approving:\n"
        "  - C-003 (Status=open)\n"
        f"  file: {PLAN}\n"
        # The refusal's hint is the task's next step (one engine): read the §5 rows to resolve.
        f"hint: git -C {repo} okstra clarify status {repo / PLAN}\n"
    )
    start = okstra(repo, "run", "start", KEY, "--type", "implementation")
    assert start.returncode == 1
    assert start.stderr.startswith(
        f"git okstra: approved plan has no recognised user-approval marker: {PLAN}\n"
        "  canonical form (one line in the approval block at the top): - [x] Approved\n"
        f"  or let okstra check §5 and tick it for you: git okstra plan approve {KEY}\n"
    )
    (repo / PLAN).write_text(BLOCKED_PLAN_CHECKED, "utf-8")
    start = okstra(repo, "run", "start", KEY, "--type", "implementation")
    assert start.returncode == 1
    assert start.stderr == (
        "git okstra: approved plan marker is set but §5 has 1 unresolved Blocks=approval "
        "row(s); resolve them or mark them obsolete before approving:\n"
        "  - C-003 (Status=open)\n"
        f"  file: {PLAN}\n"
        f"hint: git -C {repo} okstra clarify status {repo / PLAN}\n"
    )
    assert stored(repo) == before
    (repo / PLAN).write_bytes(text)
    assert (repo / PLAN).read_bytes() == text


def test_no_plan_refuses_implementation(repo: Path) -> None:
    okstra(repo, "task", "new", KEY, "--type", "implementation-planning")
    for args in (
        ("plan", "status", KEY),
        ("plan", "approve", KEY),
        ("run", "start", KEY, "--type", "implementation"),
    ):
        proc = okstra(repo, *args)
        assert proc.returncode == 1 and "has no submitted plan" in proc.stderr + proc.stdout


def test_method_a_records_a_hand_approval_once(repo: Path) -> None:
    file = setup_task(repo, BLOCKED_PLAN)
    submit(repo)
    ctx = open_context(repo)
    key = ctx.key(KEY)
    with pytest.raises(Refused, match="approved plan has no recognised user-approval marker"):
        plans.ensure_approved(ctx, key)
    # The user resolves C-003 and ticks the box by hand (method A).
    file.write_text(
        BLOCKED_PLAN_CHECKED.replace("| `approval` | open |", "| `approval` | resolved |")
    )
    blob = git(repo, "hash-object", PLAN)
    assert plans.plan_status(ctx, key).reasons == ["not-recorded"]
    approved = plans.ensure_approved(ctx, key)
    assert approved.path == PLAN and approved.blob == blob
    assert approved.stage_map.numbers == [1, 2, 3]
    [line] = note_lines(repo, blob)
    assert line["method"] == "A" and line["taskKey"] == KEY
    manifest = json.loads(git(repo, "show", f"{TASK_REF}:task.json"))
    assert manifest["latestPlan"] == {"seq": "002", "path": PLAN, "blob": blob}
    assert manifest["workflow"]["awaitingApproval"] is False
    # Again: nothing new is written; the file itself was never touched by okstra.
    before = stored(repo)
    assert plans.ensure_approved(ctx, key) == approved
    assert stored(repo) == before
    assert "Approved at" not in file.read_text()
    assert snapshots.load_stage_map(ctx, key).numbers == [1, 2, 3]
    # plan approve on the hand-approved plan is a no-op too.
    again = json.loads(okstra(repo, "plan", "approve", KEY, "--json").stdout)
    assert again["alreadyApproved"] and again["approval"]["method"] == "A"
    assert stored(repo) == before


def test_method_a_falls_back_to_the_snapshot(repo: Path) -> None:
    file = setup_task(repo, LINEAR_PLAN.replace("- [ ] Approved", "- [x] Approved"))
    submit(repo)
    file.unlink()
    ctx = open_context(repo)
    approved = plans.ensure_approved(ctx, ctx.key(KEY))
    snapshot_blob = git(repo, "rev-parse", f"{TASK_REF}:plans/plan-001.md")
    assert approved.blob == snapshot_blob
    assert note_lines(repo, snapshot_blob)[0]["method"] == "A"
    status = json.loads(okstra(repo, "plan", "status", KEY, "--json").stdout)
    assert status["approved"] and status["readFrom"] == "snapshot"


def test_one_character_edit_makes_the_approval_stale(repo: Path) -> None:
    file = setup_task(repo, DIAMOND_PLAN)
    submit(repo)
    assert okstra(repo, "plan", "approve", KEY).returncode == 0
    approved_blob = git(repo, "hash-object", PLAN)
    text = file.read_text("utf-8")
    file.write_text(text.replace("기본값", "기븐값", 1), "utf-8")
    edited_blob = git(repo, "hash-object", PLAN)
    before = stored(repo)

    status = okstra(repo, "plan", "status", KEY, "--json")
    assert status.returncode == 1
    data = json.loads(status.stdout)
    assert data["reasons"] == ["stale"]
    assert data["approvedBlob"] == approved_blob and data["blob"] == edited_blob
    [message] = data["messages"]
    assert message.startswith("approval stale because the plan changed after approval: ")
    assert PLAN in message and approved_blob in message and edited_blob in message
    assert okstra_command("plan", "approve", KEY) in message

    ctx = open_context(repo)
    with pytest.raises(Refused, match="approval stale because the plan changed after approval"):
        plans.ensure_approved(ctx, ctx.key(KEY))
    start = okstra(repo, "run", "start", KEY, "--type", "implementation")
    assert start.returncode == 1 and "approval stale" in start.stderr
    assert stored(repo) == before

    # Approving again binds the approval to the edited content (the marker is already ticked,
    # so the file is not rewritten).
    again = json.loads(okstra(repo, "plan", "approve", KEY, "--json").stdout)
    assert again["blob"] == edited_blob and not again["changedFile"]
    assert okstra(repo, "plan", "status", KEY).returncode == 0
    assert file.read_text("utf-8").count("승인 일시 (CLI ack): ") == 1


def test_approving_twice_is_idempotent(repo: Path) -> None:
    file = setup_task(repo, LINEAR_PLAN)
    submit(repo)
    first = json.loads(okstra(repo, "plan", "approve", KEY, "--json").stdout)
    before, text = stored(repo), file.read_bytes()
    second = okstra(repo, "plan", "approve", KEY, "--json")
    assert second.returncode == 0
    assert json.loads(second.stdout)["alreadyApproved"] is True
    assert file.read_bytes() == text and stored(repo) == before
    assert text.decode().count("Approved at (CLI ack)") == 1
    assert len(note_lines(repo, first["blob"])) == 1


def test_racing_approvals_leave_one_audit_line_and_a_valid_note(repo: Path) -> None:
    file = setup_task(repo, LINEAR_PLAN)
    submit(repo)
    procs = race(repo, 4, "plan", "approve", KEY, "--json")
    assert [p.returncode for p in procs] == [0] * 4, [p.stderr for p in procs]
    results = [json.loads(p.stdout) for p in procs]
    assert sum(not r["alreadyApproved"] for r in results) == 1
    blob = git(repo, "hash-object", PLAN)
    assert {r["blob"] for r in results} == {blob}
    assert file.read_text().count("Approved at (CLI ack)") == 1
    assert len(note_lines(repo, blob)) == 1
    git(repo, "fsck", "--no-dangling")
    assert okstra(repo, "plan", "status", KEY).returncode == 0


def test_two_clones_approvals_merge_into_valid_json_lines(repo: Path, tmp_path: Path) -> None:
    """A hand approval (A) in one clone and a CLI approval (B) of the same blob in another:
    git's cat_sort_uniq merge of the notes gives two sorted JSON lines, still approved."""
    setup_task(repo, LINEAR_PLAN.replace("- [ ] Approved", "- [x] Approved"))
    git(repo, "add", PLAN)
    git(repo, "commit", "-q", "-m", "plan")
    submit(repo)
    blob = git(repo, "hash-object", PLAN)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(repo), str(other))
    git(other, "fetch", "-q", "origin", "refs/okstra/*:refs/okstra/*")

    ctx = open_context(repo)
    assert plans.ensure_approved(ctx, ctx.key(KEY)).blob == blob
    again = json.loads(okstra(other, "plan", "approve", KEY, "--json").stdout)
    assert again["blob"] == blob and not again["changedFile"]

    git(repo, "fetch", "-q", str(other), f"{APPROVALS_REF}:refs/notes/okstra/approvals-other")
    git(
        repo,
        "notes",
        "--ref",
        "okstra/approvals",
        "merge",
        "-s",
        "cat_sort_uniq",
        "refs/notes/okstra/approvals-other",
    )
    lines = note_lines(repo, blob)
    assert sorted(line["method"] for line in lines) == ["A", "B"]
    raw = git(repo, "notes", "--ref", "okstra/approvals", "show", blob).splitlines()
    assert raw == sorted(raw)
    assert len(read_approvals(ctx.repo, blob, KEY)) == 2
    assert okstra(repo, "plan", "status", KEY).returncode == 0


def _oversized(tmp: Path) -> Path:
    big = tmp / "big.md"
    with big.open("wb") as fh:
        line = b"| filler | " + b"x" * 1000 + b" |\n"
        for _ in range(50 * 1024):
            fh.write(line)
    return big


MISSING_COLUMNS = LINEAR_PLAN.replace(
    "| Stage | Title | Effective steps | Depends-on |\n|---|---|---|---|",
    "| Stage | Title |\n|---|---|",
)
DUPLICATE_STAGES = LINEAR_PLAN.replace(
    "| 3 | Wire the cache into the CLI | 2 | 2 |", "| 2 | Wire the cache into the CLI | 2 | 2 |"
)
KOREAN_HEADINGS = LINEAR_PLAN.replace("### Stage ", "### 단계 ").replace(
    "#### Stage Exit Contract", "#### 단계 종료 계약"
)
KOREAN_MAP_HEADING = LINEAR_PLAN.replace("## 5.5 Stage Map", "## 5.5 단계 지도")


@pytest.mark.parametrize(
    ("name", "content", "code", "expect"),
    [
        ("binary", b"# plan\n\n\x89PNG\x00\xff\xfe\n", 2, "plan.md:3: not UTF-8"),
        ("nul", b"# plan\nline two\x00\n", 2, "plan.md:2: contains a NUL byte"),
        ("big", None, 2, "larger than the 2 MiB cap (reached on line 2069)"),  # 2 MiB / 1014 B
        ("missing", None, 2, "plan.md: no such file"),
        (
            "columns",
            MISSING_COLUMNS.encode(),
            1,
            "plan.md:26: S1: the Stage Map table lacks the Effective steps, Depends-on column(s)",
        ),
        (
            "duplicate",
            DUPLICATE_STAGES.encode(),
            1,
            "plan.md:30: S2: stage 2 is listed twice (first at line 29)",
        ),
        ("korean", KOREAN_HEADINGS.encode(), 1, "plan.md:28: S6: stage 1 has no `### Stage 1"),
        (
            "korean-map",
            KOREAN_MAP_HEADING.encode(),
            1,
            "plan.md: S1: no `## 5.5 Stage Map` section",
        ),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 12 else "",
)
def test_bad_plans_are_refused_naming_file_and_line(
    repo: Path, tmp_path: Path, name: str, content: bytes | None, code: int, expect: str
) -> None:
    okstra(repo, "task", "new", KEY, "--type", "implementation-planning")
    target = repo / "docs" / "plan.md"
    target.parent.mkdir()
    if name == "big":
        _oversized(tmp_path).replace(target)
    elif content is not None:
        target.write_bytes(content)
    before = stored(repo)
    for args in (("plan", "validate", "docs/plan.md"), ("plan", "submit", KEY, "docs/plan.md")):
        proc = okstra(repo, *args)
        assert proc.returncode == code, (args, proc.stderr)
        assert expect in proc.stdout + proc.stderr, (args, proc.stdout, proc.stderr)
    # approve goes through the same reader and gate; in-process keeps the test quick.
    ctx = open_context(repo)
    with pytest.raises(OkstraError) as raised:
        plans.approve_plan(ctx, ctx.key(KEY), str(target))
    assert raised.value.exit_code == code and expect in str(raised.value)
    assert stored(repo) == before
    if content is not None:
        assert target.read_bytes() == content


def test_every_finding_is_reported_at_once(repo: Path) -> None:
    broken = DUPLICATE_STAGES.replace(
        "| 1 | Parse the config | 3 |", "| 1 | Parse the config | 9 |"
    )
    (repo / "plan.md").write_text(broken)
    proc = okstra(repo, "plan", "validate", "plan.md", "--json")
    assert proc.returncode == 1
    checks = {(f["check"], tuple(f["stages"])) for f in json.loads(proc.stdout)["findings"]}
    assert {("S2", (2,)), ("S5", (1,)), ("S6", (1,))} <= checks


def test_plan_outside_the_work_tree_is_refused(repo: Path, tmp_path: Path) -> None:
    okstra(repo, "task", "new", KEY, "--type", "implementation-planning")
    outside = tmp_path / "elsewhere.md"
    outside.write_text(LINEAR_PLAN)
    proc = okstra(repo, "plan", "submit", KEY, str(outside))
    assert proc.returncode == 2 and "outside the repository's work tree" in proc.stderr


def test_clarify_status_tells_absent_from_empty(repo: Path) -> None:
    for name, text in (
        ("blocked.md", BLOCKED_PLAN),
        ("linear.md", LINEAR_PLAN),
        ("diamond.md", DIAMOND_PLAN),
    ):
        (repo / name).write_text(text)
    blocked = json.loads(okstra(repo, "clarify", "status", "blocked.md", "--json").stdout)
    assert blocked["state"] == "items"
    assert [(i["id"], i["status"]) for i in blocked["items"]] == [
        ("C-002", "open"),
        ("C-003", "open"),
        ("C-001", "resolved"),
    ]
    assert blocked["approvalBlockers"] == ["C-003"]
    linear = okstra(repo, "clarify", "status", "linear.md")
    assert linear.returncode == 0 and "no items" in linear.stdout
    diamond = okstra(repo, "clarify", "status", "diamond.md", "--json")
    assert json.loads(diamond.stdout)["state"] == "schema-absent"
    assert "schema absent" in okstra(repo, "clarify", "status", "diamond.md").stdout
    assert okstra(repo, "clarify", "status", "nope.md").returncode == 2


def test_approve_keeps_every_other_byte_and_the_file_mode(repo: Path) -> None:
    """CRLF line ends and the file mode survive the in-place tick (temp file + rename)."""
    original = LINEAR_PLAN.replace("\n", "\r\n").encode()
    file = setup_task(repo, "")
    file.write_bytes(original)
    file.chmod(0o640)
    submit(repo)
    ctx = open_context(repo)
    done = plans.approve_plan(ctx, ctx.key(KEY))
    when = done.approval.approved_at
    assert file.read_bytes() == original.replace(
        b"- [ ] Approved\r\n", f"- [x] Approved\r\n- Approved at (CLI ack): {when}\r\n".encode()
    )
    assert file.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in file.parent.iterdir()] == [file.name]  # no temp file left behind
    assert done.blob == git(repo, "hash-object", PLAN)


def test_an_unrecognised_section_5_header_refuses_approval_and_fails_validate(repo: Path) -> None:
    # `| State |` for `| Status |` once made §5 "schema absent", so `plan approve` ticked a plan
    # whose C-003 still blocks approval (issue 11 item 5).
    text = BLOCKED_PLAN.replace("| Blocks | Status |", "| Blocks | State |")
    assert text != BLOCKED_PLAN
    file = setup_task(repo, text)
    submit(repo)
    before, content = stored(repo), file.read_bytes()
    approve = okstra(repo, "plan", "approve", KEY)
    assert approve.returncode == 1
    assert "table header is not the §5 header: expected column `Status`" in approve.stderr
    assert "found unknown column `State`" in approve.stderr and f"file: {PLAN}" in approve.stderr
    assert stored(repo) == before and file.read_bytes() == content
    validate = okstra(repo, "plan", "validate", PLAN, "--json")
    assert validate.returncode == 1
    (finding,) = json.loads(validate.stdout)["findings"]
    assert finding["check"] == "§5" and "expected column `Status`" in finding["message"]
    assert (
        finding["line"]
        == text.split("\n").index(next(line for line in text.split("\n") if "| State |" in line))
        + 1
    )
    # The same plan with the real header is valid and blocks approval on C-003 instead.
    file.write_text(BLOCKED_PLAN, "utf-8")
    assert okstra(repo, "plan", "validate", PLAN).returncode == 0
    assert "C-003 (Status=open)" in okstra(repo, "plan", "approve", KEY).stderr


SEED_LABELLED = LINEAR_PLAN.replace(
    "- [ ] Approved\n",
    "- 승인 여부 (사용자가 직접 편집): `- [ ] Approved` ← 승인하려면 `[ ]` 를 `[x]` 로 변경하여 "
    "저장하세요.\n",
)


def test_the_seed_templates_labelled_marker_line_approves_both_ways(repo: Path) -> None:
    """A plan written from the seed's report template carries the marker inside a labelled
    line: `plan approve` ticks it there (label and note kept), and a hand-ticked one approves
    at the first `run start --type implementation` (method A)."""
    file = setup_task(repo, SEED_LABELLED)
    submit(repo)
    status = okstra(repo, "plan", "status", KEY, "--json")
    assert json.loads(status.stdout)["reasons"] == ["marker-missing"]
    approved = okstra(repo, "plan", "approve", KEY, "--json")
    assert approved.returncode == 0, approved.stderr
    lines = file.read_text("utf-8").split("\n")
    at = lines.index(
        "- 승인 여부 (사용자가 직접 편집): `- [x] Approved` ← 승인하려면 `[ ]` 를 `[x]` 로 "
        "변경하여 저장하세요."
    )
    assert lines[at + 1].startswith("- 승인 일시 (CLI ack): ")
    assert okstra(repo, "plan", "status", KEY, "--json").returncode == 0

    # Method A on a second task: the user ticks the labelled line by hand.
    other = "p:g:j"
    assert okstra(repo, "task", "new", other, "--type", "implementation-planning").returncode == 0
    hand = repo / "docs/plan-j.md"
    hand.write_text(SEED_LABELLED.replace("`- [ ] Approved`", "`- [x] Approved`"), "utf-8")
    assert okstra(repo, "plan", "submit", other, "docs/plan-j.md").returncode == 0
    started = okstra(repo, "run", "start", other, "--type", "implementation", "--json")
    assert started.returncode == 0, started.stderr
    blob = git(repo, "hash-object", "docs/plan-j.md")
    [line] = note_lines(repo, blob)
    assert line["method"] == "A" and line["taskKey"] == other
