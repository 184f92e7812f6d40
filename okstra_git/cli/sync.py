"""``git okstra sync``: exchange okstra's refs and notes with a remote."""

from __future__ import annotations

import typer

from ..errors import BadInput
from ..services import sync as sync_service
from ..services.context import open_context
from .output import JSON_OPTION, emit, finish


def sync(
    remote: str | None = typer.Argument(
        None, help="The remote (default: the branch's remote, else origin, else the only one)."
    ),
    fetch_only: bool = typer.Option(
        False, "--fetch-only", help="Fetch and merge into local refs; push nothing."
    ),
    push_only: bool = typer.Option(
        False, "--push-only", help="Push with leases from the last fetch; fetch nothing."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Fetch refs/okstra/* and refs/notes/okstra/*, fast-forward or merge, push with leases.

    Notes merge line by line (cat_sort_uniq), task and claim refs only fast-forward (a
    divergence is reported and exits 1); the push is atomic and leased on what was fetched.
    """
    if fetch_only and push_only:
        raise BadInput("--fetch-only and --push-only exclude each other; give at most one")
    report = sync_service.sync(
        open_context(), remote, do_fetch=not push_only, do_push=not fetch_only
    )
    emit(as_json, report.to_data(), _text(report))
    if report.diverged:
        names = ", ".join(r.ref for r in report.diverged)
        first = report.diverged[0]
        track = sync_service.tracking_name(report.remote, first.ref)
        typer.echo(
            f"git okstra: {names} diverged from {report.remote} (both sides have commits the "
            f"other lacks); nothing was overwritten and they were not pushed. Compare with "
            f"`git log --oneline {first.ref}...{track}`; to take the remote's side: "
            f"`git update-ref {first.ref} {first.remote} {first.local}`",
            err=True,
        )
        finish(1)


def _text(report: sync_service.SyncReport) -> str:
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
