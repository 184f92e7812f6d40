"""``git okstra sync``: exchange okstra's refs and notes with a remote."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..views import Output
from .declare import Arg, command

if TYPE_CHECKING:
    from ..services.sync import SyncReport


@command(
    "sync",
    "Fetch refs/okstra/* and refs/notes/okstra/*, fast-forward or merge, push with leases.",
    Arg(
        "remote",
        "The remote (default: the branch's remote, else origin, else the only one).",
        metavar="REMOTE",
        optional=True,
        complete="remote",
    ),
    Arg("--fetch-only", "Fetch and merge into local refs; push nothing.", flag=True),
    Arg("--push-only", "Push with leases from the last fetch; fetch nothing.", flag=True),
    about="Notes merge line by line (cat_sort_uniq), task and claim refs only fast-forward (a "
    "divergence is reported and exits 1); the push is atomic and leased on what was fetched.",
)
def sync(remote: str | None, fetch_only: bool, push_only: bool) -> Output:
    from ..errors import BadInput
    from ..services import sync as sync_service
    from ..services.context import open_context
    from ..shell import command as quoted

    if fetch_only and push_only:
        raise BadInput("--fetch-only and --push-only exclude each other; give at most one")
    report = sync_service.sync(
        open_context(), remote, do_fetch=not push_only, do_push=not fetch_only
    )
    if not report.diverged:
        return Output(report.to_data(), _text(report))
    names = ", ".join(r.ref for r in report.diverged)
    first = report.diverged[0]
    track = sync_service.tracking_name(report.remote, first.ref)
    error = (
        f"{names} diverged from {report.remote} (both sides have commits the other lacks); "
        f"nothing was overwritten and they were not pushed. Compare with "
        f"`{quoted('git', 'log', '--oneline', f'{first.ref}...{track}')}`; to take the "
        f"remote's side: `{quoted('git', 'update-ref', first.ref, first.remote, first.local)}`"
    )
    return Output(
        report.to_data(), _text(report), err=f"git okstra: {error}\n", code=1, error=error
    )


def _text(report: SyncReport) -> str:
    how = "fetched" if report.fetched else "no fetch"
    tries = f"{report.attempts} attempt" + ("s" if report.attempts != 1 else "")
    lines = [f"okstra sync with {report.remote} ({how}, {tries})"]
    for state in report.refs:
        if state.state == "same":
            continue
        local, remote, new = (v[:12] if v else "-" for v in (state.local, state.remote, state.new))
        said = {
            "fetched": f"fetched {remote}",
            "fast-forwarded": f"fast-forwarded {local} → {new}",
            "merged": f"merged the remote's {remote} into {local} → {new}",
            "ahead": f"ahead of the remote ({remote} → {local})",
            "local-only": f"not on the remote yet ({local})",
            "diverged": f"DIVERGED: here {local}, remote {remote}",
        }[state.state]
        pushed = "; pushed" if state.ref in report.pushed else ""
        lines.append(f"  {state.ref}: {said}{pushed}")
    unchanged = sum(1 for r in report.refs if r.state == "same")
    lines.append(f"{unchanged} ref(s) already in step; {len(report.pushed)} pushed")
    return "\n".join(lines)
