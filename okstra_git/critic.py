"""The critic pass (SPEC §10; seed 000, 2026-06-04/05 designs). Pure: plain data, no git.

A run opts into a critic at set-up (``convergence.critic``: enabled, provider, model). In the
finding phases the critic hunts for what the workers missed (``coverage``); in
final-verification it is the acceptance devil's advocate, proposing candidate blockers that
:func:`merge` confirms or downgrades — never drops.
"""

from __future__ import annotations

from typing import Any

from .errors import BadInput
from .providers import DEFAULT_MODEL, MODELS, PROVIDERS

CRITIC_PHASES = (
    "requirements-discovery",
    "error-analysis",
    "implementation-planning",
    "final-verification",
)
"""Phases with a critic pass: coverage for the finding phases, devil's advocate for the last."""

COVERAGE = "coverage"
DEVILS_ADVOCATE = "acceptance-devils-advocate"


def critic_mode(task_type: str) -> str:
    return DEVILS_ADVOCATE if task_type == "final-verification" else COVERAGE


def critic_block(provider: str, model: str, task_type: str) -> dict[str, Any]:
    """An enabled ``convergence.critic`` block for a run of ``task_type``."""
    return {"enabled": True, "provider": provider, "model": model, "mode": critic_mode(task_type)}


def parse_critic(text: str, task_type: str) -> dict[str, Any]:
    """``PROVIDER[:MODEL]`` (``run start --critic``) as a ``convergence.critic`` block, or
    BadInput naming what is wrong."""
    if task_type not in CRITIC_PHASES:
        raise BadInput(
            f"--critic: {task_type} runs have no critic pass; it applies to "
            f"{', '.join(CRITIC_PHASES)}"
        )
    provider, _, model = text.partition(":")
    if provider not in PROVIDERS:
        raise BadInput(f"--critic {text!r}: the provider must be one of {', '.join(PROVIDERS)}")
    model = model or DEFAULT_MODEL
    if model != DEFAULT_MODEL and model not in MODELS[provider]:
        raise BadInput(
            f"--critic {text!r}: a {provider} model is one of {', '.join(MODELS[provider])} "
            "(or leave it out for the phase's default)"
        )
    return critic_block(provider, model, task_type)
