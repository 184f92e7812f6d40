"""Paths in `.okstra/`, okstra's local workspace (never the source of truth). Pure."""

from __future__ import annotations

from ..core.keys import TaskKey

OKSTRA_DIR = ".okstra"
"""okstra's workspace in a work tree; every clean-tree check ignores it."""

# Per-run folders of seeds/003, each holding one file per run named with -<type>-<seq>.
RUN_FILES = {
    "manifest": "manifests/run-manifest-{t}-{s}.json",
    "state": "state/team-state-{t}-{s}.json",
    "prompt": "prompts/claude-execution-prompt-{t}-{s}.md",
    "report": "reports/final-report-{t}-{s}.md",
    "data": "reports/final-report-{t}-{s}.data.json",
    "status": "status/final-{t}-{s}.status",
    "session": "sessions/claude-resume-{t}-{s}.sh",
    "workerResults": "worker-results/",
    "carry": "carry/",
}


def task_root(key: TaskKey) -> str:
    return f"{OKSTRA_DIR}/tasks/{key.ref_suffix}"


def run_paths(key: TaskKey, task_type: str, seq: str) -> dict[str, str]:
    """Workspace-relative paths of one run's files, by kind."""
    base = f"{task_root(key)}/runs/{task_type}"
    return {kind: f"{base}/{p.format(t=task_type, s=seq)}" for kind, p in RUN_FILES.items()}


def stage_report_path(key: TaskKey, seq: str, stage: int) -> str:
    """Workspace-relative path of the report an implementation run writes for one stage
    (``stage done --report``), beside the run's own report."""
    base = f"{task_root(key)}/runs/implementation"
    return f"{base}/reports/stage-{stage}-report-implementation-{seq}.md"
