"""The AI providers whose workers okstra dispatches, and the models each can run. Pure.

One catalogue for every place that names a model: the wizard's model questions, the critic
opt-in (``run start --critic PROVIDER[:MODEL]``) and what the run record keeps.
"""

from __future__ import annotations

PROVIDERS = ("claude", "codex", "gemini")

DEFAULT_MODEL = "default"
"""A model answer meaning "the phase's default model"."""

MODELS = {
    "claude": ("opus", "sonnet", "haiku"),
    "codex": ("gpt-5", "gpt-5-codex"),
    "gemini": ("gemini-2.5-pro", "gemini-2.5-flash"),
}
"""The models each provider's worker can run, besides :data:`DEFAULT_MODEL`."""
