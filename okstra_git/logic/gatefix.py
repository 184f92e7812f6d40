"""The fix a refusal of the verification gate prints (``Fix: …``), from what the refusal found:
the task the refused commit is of, the task worktree it is checked out in, the gate's side.
Pure; loaded only when the gate refuses (an accepted push loads none of it).

What it says to run is the task's next step (docs/workflow.md: one function computes it, and
``task status`` prints it): ``verify target`` prints the target alone, and the report data file
that ``verify record`` takes is named by the final-verification run's own next step — so the
fix names that step, never a ``verify record`` with a made-up report path.
"""

from __future__ import annotations

from ..core.shell import command, okstra


def usable_key(key: str) -> str | None:
    """``key`` when a command could take it: a task key read from a note or a record is
    untrusted, and one no command could take (a line break, a control character, not three
    parts) is never shown."""
    from ..core.keys import part_problem

    parts = key.split(":")
    if len(parts) != 3 or any(map(part_problem, parts)):
        return None
    return key


def fix_text(
    commit: str,
    key: str | None,
    worktree: str | None,
    side: str,
    signed: bool,
    fetch_from: str | None = None,
    no_notes: bool = False,
) -> str:
    """What to run so that ``commit`` passes: for ``key`` (None: unknown, said as ``KEY``),
    in ``worktree`` when it is known (``git -C`` it: the command runs from any folder), for
    the gate's ``side`` (``client``, ``server`` or ``ci``); ``signed``: verdicts must be signed;
    ``fetch_from``: the remote ``ci check`` offers to fetch from, and ``no_notes``: this clone
    has no verdict notes at all."""
    verify = _verify(commit, key, worktree, signed)
    if side == "server":
        return (
            f"{verify}, and push the verdict notes with the branch: `git push REMOTE "
            "refs/notes/okstra/verdicts <branch>` (or `git okstra sync REMOTE` first)."
        )
    if side == "ci":
        if fetch_from is not None and no_notes:
            # No verdict notes here at all: a CI clone that never fetched them, the usual
            # case when the verdict exists on the remote. Fetching is the fix then.
            fetch = okstra("ci", "check", commit, "--fetch", fetch_from)
            return (
                f"fetch the verdict notes first: `{fetch}` (a clone has none until they "
                f"are fetched). If no verdict was recorded yet: {verify}, then "
                f"`{okstra('sync', fetch_from)}` to publish it."
            )
        return (
            f"{verify}, then `git okstra sync` to publish the verdict notes; fetch them "
            "here with `git okstra ci check --fetch REMOTE`."
        )
    return (
        f"{verify}. If the verdict was recorded on another machine, fetch it first: "
        "`git okstra sync`."
    )


def _verify(commit: str, key: str | None, worktree: str | None, signed: bool) -> str:
    status = (
        command("git", "-C", worktree, "okstra", "task", "status", key or "KEY")
        if worktree is not None
        else okstra("task", "status", key or "KEY")
    )
    place = (
        f"in the task worktree {worktree} (its HEAD is {commit[:12]})"
        if worktree is not None
        else f"in the task worktree whose HEAD is {commit[:12]}"
    )
    unknown = "" if key else " (KEY: the task's key, as `git okstra task list` lists them)"
    sign = " (its `verify record` with --sign: okstra.gate.allowedSigners is set)" if signed else ""
    return (
        f"verify it {place}: run `{status}`{unknown}, then the next command it prints{sign} "
        "— once every stage is in, the final-verification run, whose own next step names the "
        "report data file and the exact `verify record` command that records its verdict"
    )
