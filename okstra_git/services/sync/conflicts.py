"""A task's true conflict: what both sides did and one ``sync --task`` command per choice
(docs/concurrency-and-sync.md); views/sync.py words what clashed and what each choice does."""

from __future__ import annotations

import json

from ...core.shell import okstra
from ...git.repo import CommitInfo, GitRepo
from ...records.claim import CLAIM_PATH
from .state import Clashed, Holder, TaskConflict, TaskRefs


def conflict(
    remote: str,
    key: str,
    what: Clashed,
    unit: str,
    here: CommitInfo,
    there: CommitInfo | None,
    renumberable: bool,
) -> TaskConflict:
    theirs = okstra("sync", remote, "--task", key, "--take-theirs", unit)
    choices = [("take-theirs", theirs)]
    if renumberable:
        choices.append(("renumber", okstra("sync", remote, "--task", key, "--renumber", unit)))
    return TaskConflict(key, what, unit, here, there, tuple(choices), ())


def invalid_base(key: str, problems: list[str], tip: CommitInfo) -> TaskConflict:
    return TaskConflict(
        key, Clashed("unchecked", problems=tuple(problems)), "task", tip, tip, (), ()
    )


def claim_conflict(
    repo: GitRepo, remote: str, task: TaskRefs, ref: str, local: str, theirs: str
) -> TaskConflict:
    stage = ref.rsplit("-", 1)[-1]
    mine, other = claim_at(repo, local), claim_at(repo, theirs)
    key = str(mine.get("taskKey") or other.get("taskKey") or task.suffix)
    what = Clashed("claimed", stage, (_holder(mine), _holder(other)))
    unit = str(mine.get("runId", "task"))
    there = repo.commit_info(theirs)
    return conflict(remote, key, what, unit, repo.commit_info(local), there, False)


def claim_at(repo: GitRepo, commit: str) -> dict:
    try:
        data = json.loads(repo.blob(repo.files_of(commit)[CLAIM_PATH]))
    except (KeyError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _holder(claim: dict) -> Holder:
    return Holder(*(str(claim.get(name, "?")) for name in ("runId", "status", "user", "host")))
