"""The acceptance critic's confirm-or-downgrade merge (docs/workflow.md)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from conftest import okstra
from hypothesis import given
from hypothesis import strategies as st
from reports_data import full_report

from okstra_git.core.errors import BadInput
from okstra_git.logic.critic import DEFAULT_TRIGGER, merge
from okstra_git.logic.reports.rules import validate
from okstra_git.logic.reports.starter import decide

FV = "final-verification"


def accepted_report() -> dict:
    data = decide(full_report(FV), "accepted")
    data["finalVerification"]["acceptanceBlockers"] = []
    data["finalVerification"]["residualRisks"] = []
    data.pop("convergence", None)
    assert validate(data) == [], validate(data)
    return data


def candidate(cid: str, statement: str, severity: str = "major", **extra) -> dict:
    return {"id": cid, "statement": statement, "evidence": f"log for {cid}", "severity": severity,
            **extra}  # fmt: skip


def confirm(cid: str, ok: bool, **extra) -> dict:
    return {"candidate": cid, "confirmed": ok, **extra}


def doc(*cands: dict, provider: str = "codex") -> dict:
    return {"provider": provider, "model": "gpt-5", "candidates": list(cands)}


def rows(data: dict, table: str) -> list[dict]:
    return data["finalVerification"][table]


def test_confirmed_becomes_a_blocker_unconfirmed_a_residual_risk():
    report = accepted_report()
    cands = doc(
        candidate("CB-1", "The migration has no rollback test.", "critical"),
        candidate("CB-2", "Error path of `calc mul` untested.", "minor", trigger="a bug report"),
        candidate("CB-3", "README example is stale.", "minor"),
    )
    confs = {
        "confirmations": [
            confirm("CB-1", True, by="claude:V-1", evidence="no test under tests/migrations"),
            confirm("CB-1", False, by="gemini:V-9"),
            confirm("CB-2", False, by="claude:V-2"),
            confirm("CB-3", False, trigger="a user follows the README and it fails"),
        ]
    }
    merged, summary = merge(report, cands, confs)
    assert report == accepted_report()  # the input is left alone
    [blocker] = rows(merged, "acceptanceBlockers")
    assert blocker == {
        "id": "AB-001",
        "statement": "The migration has no rollback test.",
        "evidence": "log for CB-1; confirmed by claude:V-1: no test under tests/migrations",
        "severity": "critical",
        "followUpPhase": "implementation",
        "sourceItems": ["codex-critic:CB-1", "claude:V-1"],
    }
    risks = rows(merged, "residualRisks")
    assert [(r["id"], r["severity"], r["trigger"]) for r in risks] == [
        ("RR-001", "minor", "a bug report"),
        ("RR-002", "minor", "a user follows the README and it fails"),
    ]
    assert merged["convergence"]["critic"] == {
        "enabled": True,
        "provider": "codex",
        "model": "gpt-5",
        "mode": "acceptance-devils-advocate",
        "candidatesProposed": 3,
        "confirmedBlockers": 1,
        "downgradedToResidual": 2,
    }
    # A critical blocker: accepted becomes blocked, and every verdict field agrees.
    assert (summary.verdict_before, summary.verdict_after) == ("accepted", "blocked")
    assert merged["verdictCard"] == merged["finalVerdict"]
    assert merged["verdictCard"]["verdictToken"] == "blocked"
    assert merged["recommendedNextSteps"][0]["text"] == merged["verdictCard"]["nextStep"]
    assert "release-handoff" not in merged["verdictCard"]["nextStep"]
    assert validate(merged) == []


@pytest.mark.parametrize(
    ("before", "severities", "after"),
    [
        ("accepted", [], "accepted"),
        ("accepted", ["minor"], "conditional-accept"),
        ("accepted", ["major", "critical"], "blocked"),
        ("conditional-accept", ["major"], "conditional-accept"),
        ("conditional-accept", ["critical"], "blocked"),
        ("blocked", ["minor"], "blocked"),
    ],
)
def test_the_verdict_is_re_derived_never_relaxed(before, severities, after):
    report = decide(accepted_report(), before)
    if before != "accepted":
        rows(report, "acceptanceBlockers").append(
            {"id": "AB-001", "statement": "Known.", "evidence": "x", "severity": "minor"}
        )
    cands = doc(*(candidate(f"C{i}", f"Problem {i}.", s) for i, s in enumerate(severities)))
    confs = {"confirmations": [confirm(f"C{i}", True) for i in range(len(severities))]}
    merged, summary = merge(report, cands, confs)
    assert summary.verdict_after == after
    assert merged["finalVerdict"]["verdictToken"] == after
    assert validate(merged) == []


def test_a_candidate_restating_a_blocker_adds_no_second_row():
    report = decide(accepted_report(), "conditional-accept")
    rows(report, "acceptanceBlockers").append(
        {"id": "AB-001", "statement": "Cache is never invalidated.", "evidence": "src/cache.py:9",
         "severity": "major", "sourceItems": ["claude:F-3"]}
    )  # fmt: skip
    cands = doc(candidate("CB-1", "cache is  never invalidated."))
    merged, summary = merge(report, cands, {"confirmations": []})
    [blocker] = rows(merged, "acceptanceBlockers")
    assert blocker["sourceItems"] == ["claude:F-3", "codex-critic:CB-1"]
    assert rows(merged, "residualRisks") == []
    assert (summary.confirmed, summary.downgraded) == (1, 0)
    assert validate(merged) == []


def test_no_candidates_says_so():
    merged, summary = merge(accepted_report(), doc(), {"confirmations": []})
    assert merged["convergence"]["critic"]["candidatesProposed"] == 0
    assert summary.verdict_after == "accepted"
    assert validate(merged) == []


def test_default_trigger_and_ids_after_existing_ones():
    report = accepted_report()
    rows(report, "residualRisks").append(
        {"id": "RR-007", "statement": "Old risk.", "evidence": "e", "severity": "minor",
         "trigger": "t"}
    )  # fmt: skip
    merged, _ = merge(report, doc(candidate("X", "New risk.")), {"confirmations": []})
    assert rows(merged, "residualRisks")[-1]["id"] == "RR-008"
    assert rows(merged, "residualRisks")[-1]["trigger"] == DEFAULT_TRIGGER


def test_bad_input_is_named():
    with pytest.raises(BadInput, match="not among the critic's candidates"):
        merge(accepted_report(), doc(candidate("A", "a.")), {"confirmations": [confirm("B", True)]})
    with pytest.raises(BadInput, match="candidate ids must be unique"):
        merge(
            accepted_report(),
            doc(candidate("A", "a."), candidate("A", "b.")),
            {"confirmations": []},
        )
    with pytest.raises(BadInput, match="merges into a final-verification report"):
        merge(full_report("implementation"), doc(), {"confirmations": []})
    broken = accepted_report()
    broken["verdictCard"]["verdictToken"] = "blocked"
    with pytest.raises(BadInput, match=r"differs from finalVerdict\.verdictToken"):
        merge(broken, doc(), {"confirmations": []})


# -- properties ---------------------------------------------------------------------------------

STATEMENTS = st.sampled_from(["A is broken.", "a is  BROKEN.", "B leaks.", "C is slow.", "D."])
CANDIDATES = st.lists(
    st.tuples(STATEMENTS, st.sampled_from(["critical", "major", "minor"])), max_size=6
).map(lambda pairs: [candidate(f"CB-{i}", s, sev) for i, (s, sev) in enumerate(pairs)])


@given(CANDIDATES, st.data())
def test_never_drops_a_candidate_and_merging_twice_changes_nothing(cands, data):
    confs = {
        "confirmations": [
            confirm(c["id"], ok, by=f"claude:V-{n}")
            for n, c in enumerate(cands)
            for ok in data.draw(st.lists(st.booleans(), max_size=2))
        ]
    }
    report = accepted_report()
    if data.draw(st.booleans(), label="an earlier blocker"):
        report = decide(report, "conditional-accept")
        rows(report, "acceptanceBlockers").append(
            {"id": "AB-001", "statement": "A is broken.", "evidence": "e", "severity": "minor"}
        )
    if data.draw(st.booleans(), label="an earlier risk"):
        rows(report, "residualRisks").append(
            {"id": "RR-001", "statement": "B leaks.", "evidence": "e", "severity": "minor",
             "trigger": "t"}
        )  # fmt: skip
    merged, summary = merge(report, doc(*cands), confs)
    every = rows(merged, "acceptanceBlockers") + rows(merged, "residualRisks")
    for c in cands:  # each candidate lives on in exactly one row
        holders = [r for r in every if f"codex-critic:{c['id']}" in r.get("sourceItems", [])]
        assert len(holders) == 1
        assert holders[0]["severity"] in ("critical", "major", "minor")
    assert summary.proposed == len(cands) == summary.confirmed + summary.downgraded
    if rows(merged, "acceptanceBlockers"):
        assert merged["finalVerdict"]["verdictToken"] != "accepted"
    assert validate(merged) == []
    again, _ = merge(merged, doc(*cands), confs)
    assert again == merged
    assert merged == merge(copy.deepcopy(report), doc(*cands), confs)[0]  # deterministic


# -- through files -------------------------------------------------------------------------------


def test_merge_files_checks_its_inputs_and_writes_atomically(tmp_path: Path):
    from okstra_git.services.critic import merge_files

    report = tmp_path / "data.json"
    report.write_text(json.dumps(accepted_report()))
    cands, confs = tmp_path / "c.json", tmp_path / "k.json"
    cands.write_text(json.dumps(doc(candidate("CB-1", "x.", "fatal"))))
    confs.write_text(json.dumps({"confirmations": []}))
    with pytest.raises(BadInput, match=r"--candidates .*c\.json does not match critic-candidates"):
        merge_files(str(report), str(cands), str(confs), str(report))
    cands.write_text(json.dumps(doc(candidate("CB-1", "x.", "minor"))))
    before = report.read_bytes()
    merged, summary = merge_files(str(report), str(cands), str(confs), None)
    assert report.read_bytes() == before and summary.downgraded == 1
    merge_files(str(report), str(cands), str(confs), str(report))
    assert json.loads(report.read_text()) == merged
    assert okstra(tmp_path, "report", "validate", str(report)).returncode == 0


def test_a_candidate_confirmed_later_moves_up_to_the_blockers():
    cands = doc(candidate("CB-1", "Leaks a file handle.", "major"))
    first, _ = merge(accepted_report(), cands, {"confirmations": []})
    assert [r["id"] for r in rows(first, "residualRisks")] == ["RR-001"]
    later = {"confirmations": [confirm("CB-1", True, by="claude:V-4")]}
    second, summary = merge(first, cands, later)
    assert rows(second, "residualRisks") == []
    [blocker] = rows(second, "acceptanceBlockers")
    assert blocker["sourceItems"] == ["codex-critic:CB-1", "claude:V-4"]
    assert (summary.confirmed, summary.downgraded, summary.verdict_after) == (
        1, 0, "conditional-accept",
    )  # fmt: skip
    # Confirmed once, it is never downgraded again by a later merge.
    third, _ = merge(second, cands, {"confirmations": [confirm("CB-1", False)]})
    assert rows(third, "acceptanceBlockers") == rows(second, "acceptanceBlockers")
    assert validate(third) == []


def test_the_cli_merges_and_reports_what_it_did(tmp_path: Path):
    report, cands, confs = tmp_path / "data.json", tmp_path / "c.json", tmp_path / "k.json"
    report.write_text(json.dumps(accepted_report()))
    cands.write_text(json.dumps(doc(candidate("CB-1", "A.", "major"), candidate("CB-2", "B."))))
    confs.write_text(json.dumps({"confirmations": [confirm("CB-1", True, by="gemini:V-1")]}))
    args = ["critic", "merge", "--report", str(report), "--candidates", str(cands),
            "--confirmations", str(confs)]  # fmt: skip
    printed = okstra(tmp_path, *args)
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["finalVerdict"]["verdictToken"] == "conditional-accept"
    out = tmp_path / "merged.json"
    proc = okstra(tmp_path, *args, "--out", str(out))
    assert proc.stdout.strip() == (
        "critic: 2 candidate(s): 1 confirmed as acceptance blocker(s) AB-001, 1 downgraded to "
        f"residual risk(s) RR-001; verdict accepted -> conditional-accept; wrote {out}"
    )
    assert json.loads(out.read_text()) == json.loads(printed.stdout)
    summary = json.loads(okstra(tmp_path, *args, "--out", str(out), "--json").stdout)["summary"]
    assert summary["verdictAfter"] == "conditional-accept" and summary["residualRisks"] == [
        "RR-001"
    ]
    confs.write_text(json.dumps({"confirmations": [confirm("CB-9", True)]}))
    bad = okstra(tmp_path, *args)
    assert bad.returncode == 2 and "'CB-9' is not among the critic's candidates" in bad.stderr


def test_the_file_commands_import_neither_pygit2_nor_jsonschema(tmp_path: Path):
    """critic merge and the file forms of incremental scope/carry read and write files only."""
    import subprocess
    import sys

    report, cands, confs = tmp_path / "data.json", tmp_path / "c.json", tmp_path / "k.json"
    report.write_text(json.dumps(accepted_report()))
    cands.write_text(json.dumps(doc(candidate("CB-1", "A."))))
    confs.write_text(json.dumps({"confirmations": []}))
    plan = full_report("implementation-planning")
    (tmp_path / "p.json").write_text(json.dumps(plan))
    commands = [
        ["critic", "merge", "--report", str(report), "--candidates", str(cands),
         "--confirmations", str(confs), "--out", str(tmp_path / "out.json")],
        ["incremental", "scope", "--prev-data", str(tmp_path / "p.json"), "--cur-base-sha", "a",
         "--prev-base-sha", "a", "--impacted", "1"],
        ["incremental", "carry", "--prev-data", str(tmp_path / "p.json"), "--cur-data",
         str(tmp_path / "p.json"), "--prev-seq", "001", "--out", str(tmp_path / "c2.json")],
    ]  # fmt: skip
    for argv in commands:
        script = (
            "import sys\nfrom okstra_git.entry import main\n"
            f"code = main({argv!r})\n"
            "print(code, sorted(m for m in sys.modules if m in ('pygit2', 'jsonschema')))\n"
        )
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
        assert done.stdout.strip().splitlines()[-1] == "0 []", (argv, done.stdout, done.stderr)
