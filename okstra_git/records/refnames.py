"""The names of the refs okstra writes, which a fetched ref must have before ``sync`` looks at
its records (``incoming``): task refs, claim refs, and the notes refs sync exchanges. Kept apart
from ``incoming`` so a sync with nothing to adopt loads none of its record checks."""

from __future__ import annotations

import re

from ..core.tracking import TASKS_PREFIX
from .approval import APPROVALS_REF
from .claim import CLAIMS_PREFIX
from .verdict import VERDICTS_REF

_SLUG = r"[a-z0-9][a-z0-9._-]*"
TASK_REF = re.compile(rf"{TASKS_PREFIX}(?P<suffix>{_SLUG}/{_SLUG})")
CLAIM_REF = re.compile(rf"{CLAIMS_PREFIX}(?P<suffix>{_SLUG}/{_SLUG})/stage-(?P<stage>[1-9][0-9]*)")
NOTES_REFS = (APPROVALS_REF, VERDICTS_REF)
"""The notes refs sync exchanges; no other is adopted."""


def ref_problems(ref: str) -> list[str]:
    """Why ``ref`` (under ``refs/okstra/``) is not a name okstra writes."""
    if TASK_REF.fullmatch(ref) or CLAIM_REF.fullmatch(ref):
        return []
    return [
        f"{ref}: not an okstra task or claim ref "
        "(refs/okstra/tasks/<group>/<id> or refs/okstra/claims/<group>/<id>/stage-<N>)"
    ]
