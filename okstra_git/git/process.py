"""Starting ``git`` as a child process, for what needs the git CLI itself: fetch and push (the
user's credentials and transports), checking out a new worktree (git's checkout is several
times libgit2's on a large tree), hook installation asking git where hooks run, completion
listing refs, and the demo running commands as a user types them.

The pre-push hook and ``ci check`` do not come here: ``plumbing`` starts git without loading
``subprocess`` (it costs ~4 ms on every push). Nor does :func:`git` load it for a git run in
this process's folder (a claim or done through a remote: ``ls-remote`` and ``push``);
:func:`run` and the progress meters do.
"""

from __future__ import annotations

import contextlib
import os
import sys
from _thread import _local  # threading's own local: importing threading costs ~1 ms
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ..core.errors import BadInput


class _Finished:
    """What :func:`git` gives without ``subprocess``: the fields of its ``CompletedProcess``."""

    def __init__(self, args: list[str], returncode: int, stdout: str, stderr: str) -> None:
        self.args, self.returncode, self.stdout, self.stderr = args, returncode, stdout, stderr


TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, Protocol

    class Completed(Protocol):
        """A finished git process: ``returncode``, ``stdout`` and ``stderr`` as text."""

        args: Any
        returncode: int
        stdout: str
        stderr: str

else:
    Completed = _Finished


_quiet = _local()
"""``vars``: cwd → the variables every git this thread starts inside :func:`no_prompts` gets."""


@contextlib.contextmanager
def no_prompts() -> Iterator[None]:
    """Every git this thread starts meanwhile fails at once where it would ask for a credential
    (docs/concurrency-and-sync.md): for network calls the user did not ask for — the probe
    whether a remote holds a missing task, a served board's refresh, a claim renewed while an
    agent's command runs — where a prompt on the terminal would wait for an answer nobody
    knows is wanted, or fight the agent's command for the terminal. What the user asked for
    (``sync``, ``--remote``, ``--fetch``) prompts as git does."""
    outer = getattr(_quiet, "vars", None)
    if outer is None:
        _quiet.vars = {}
    try:
        yield
    finally:
        if outer is None:
            _quiet.vars = None


def _no_prompt_vars(cwd: str | Path | None) -> dict[str, str]:
    """git's terminal prompt and every askpass program off (an empty ``GIT_ASKPASS`` stops git
    falling back to ``core.askPass`` or ``SSH_ASKPASS``), and ssh in batch mode: the user's ssh
    command (``GIT_SSH_COMMAND``, else ``core.sshCommand`` of the repository in ``cwd``) keeps
    its options, ``-o BatchMode=yes`` comes after them. A ``GIT_SSH`` program is left as it
    is: it may not be ssh (plink takes no ``-o``)."""
    found = {
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "",
        "SSH_ASKPASS_REQUIRE": "never",
        "GCM_INTERACTIVE": "never",  # Git Credential Manager's own window
    }
    ssh = os.environ.get("GIT_SSH_COMMAND")
    if ssh is None:
        import subprocess

        proc = subprocess.run(
            ["git", "config", "core.sshCommand"],
            cwd=cwd,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            encoding="utf-8",
            errors="surrogateescape",
        )
        ssh = proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None
    if ssh is None and "GIT_SSH" not in os.environ:
        ssh = "ssh"
    if ssh is not None:
        found["GIT_SSH_COMMAND"] = f"{ssh} -o BatchMode=yes"
    return found


def _env(env: Mapping[str, str] | None, cwd: str | Path | None) -> dict[str, str] | None:
    """The environment of a git started now in ``cwd``: ``env`` (default: this process's),
    inside :func:`no_prompts` with its prompts off."""
    quiet = getattr(_quiet, "vars", None)
    if quiet is None:
        return None if env is None else dict(env)
    where = str(cwd or "")
    if where not in quiet:
        quiet[where] = _no_prompt_vars(cwd)
    return {**(os.environ if env is None else env), **quiet[where]}


def run(
    argv: Sequence[str],
    cwd: str | Path | None = None,
    *,
    check: bool = False,
    stdin: str | None = None,
) -> Completed:
    """Run ``argv`` (``git …``, or this installation's ``git okstra``) in ``cwd`` with
    ``stdin`` as its input (None: none); output captured as text. ``check`` raises
    CalledProcessError on a non-zero exit."""
    import subprocess

    return subprocess.run(
        list(argv),
        cwd=cwd,
        env=_env(None, cwd),
        # git writes UTF-8 (paths as stored): read so under any locale, and bytes that are not
        # UTF-8 (a file name) kept as they are, not lost to the locale's charset.
        encoding="utf-8",
        errors="surrogateescape",
        capture_output=True,
        input=stdin,
        stdin=subprocess.DEVNULL if stdin is None else None,
        check=check,
    )


def git(cwd: str | Path | None, *args: str) -> Completed:
    """``git ARGS`` in ``cwd``: what :func:`run` gives. Started in this process's own folder
    (a command run at the top of the clone), it does not load ``subprocess``: ``os.posix_spawnp``
    starts git, with the very same argv, environment and folder."""
    argv = ["git", *args]
    if not hasattr(os, "posix_spawnp") or not _here(cwd):
        return run(argv, cwd)  # posix_spawnp cannot start a process in another folder
    env = _env(None, cwd)
    with open(os.devnull, "rb") as null:
        ends = [os.pipe(), os.pipe()]  # (read, write) each; both ends close on exec
        try:
            pid = os.posix_spawnp(
                "git",
                argv,
                os.environ if env is None else env,
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, null.fileno(), 0),
                    (os.POSIX_SPAWN_DUP2, ends[0][1], 1),
                    (os.POSIX_SPAWN_DUP2, ends[1][1], 2),
                ],
            )
        except BaseException:
            for fd in (*ends[0], *ends[1]):
                os.close(fd)
            raise
    os.close(ends[0][1])
    os.close(ends[1][1])
    try:
        out, err = _read_both(ends[0][0], ends[1][0])
    except BaseException:  # interrupted: git goes too, as subprocess.run kills its child
        import signal

        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return _Finished(argv, code, _text(out), _text(err))


def _here(cwd: str | Path | None) -> bool:
    """Whether ``cwd`` is this process's folder (None: it is)."""
    if cwd is None:
        return True
    try:
        return os.path.samestat(os.stat(cwd), os.stat("."))
    except OSError:  # gone (subprocess says so), or not ours to enter
        return False


def _read_both(out_fd: int, err_fd: int) -> tuple[bytes, bytes]:
    """Everything written to two pipes until both close (then closed), served as they are
    ready so neither fills up and stalls the writer."""
    import select

    chunks: dict[int, list[bytes]] = {out_fd: [], err_fd: []}
    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    open_fds = len(chunks)
    while open_fds:
        for fd, _event in poller.poll():
            data = os.read(fd, 65536)
            if data:
                chunks[fd].append(data)
                continue
            poller.unregister(fd)
            os.close(fd)
            open_fds -= 1
    return b"".join(chunks[out_fd]), b"".join(chunks[err_fd])


def _text(data: bytes) -> str:
    """Output as ``subprocess.run(..., encoding="utf-8", errors="surrogateescape")`` reads it:
    git writes UTF-8 (paths as stored), bytes that are not UTF-8 kept as they are, and line ends
    made ``\n`` as text mode makes them."""
    return data.decode("utf-8", "surrogateescape").replace("\r\n", "\n").replace("\r", "\n")


def git_text(cwd: Path, *args: str, check: bool = True) -> str:
    """The stripped stdout of ``git ARGS`` in ``cwd``; with ``check``, a failure is BadInput
    naming the folder and git's own message."""
    proc = git(cwd, *args)
    if check and proc.returncode != 0:
        raise BadInput(f"{cwd}: git {args[0]} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


REPOSITORY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
)
"""Variables that choose the repository, work tree, index or object store a git process works
on (a server hook's quarantine sets the last two): a child given its own
(``repository_env``) must not mix them with ones inherited from whoever ran okstra (a hook,
an alias)."""


def repository_env(**chosen: str) -> dict[str, str]:
    """This process's environment without :data:`REPOSITORY_ENV`, plus ``chosen``."""
    env = {k: v for k, v in os.environ.items() if k not in REPOSITORY_ENV}
    return {**env, **chosen}


_meters_off = 0
"""How many :func:`no_progress` blocks are open (in any thread)."""


@contextlib.contextmanager
def no_progress() -> Iterator[None]:
    """No git started meanwhile, by any thread, shows its progress meter: for a command that
    says its own progress one line per step (``git okstra work``), where each claim's push
    drawing git's meter would bury those lines."""
    global _meters_off
    _meters_off += 1
    try:
        yield
    finally:
        _meters_off -= 1


def shows_progress() -> bool:
    """Whether progress meters are shown: only when stderr is a terminal, as git does, and no
    :func:`no_progress` block is open."""
    return not _meters_off and sys.stderr.isatty()


def run_showing_progress(
    argv: Sequence[str],
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    *,
    keep_fds: Sequence[int] = (),
    title: str = "",
    stdin: str | None = None,
) -> Completed:
    """Run ``argv`` in ``cwd`` with ``env`` (default: this process's) and ``stdin`` as its
    input (None: none); its output captured as text, as :func:`run` does. When
    :func:`shows_progress`, its stderr (git's progress meter, ``\r``-updated) is also passed on
    as it comes, after ``title`` on a line of its own; otherwise it is only collected (the
    caller asks git for no meter then).

    ``keep_fds`` stay open in the child: a lock held on one is held until the child exits too,
    so a process that outlives this one (this one killed) still holds it."""
    import subprocess
    import tempfile

    shown = shows_progress()
    with contextlib.ExitStack() as files:
        # files, not pipes: one pipe is read at a time
        out = files.enter_context(tempfile.TemporaryFile())
        given: int | IO[bytes] = subprocess.DEVNULL
        if stdin is not None:  # a file only for input there is (a checkout has none)
            given = files.enter_context(tempfile.TemporaryFile())
            given.write(stdin.encode("utf-8", "surrogateescape"))
            given.seek(0)
        proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=_env(env, cwd),
            stdin=given,
            stdout=out,
            stderr=subprocess.PIPE,
            pass_fds=tuple(keep_fds),
        )
        assert proc.stderr is not None
        said = bytearray()
        while chunk := os.read(proc.stderr.fileno(), 65536):
            if shown:
                if not said and title:
                    sys.stderr.write(title + "\n")
                sys.stderr.flush()
                sys.stderr.buffer.write(chunk)
                sys.stderr.buffer.flush()
            said += chunk
        proc.stderr.close()
        code = proc.wait()
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return subprocess.CompletedProcess(list(argv), code, text, said.decode("utf-8", "replace"))
