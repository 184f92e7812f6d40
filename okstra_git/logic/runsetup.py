"""A run's set-up (docs/workflow.md, Runs): its analysis workers, the model of each role and its
options, as ``run start`` takes them (``--workers``, ``--model ROLE=MODEL``, ``--option
NAME=VALUE``) and the run manifest keeps them. Pure: plain data, no git.

The wizard asks the same questions (``logic/wizard.py``) and prints a ``run start`` command
carrying its answers in these flags, so both go through one set of rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.errors import BadInput
from ..core.keys import parse_task_key
from ..core.strict import line_break
from .providers import DEFAULT_MODEL, MODELS, PROVIDERS

DEFAULT_WORKERS = ("claude", "codex")
"""The analysis workers of a phase that has a roster, unless ``--workers`` says otherwise."""

ROLE_PROVIDERS = {
    "lead": ("claude",),
    "executor": ("claude", "codex"),
    "claude": ("claude",),
    "codex": ("codex",),
    "gemini": ("gemini",),
    "reportWriter": ("claude",),
}
"""Each role's model is one of these providers' models (or the phase's default)."""

OPTIONS = ("directive", "relatedTasks", "clarification", "prTemplate")
"""``--option`` names, in the order the manifest lists them."""
DIRECTIVE_LIMIT = 4000
PATH_LIMIT = 500
NO_ROSTER = ("implementation", "release-handoff")
"""Phases without analysis workers: implementation has its executor, release-handoff its lead."""


def has_roster(task_type: str) -> bool:
    return task_type not in NO_ROSTER


def roles(task_type: str, workers: Sequence[str]) -> tuple[str, ...]:
    """The roles whose model a run of ``task_type`` with analysis ``workers`` has, in order."""
    out = ["lead"]
    if task_type == "implementation":
        out.append("executor")
    if has_roster(task_type):
        out += [p for p in PROVIDERS if p in workers]
    if task_type != "release-handoff":
        out.append("reportWriter")
    return tuple(out)


def role_models(role: str) -> tuple[str, ...]:
    """The models ``role`` may run, the phase default first."""
    return (DEFAULT_MODEL, *(m for p in ROLE_PROVIDERS[role] for m in MODELS[p]))


def parse_workers(text: str | None, task_type: str) -> list[str] | None:
    """``--workers a,b`` as the roster (None for a phase without one), or BadInput."""
    if not has_roster(task_type):
        if text is not None:
            raise BadInput(
                f"--workers: {task_type} runs have no analysis workers (set the models of "
                f"their roles with --model ROLE=MODEL: {', '.join(roles(task_type, ()))})"
            )
        return None
    if text is None:
        return list(DEFAULT_WORKERS)
    names = [part.strip() for part in text.split(",")]
    wrong = [n for n in names if n not in PROVIDERS]
    if wrong or not names:
        raise BadInput(
            f"--workers {text!r}: a comma list of {', '.join(PROVIDERS)}"
            + (f" ({', '.join(map(repr, wrong))} is not one)" if wrong else "")
        )
    if len(set(names)) != len(names):
        raise BadInput(f"--workers {text!r}: names a worker twice")
    return [p for p in PROVIDERS if p in names]


def _pairs(items: Sequence[str], flag: str, what: str) -> list[tuple[str, str]]:
    out = []
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise BadInput(f"{flag} {item!r}: expected {what}")
        out.append((name, value))
    seen = [n for n, _ in out]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise BadInput(f"{flag}: {', '.join(twice)} given more than once")
    return out


def parse_models(items: Sequence[str], task_type: str, workers: Sequence[str]) -> dict[str, str]:
    """``--model ROLE=MODEL`` (repeatable) as every role's model, the phase default for a role
    not given; BadInput names the role or model that does not fit the run."""
    allowed = roles(task_type, workers)
    models = dict.fromkeys(allowed, DEFAULT_MODEL)
    for role, model in _pairs(items, "--model", "ROLE=MODEL, e.g. lead=opus"):
        if role not in allowed:
            raise BadInput(
                f"--model {role}={model}: the roles of this {task_type} run"
                + (f" (workers {','.join(workers)})" if has_roster(task_type) else "")
                + f" are {', '.join(allowed)}"
            )
        if model == "":
            model = DEFAULT_MODEL  # as the wizard takes "": the phase default
        if model not in role_models(role):
            raise BadInput(
                f"--model {role}={model}: the {role} model is one of {', '.join(role_models(role))}"
            )
        models[role] = model
    return models


def _one_line(name: str, value: str, limit: int) -> str:
    value = value.strip()
    if not value:
        raise BadInput(f"--option {name}=: give a value")
    if len(value) > limit:
        raise BadInput(f"--option {name}: at most {limit} characters")
    if line_break(value) is not None or any(ord(ch) < 0x20 and ch != "\t" for ch in value):
        raise BadInput(f"--option {name}: one line, no control characters")
    return value


def parse_options(items: Sequence[str], task_type: str) -> dict[str, Any]:
    """``--option NAME=VALUE`` (repeatable) as the run's options, each default filled in:
    ``directive`` (text for the lead), ``relatedTasks`` (task keys, comma-separated),
    ``clarification`` (``none``, ``latest`` or a file), ``prTemplate`` (release-handoff:
    ``default`` or a file)."""
    options: dict[str, Any] = {"directive": None, "relatedTasks": [], "clarification": "none"}
    if task_type == "release-handoff":
        options["prTemplate"] = "default"
    for name, value in _pairs(items, "--option", f"NAME=VALUE, NAME one of {', '.join(OPTIONS)}"):
        if name == "directive":
            options[name] = _one_line(name, value, DIRECTIVE_LIMIT)
        elif name == "relatedTasks":
            keys = [k.strip() for k in value.split(",") if k.strip()]
            if not keys:
                raise BadInput("--option relatedTasks=: name at least one task key")
            try:
                options[name] = [str(parse_task_key(k)) for k in keys]
            except BadInput as exc:
                raise BadInput(f"--option relatedTasks: {exc}") from exc
        elif name == "clarification" or (name == "prTemplate" and task_type == "release-handoff"):
            options[name] = _one_line(name, value, PATH_LIMIT)
        elif name == "prTemplate":
            raise BadInput(f"--option prTemplate: only release-handoff runs, not {task_type}")
        else:
            raise BadInput(f"--option {name}: not an option; one of {', '.join(OPTIONS)}")
    return options


def run_setup(
    task_type: str,
    workers: str | None = None,
    models: Sequence[str] = (),
    options: Sequence[str] = (),
) -> dict[str, Any]:
    """The set-up ``run start`` keeps: ``workers`` (None without a roster), ``models`` by role
    and ``options``, every default filled in."""
    roster = parse_workers(workers, task_type)
    return {
        "workers": roster,
        "models": parse_models(models, task_type, roster or ()),
        "options": parse_options(options, task_type),
    }


def setup_flags(task_type: str, setup: dict[str, Any]) -> list[str]:
    """The ``run start`` flags that give ``setup`` (as :func:`run_setup` returns it): only what
    differs from the defaults, so the defaults give no flag at all."""
    flags: list[str] = []
    workers = setup.get("workers")
    if workers is not None and tuple(workers) != DEFAULT_WORKERS:
        flags += ["--workers", ",".join(workers)]
    for role, model in setup.get("models", {}).items():
        if model != DEFAULT_MODEL:
            flags += ["--model", f"{role}={model}"]
    defaults = parse_options((), task_type)
    for name, value in setup.get("options", {}).items():
        if value != defaults.get(name):
            shown = ",".join(value) if isinstance(value, list) else value
            flags += ["--option", f"{name}={shown}"]
    return flags
