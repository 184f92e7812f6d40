"""What ``git okstra hooks run …`` does (``ci check`` is ``cicheck.py``).

This runs on every push, so this module and the gate load a few stdlib modules and read the
repository through git's plumbing (``plumbing.py``), never pygit2. Its declarations are in
``cli/hooks.py``.
"""

from __future__ import annotations

import sys

from ..core.errors import BadInput, OkstraError
from ..core.lightos import getenv
from ..core.values import Value
from ..gate.config import GateConfig
from ..gate.decision import VERDICTS_REF, Decision, is_zero, okstra_data, only_commit_chains

TYPE_CHECKING = False  # no typing import on every push
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..gate.judge import Gate
    from ..git.plumbing import ObjectReader
    from .hooks import Runs

ZERO = "0" * 40
_GITLAB_ENV = ("GL_ID", "GL_REPOSITORY", "GL_PROJECT_PATH")
_PUSH_LINE = "<local ref> <local sha> <remote ref> <remote sha>"
_RECEIVE_LINE = "<old> <new> <ref>"


class Outcome(Value):
    """What a hook run decided, and what it has to say besides its decisions (which
    ``views/gate.py`` words)."""

    hook: str
    """``pre-push``, ``pre-receive`` or ``update``: the hook whose lines these are."""
    code: int
    """The hook's exit code (0 lets the push through)."""
    decisions: list[Decision]
    """The gate's answer for every ref update (empty when the input was unusable)."""
    gitlab: bool = False
    """Said as GitLab shows a server hook's lines (``GL-HOOK-ERR:``)."""
    said: str | None = None
    """What else there is to say: ``nothing-to-push`` (an empty stdin that is git's own),
    ``no-refs`` (an empty stdin that may be lefthook's: stopped), ``full-gate`` (pre-commit's
    stage: okstra's full gate checked every ref, as ``runs`` says), ``pre-commit-only``
    (pre-commit's stage without the full gate: stopped, ``runs`` says why) or
    ``pre-commit-no-ref`` (that, and pre-commit handed no ref)."""
    runs: Runs | None = None
    """How a push from here runs the full gate, or why not (pre-commit's stage)."""
    failed: str | None = None
    """The error that stopped a server hook before it decided anything."""


# -- client side ------------------------------------------------------------------------------


def pre_push(from_env: bool, require_refs: bool = False) -> Outcome:
    """Client side: the refs git is about to push (stdin lines), or, as pre-commit's
    ``okstra-gate`` hook, :func:`_pre_commit_stage`."""
    if from_env:
        return _pre_commit_stage()
    updates = [
        (remote_ref, remote_sha, local_sha)
        for _local_ref, local_sha, remote_ref, remote_sha in _stdin_lines("pre-push", _PUSH_LINE)
    ]
    if require_refs and not updates and _stdin_was_ours():
        return Outcome("pre-push", 0, [], said="nothing-to-push")
    if require_refs and not updates:
        return Outcome("pre-push", 1, [], said="no-refs")
    decisions = _decide(updates, "client")
    return Outcome("pre-push", _exit_code(decisions), decisions)


def _stdin_was_ours() -> bool:
    """Under lefthook (``--require-refs``): its config in this work tree gives stdin to
    okstra's script alone, so an empty stdin means git had nothing to send."""
    from ..logic import hooklayout as L

    texts = []
    for name in L.LEFTHOOK_CONFIG_NAMES:
        try:
            with open(name, encoding="utf-8", errors="replace") as fh:
                texts.append(fh.read())
        except OSError:
            continue
    return bool(texts) and L.lefthook_stdin_only_ours(texts)


def _pre_commit_stage() -> Outcome:
    """pre-commit's ``okstra-gate`` hook (``.pre-commit-hooks.yaml``).

    pre-commit hands a hook one pushed ref at most — the first with commits the remote lacks —
    and runs no hook at all for a deletion or a ref made of commits the remote has. So this
    passes only when okstra's full gate runs on the push (pre-commit runs ``pre-push.legacy``
    first, with every ref); otherwise it checks the one ref it was given and refuses, naming
    the command that installs the full gate.
    """
    from pathlib import Path

    from . import hooks as hookinstall

    runs = hookinstall.runs_gate(hookinstall.layout(Path.cwd()))
    if runs.runs:
        return Outcome("pre-push", 0, [], said="full-gate", runs=runs)
    updates = _pre_commit_update()
    checked = _decide(updates, "client")
    said = "pre-commit-only" if updates else "pre-commit-no-ref"
    return Outcome("pre-push", 1, checked, said=said, runs=runs)


def _stdin_lines(hook: str, shape: str) -> list[list[str]]:
    """The fields of every non-blank stdin line, each line checked against ``shape``."""
    width = shape.count("<")  # one field per <placeholder>
    lines = []
    for number, line in enumerate(sys.stdin.read().splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != width:
            raise BadInput(f"{hook} stdin line {number} {line!r}: expected '{shape}'")
        lines.append(fields)
    return lines


def _decide(updates: list[tuple[str, str, str]], side: str) -> list[Decision]:
    """Decide every ``(ref, old, new)``; the repository is read only if a verdict is needed.

    okstra's own refs pass before the config is read, so a config the gate refuses (it fails
    closed) still lets ``sync`` publish the verdicts that will be needed. A server first
    resolves each pushed ref through its symbolic refs (a push to one moves the ref it names)
    and refuses replace refs.
    """
    if side != "server":
        return _judge(updates, side, [okstra_data(ref, new) for ref, _old, new in updates])
    from ..gate.decision import replace_refused
    from ..git.plumbing import symbolic_targets

    aliases = symbolic_targets(ref for ref, _old, _new in updates)
    moved = [(aliases.get(ref, ref), old, new) for ref, old, new in updates]
    first = [replace_refused(ref, new) or okstra_data(ref, new) for ref, _old, new in moved]
    decisions = _judge(moved, side, first)
    return [
        decision
        if pushed == decision.ref or decision.allowed
        else decision.replace(pushed_as=pushed)
        for (pushed, _old, _new), decision in zip(updates, decisions, strict=True)
    ]


def _judge(
    updates: list[tuple[str, str, str]], side: str, first: list[Decision | None]
) -> list[Decision]:
    """:func:`_decide` once ``first`` holds what was decided before the config is read."""
    if all(decision is not None for decision in first):
        return only_commit_chains([d for d in first if d is not None])
    config = GateConfig.load()
    quick = [
        done or config.quick(ref, old, new)
        for done, (ref, old, new) in zip(first, updates, strict=True)
    ]
    if all(decision is not None for decision in quick):
        return only_commit_chains([d for d in quick if d is not None])
    from ..git.plumbing import ObjectReader

    with ObjectReader() as objects:
        gate = _open_gate(objects, config, side, updates)
        return only_commit_chains(
            [
                decision if decision is not None else gate.check(ref, old, new)
                for decision, (ref, old, new) in zip(quick, updates, strict=True)
            ]
        )


def _open_gate(
    objects: ObjectReader, config: GateConfig, side: str, updates: list[tuple[str, str, str]]
) -> Gate:
    """A gate over the repository here; server side it also sees the push being received.

    Since git 2.11 the pushed objects wait in a quarantine folder until the hooks pass; the
    ``git`` the gate reads through finds them there (git passes the quarantine to its hooks
    in the environment). A verdict notes commit pushed in the same push counts, so
    `git push origin refs/notes/okstra/verdicts main` lands both together.
    """
    from ..gate.judge import Gate

    if side != "server":
        return Gate(objects, config, side=side)
    pushed = {
        f"{ref} (being pushed)": new
        for ref, _old, new in updates
        if ref == VERDICTS_REF and not is_zero(new)
    }
    return Gate(objects, config, extra_notes=pushed, side=side)


def _pre_commit_update() -> list[tuple[str, str, str]]:
    """The one ref pre-commit's pre-push stage hands a hook (it forwards no stdin).

    For a push that carries the root commit (a branch's first push to an empty remote)
    pre-commit sets no PRE_COMMIT_TO_REF, only the local ref as typed: resolve that, or that
    push would pass unchecked.
    """
    ref = getenv("PRE_COMMIT_REMOTE_BRANCH")
    local = getenv("PRE_COMMIT_LOCAL_BRANCH")
    new = getenv("PRE_COMMIT_TO_REF") or (_rev_parse(local) if local else None)
    if not new:  # nothing to check (said by the view)
        return []
    if not ref:
        raise BadInput(
            "okstra pre-push --from-env: PRE_COMMIT_REMOTE_BRANCH is not set, so the pushed ref "
            "is unknown; use pre-commit >= 3.2 or `git okstra hooks install`"
        )
    return [(ref, getenv("PRE_COMMIT_FROM_REF") or ZERO, new)]


def _rev_parse(rev: str) -> str:
    """The commit ``rev`` names, by ``git rev-parse`` (this path loads no pygit2)."""
    from ..git.plumbing import git_output

    code, out, _ = git_output(
        "rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"
    )
    if code != 0:
        raise BadInput(
            f"okstra pre-push --from-env: PRE_COMMIT_LOCAL_BRANCH {rev!r} does not name a commit "
            "here, so the pushed commit is unknown; push again, or check it with "
            "`git okstra ci check REV`"
        )
    return out.decode("utf-8", "surrogateescape").strip()


# -- server side ------------------------------------------------------------------------------


def pre_receive() -> Outcome:
    def updates() -> list[tuple[str, str, str]]:
        return [(ref, old, new) for old, new, ref in _stdin_lines("pre-receive", _RECEIVE_LINE)]

    return _server_hook("pre-receive", updates)


def update(ref: str, old: str, new: str) -> Outcome:
    return _server_hook("update", lambda: [(ref, old, new)])


def _server_hook(kind: str, read: Callable[[], list[tuple[str, str, str]]]) -> Outcome:
    """Server side, every error is reported as the hook's own output (GitLab shows only
    ``GL-HOOK-ERR:`` lines), not only the gate's refusals."""
    gitlab = any(getenv(name) for name in _GITLAB_ENV)
    try:
        decisions = _decide(read(), "server")
    except OkstraError as exc:
        return Outcome(kind, exc.exit_code, [], gitlab, failed=str(exc))
    return Outcome(kind, _exit_code(decisions), decisions, gitlab)


def _exit_code(decisions: list[Decision]) -> int:
    return 0 if all(decision.allowed for decision in decisions) else 1
