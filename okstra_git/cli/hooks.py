"""``git okstra hooks``: install, remove and inspect the pre-push hook; ``run`` is its entry.

``hooks run …`` runs on every push: it imports the gate alone (``services/gatecheck.py``), which
reads the repository through git's plumbing, never pygit2.
"""

from __future__ import annotations

from ..views import Output
from .declare import Arg, command, group

TYPE_CHECKING = False  # no typing import on every push
if TYPE_CHECKING:
    from ..services.gatecheck import Outcome

group("hooks", "The pre-push hook that enforces the verification gate.")


@command(
    "hooks install",
    "Install the gate where git runs it for pushes from here, beside the hook manager in use.",
    Arg(
        "--force",
        "When a foreign hook AND an earlier kept-aside hook both exist, chain the current one "
        "and keep the older under a timestamped name.",
        flag=True,
    ),
    Arg(
        "--server",
        "Install contrib's pre-receive hook into this bare repository instead.",
        metavar="BARE_REPO",
        complete="dir",
    ),
    Arg("--update", "With --server: install the per-ref update hook too.", flag=True),
    about="No core.hooksPath: pre-push in the common git dir's hooks/ (a hook already there is "
    "kept as pre-push.okstra-chained and runs first, with the same arguments and stdin); "
    "pre-commit owns pre-push: pre-push.legacy, which pre-commit runs first on every push. "
    "husky, lefthook, or a core.hooksPath inside the work tree: writes nothing and refuses, "
    "printing the exact line (or lefthook script) for the team's own hook.",
)
def install(force: bool, server: str | None, update: bool) -> Output:
    from pathlib import Path

    from ..core.errors import BadInput
    from ..services import hooks as hookinstall
    from ..views.hooks import installed

    if update and server is None:
        raise BadInput("--update goes with --server BARE_REPO")
    if server is not None:
        outcome = hookinstall.install_server(Path(server), update, force)
    else:
        outcome = hookinstall.install(Path.cwd(), force)
    return installed(outcome)


@command(
    "hooks uninstall",
    "Remove okstra's hook scripts and put back the hooks they chained, byte for byte.",
    about="Never edits a team's hook: when the gate still runs from one, says so.",
)
def uninstall() -> Output:
    from pathlib import Path

    from ..services import hooks as hookinstall
    from ..views.hooks import installed

    return installed(hookinstall.uninstall(Path.cwd()))


@command(
    "hooks status",
    "Which hook manager is in use, where the gate lives, and whether a push runs it.",
    about="Follows what git runs for a push from this worktree and from every other worktree "
    "of the repository; also prints the gate's settings. Exits 1, after saying what is wrong "
    "and how to fix it, whenever a push would not run the gate (from here or another "
    "worktree), would not upload the LFS objects of a repository that uses git-lfs, or the "
    "gate's settings cannot be read (the gate then refuses every gated push).",
)
def status() -> Output:
    from pathlib import Path

    from ..services.hooks import hook_status
    from ..views.hooks import status as view

    return view(hook_status(Path.cwd()))


# -- the hook entries: stdin in, exit 1 when a ref update fails the gate --------------------


@command(
    "hooks run pre-push",
    "Check the refs git is about to push; exit 1 when one fails the gate.",
    Arg(
        "remote",
        "The remote's name, as git passes it.",
        metavar="REMOTE",
        optional=True,
        default="",
    ),
    Arg("url", "The remote's URL, as git passes it.", metavar="URL", optional=True, default=""),
    Arg(
        "--from-env",
        "As pre-commit's okstra-gate hook: pass when okstra's full gate runs on this push "
        "(pre-push.legacy), else check the one ref pre-commit names and refuse.",
        flag=True,
    ),
    Arg(
        "--require-refs",
        "Refuse when stdin names no ref (a hook manager that did not pass git's stdin on).",
        flag=True,
    ),
    about="stdin: '<local ref> <local sha> <remote ref> <remote sha>' lines. The entry the "
    "installed hook script calls.",
)
def pre_push(remote: str, url: str, from_env: bool, require_refs: bool) -> Output:
    # The hook script's own command line (no option) is run as this by entry._pre_push,
    # without the dispatcher: keep the two alike (tests/services/test_hooks.py compares them).
    from ..services import gatecheck

    return _hook(gatecheck.pre_push(from_env, require_refs))


@command(
    "hooks run pre-receive",
    "Server side: check every ref update of a push being received.",
    about="stdin: '<old> <new> <ref>' lines. On GitLab, messages start with GL-HOOK-ERR:.",
)
def pre_receive() -> Output:
    from ..services import gatecheck

    return _hook(gatecheck.pre_receive())


@command(
    "hooks run update",
    "Server side, one ref: the update hook's REF OLD NEW.",
    Arg("ref", "The ref being updated.", metavar="REF"),
    Arg("old", "Its current value (zeros: created).", metavar="OLD"),
    Arg("new", "Its new value (zeros: deleted).", metavar="NEW"),
)
def update(ref: str, old: str, new: str) -> Output:
    from ..services import gatecheck

    return _hook(gatecheck.update(ref, old, new))


def _hook(outcome: Outcome) -> Output:
    from ..views.gate import hook_ran

    return hook_ran(outcome)
