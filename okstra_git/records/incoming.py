"""Records fetched from a remote are hostile until checked (docs/concurrency-and-sync.md).

``sync`` checks the tip of every task and claim ref it is about to adopt (a ref new here, a
fast-forward) or to replay local events onto, before any local ref points at it: the ref's
name is one okstra writes, every record in its tree matches its JSON Schema
(``schemacheck``: no jsonschema import, fast enough for 10k refs), and the fields okstra
later acts on are confined — a claim's branch is the stage's own ``okstra/<group>/<id>/stage-<N>``,
its worktree path a plain absolute path (acted on only inside this clone's worktree root,
``services.worktrees``), a task's files are the ones okstra writes, a run's workspace paths
the ones okstra derives. A record failing any check is named (ref, field) and never adopted.
"""

from __future__ import annotations

import re
from typing import Any

from ..core import schemacheck
from ..core.errors import OkstraError
from ..core.keys import TASK_TYPES, TaskKey, parse_task_key
from ..git.repo import GitRepo
from ..logic.planfile import MAX_PLAN_BYTES
from ..logic.workspace import run_paths
from .base import loads
from .claim import CLAIM_PATH, REPORT_FILES, claim_location_problems
from .refnames import CLAIM_REF, ref_problems
from .task import MANIFEST_PATH, TASKS_PREFIX

_SEQ = r"[0-9]{3,9}"
_TASK_FILE = re.compile(
    rf"brief\.md|plans/plan-{_SEQ}\.md|runs/(?P<type>[a-z-]+)/(?P<seq>{_SEQ})(?P<data>\.data)?\.json"
)
_CHECKPOINT = re.compile(rf"(?P<type>[a-z-]+)-{_SEQ}")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")
_REPORT_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def tip_problems(repo: GitRepo, ref: str, commit: str, known: str | None = None) -> list[str]:
    """Every problem with the records at ``commit``, the remote's value of ``ref``.

    ``known`` is a commit of the same ref already checked (the local value a fast-forward
    starts from): files it holds unchanged are not read again, so adopting a long-lived task
    costs what changed, not its whole history of runs.
    """
    problems = ref_problems(ref)
    if problems:
        return problems
    odd: list[str] = []
    try:
        files = repo.files_of(commit, odd)
    except (KeyError, ValueError):
        return [f"{ref}: {commit} is not a commit here (the fetch did not bring it)"]
    if odd:  # entry type by entry type: okstra's records are plain files, nothing else
        return [f"{ref}:{entry}" for entry in odd]
    if CLAIM_REF.fullmatch(ref):
        return _claim_files_problems(repo, ref, files)
    return _task_files_problems(repo, ref, files, repo.files_of(known))


def _read(repo: GitRepo, blob: str, where: str) -> tuple[Any, list[str]]:
    try:
        return loads(repo.blob(blob), where), []
    except OkstraError as exc:
        return None, [str(exc)]


def _claim_files_problems(repo: GitRepo, ref: str, files: dict[str, str]) -> list[str]:
    where = f"{ref}:{CLAIM_PATH}"
    extra = sorted(set(files) - {CLAIM_PATH, *REPORT_FILES})
    if extra:
        return [f"{ref}:{path}: not a file okstra keeps in a claim" for path in extra]
    if CLAIM_PATH not in files:
        return [f"{where} is missing"]
    data, problems = _read(repo, files[CLAIM_PATH], where)
    reports = [name for name in REPORT_FILES if name in files]
    if len(reports) > 1:
        problems.append(f"{ref}: holds both {' and '.join(reports)}; a claim stores one report")
    for name in reports:
        problems += report_problems(repo.blob(files[name]), f"{ref}:{name}")
    return problems or claim_data_problems(data, ref)


def report_problems(raw: bytes, where: str) -> list[str]:
    """A stage report stored with a claim (``report.md`` or ``report.json``): bounded UTF-8
    text without control characters other than tab and line ends — ``verify target`` prints
    it to a terminal."""
    if len(raw) > MAX_PLAN_BYTES:
        return [f"{where}: larger than {MAX_PLAN_BYTES >> 20} MiB"]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return [f"{where}: not UTF-8 text"]
    return [f"{where}: holds a control character"] if _REPORT_CONTROL.search(text) else []


def claim_data_problems(data: Any, ref: str) -> list[str]:
    """A fetched ``claim.json`` against its schema, its ref and the confinement rules."""
    where = f"{ref}:{CLAIM_PATH}"
    found = [f"{where}: {p}" for p in schemacheck.problems(data, "claim")]
    if found:
        return found
    found += [f"{where}: {p}" for p in _text_problems(data, exempt=("carry",))]
    found += [
        f"{where}: {p}"
        for p in claim_location_problems(
            ref, data["stage"], data["taskKey"], data["branch"], data["worktreePath"]
        )
    ]
    run_ids = [data["runId"], data.get("takeOverOf"), *data.get("history", [])]
    for run_id in run_ids:
        if run_id is not None and not re.fullmatch(rf"implementation-{_SEQ}", run_id):
            found.append(f"{where}: run id {run_id!r} is not implementation-<seq>")
    if data["stage"] not in data["batch"]:
        found.append(f"{where}: batch {data['batch']} does not hold its own stage")
    return found


def _task_files_problems(
    repo: GitRepo, ref: str, files: dict[str, str], known: dict[str, str]
) -> list[str]:
    where = f"{ref}:{MANIFEST_PATH}"
    if MANIFEST_PATH not in files:
        return [f"{where} is missing"]
    manifest, found = _read(repo, files[MANIFEST_PATH], where)
    if found:
        return found
    found = [f"{where}: {p}" for p in task_data_problems(manifest, ref)]
    if found:
        return found
    key = parse_task_key(manifest["taskKey"])
    for path, blob in sorted(files.items()):
        where = f"{ref}:{path}"
        match = _TASK_FILE.fullmatch(path)
        if path == MANIFEST_PATH or known.get(path) == blob:
            continue
        if match is None or (match.group("type") and match.group("type") not in TASK_TYPES):
            found.append(f"{where}: not a file okstra keeps in a task")
        elif match.group("seq") and not match.group("data"):
            data, problems = _read(repo, blob, where)
            found += problems or [
                f"{where}: {p}"
                for p in run_data_problems(data, key, match.group("type"), match.group("seq"))
            ]
    return found


def task_data_problems(data: Any, ref: str) -> list[str]:
    """A fetched ``task.json`` against its schema, its ref and the confinement rules."""
    found = schemacheck.problems(data, "task")
    if found:
        return found
    found += _text_problems(data)
    suffix = ref[len(TASKS_PREFIX) :]
    try:
        key = parse_task_key(data["taskKey"])
    except OkstraError as exc:
        return [*found, f"taskKey: {exc}"]
    if key.ref_suffix != suffix:
        found.append(f"taskKey {data['taskKey']!r} belongs at {TASKS_PREFIX}{key.ref_suffix}")
    parts = (data["projectId"], data["taskGroup"], data["taskId"])
    if parts != (key.project, key.group, key.task_id):
        found.append("projectId, taskGroup and taskId are not the parts of taskKey")
    if data.get("briefPath", "brief.md") != "brief.md":
        found.append(f"briefPath {data['briefPath']!r} is not brief.md")
    plan = data.get("latestPlan")
    if plan is not None:
        found += [f"latestPlan.path: {p}" for p in relative_path_problems(plan["path"])]
    checkpoint = data["workflow"].get("lastSafeCheckpoint")
    if checkpoint is not None:
        match = _CHECKPOINT.fullmatch(checkpoint)
        if match is None or match.group("type") not in TASK_TYPES:
            found.append(f"workflow.lastSafeCheckpoint {checkpoint!r} is not <type>-<seq>")
    return found


def run_data_problems(data: Any, key: TaskKey, task_type: str, seq: str) -> list[str]:
    """A fetched run record (``runs/<type>/<seq>.json``) against its schema, its task, its
    place in the tree and the workspace paths okstra derives for it."""
    found = schemacheck.problems(data, "run")
    if found:
        return found
    found += _text_problems(data)
    if data["taskKey"] != str(key):
        found.append(f"taskKey {data['taskKey']!r} is not the task's {str(key)!r}")
    if (data["taskType"], data["seq"]) != (task_type, seq):
        found.append(f"names run {data['taskType']} {data['seq']}, not its place in the tree")
    if data["paths"] != run_paths(key, task_type, seq):
        found.append("paths are not the run's own workspace paths")
    return found


def relative_path_problems(path: str) -> list[str]:
    """A work-tree-relative path okstra records: no ``..``, not absolute, one line."""
    parts = path.split("/")
    if path.startswith("/") or ".." in parts or not path or _CONTROL.search(path) or "\n" in path:
        return [f"{path!r} is not a plain path inside the work tree"]
    return []


def _text_problems(data: Any, exempt: tuple[str, ...] = (), at: str = "") -> list[str]:
    """Strings holding control characters (terminal escapes, line separators): a record's
    text is printed, and must not be able to rewrite what a terminal shows."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key not in exempt:
                found += _text_problems(value, (), f"{at}/{key}" if at else key)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += _text_problems(value, (), f"{at}/{index}")
    elif isinstance(data, str) and _CONTROL.search(data):
        found.append(f"{at or '(top)'}: holds a control character")
    return found
