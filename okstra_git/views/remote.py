"""How a task's refs stand against a remote's fetched copies, as every read's ``--json``
gives it (``remoteLag``), and the sentence every read says when they lag."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..services.remoteview import Lag


def lag_data(lag: Lag) -> dict[str, str | None]:
    """One entry of ``remoteLag``."""
    return {
        "remote": lag.remote,
        "ref": lag.ref,
        "state": lag.state,
        "local": lag.local,
        "remoteValue": lag.there,
    }


def lags_data(lags: Iterable[Lag]) -> list[dict[str, str | None]]:
    """``remoteLag``: one entry a ref that differs."""
    return [lag_data(lag) for lag in lags]


def notice(what: str, lags: list[Lag]) -> str | None:
    """The one sentence every reader prints when its local view is out of date."""
    from ..core.shell import okstra

    stale = [lag for lag in lags if lag.stale]
    if not stale:
        return None
    remote = stale[0].remote
    refs = ", ".join(f"{lag.ref} {lag.state.replace('-', ' ')}" for lag in stale[:3])
    more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
    return (
        f"{what} here is older than what was fetched from {remote} ({refs}{more}); this shows "
        f"the local records. Bring them in step with: {okstra('sync', remote)}"
    )
