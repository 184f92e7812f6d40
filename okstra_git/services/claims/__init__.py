"""Stage claims: take a batch (``claim``), finish it (``done``) or give it back (``release``);
``remote`` shares each through a remote in one atomic leased push."""

from .claim import ClaimResult, Placement, claim, resume
from .common import RUN_TYPE
from .done import DoneResult, done
from .release import ReleaseResult, release

__all__ = [
    "RUN_TYPE",
    "ClaimResult",
    "DoneResult",
    "Placement",
    "ReleaseResult",
    "claim",
    "done",
    "release",
    "resume",
]
