"""``report validate``'s ``taskRecords``: services/reports.py says how the report was checked
against its task's records (RecordsChecked), views/report.py words it as the service did."""

from __future__ import annotations

import pytest

from okstra_git.services.reports import RecordsChecked
from okstra_git.views.report import records_note


@pytest.mark.parametrize(
    ("checked", "said"),
    [
        (RecordsChecked("p:g:i"), "checked against the records of p:g:i"),
        (RecordsChecked(skipped="asked"), "task records not checked (--no-task)"),
        (RecordsChecked(skipped="bad-key"),
         "task records not checked: header.taskKey is not a task key"),
        (RecordsChecked(skipped="no-repository"),
         "task records not checked: not in a git repository"),
        (RecordsChecked("p:g:{x}", "no-task"),
         "task records not checked: no task p:g:{x} in this repository"),
    ],
)  # fmt: skip
def test_how_the_task_records_were_checked(checked: RecordsChecked, said: str):
    assert records_note(checked) == said
