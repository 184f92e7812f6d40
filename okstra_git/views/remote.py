"""How a task's refs stand against a remote's fetched copies, as every read's ``--json``
gives it (``remoteLag``)."""

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
