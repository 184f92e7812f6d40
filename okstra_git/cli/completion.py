"""``git okstra completion``: shell completion for bash, zsh and fish.

The scripts are small: on TAB they ask ``git okstra completion words`` for the candidates, and
that answers from the command declarations (groups, commands, options, choices; task keys
from the repository), so completion always matches the installed version. They start it on
the Python okstra runs on, without its site (``views/completion.py``'s ``ENTRY``), else by the
console script.
"""

from __future__ import annotations

from ..views import Output
from ..views.completion import SHELLS
from .declare import Arg, Command, command

Answer = list[tuple[str, str]] | str
"""``(word, help)`` pairs, or ``"file"``/``"dir"``: the shell should complete a path."""


@command(
    "completion",
    "Print the shell completion script for bash, zsh or fish.",
    Arg("shell", "The shell.", metavar="SHELL", choices=SHELLS),
    about='bash: `eval "$(git okstra completion bash)"` in ~/.bashrc, or save it as '
    "~/.local/share/bash-completion/completions/git-okstra; with git's own completion loaded "
    "it completes `git okstra …` too. zsh: save it as _git-okstra in a folder on $fpath. "
    "fish: save it as ~/.config/fish/completions/git-okstra.fish and source it from "
    "~/.config/fish/config.fish for `git okstra …`.",
)
def script(shell: str) -> Output:
    import sys

    from ..core.resources import install_folder, okstra_command
    from ..core.shell import command as quoted
    from ..views.completion import script as view

    return view(shell, quoted(*okstra_command()), sys.executable or "", install_folder())


@command(
    "completion words",
    "What the completion scripts call on TAB: the candidates for the words typed.",
    Arg(
        "words",
        "The command line up to the cursor, from git-okstra (or git … okstra) to the word "
        "being completed (empty for a new word).",
        metavar="WORD",
        repeat=True,
    ),
    about="Prints one candidate a line as WORD<TAB>HELP, or :file / :dir when a path is wanted.",
)
def words(words: list[str]) -> Output:
    from ..views.completion import candidates as view

    return view(candidates(words))


def candidates(line: list[str]) -> Answer:
    """What completes the last word of ``line`` (the words typed up to the cursor)."""
    from ..core.errors import BadInput
    from .declare import COMMANDS, GROUPS, load, load_all, subcommands

    start = _program_end(line)
    if start is None:
        raise BadInput(f"completion words: {line!r} does not start with git-okstra or git okstra")
    *typed, current = line[start:] or [""]
    if not (typed and load(typed[0])):  # a command's words: only its group is needed
        load_all()
    path: tuple[str, ...] = ()
    for n, word in enumerate(typed):
        if path in COMMANDS:
            return _for_command(COMMANDS[path], typed[n:], current)
        if subcommands((*path, word)) and not word.startswith("-"):
            path += (word,)
    if path in COMMANDS:
        return _for_command(COMMANDS[path], [], current)
    if current.startswith("-"):
        options = [("-h", "Show help."), ("--help", "Show help.")]
        if not path:
            options += [("-V", "Print the version."), ("--version", "Print the version.")]
        return _matching(options, current)
    nexts: dict[str, str] = {}
    for cmd in subcommands(path):
        word = cmd.path[len(path)]
        whole = cmd.path[: len(path) + 1]
        group = GROUPS.get(word) if not path else None
        nexts.setdefault(word, cmd.help if cmd.path == whole else group.help if group else "")
    return _matching(list(nexts.items()), current)


def _program_end(line: list[str]) -> int | None:
    """Where the words after ``git-okstra`` (or ``git … okstra``) start."""
    for n, word in enumerate(line):
        if word.rsplit("/", 1)[-1] == "git-okstra" or word == "okstra":
            return n + 1
    return None


def _for_command(cmd: Command, typed: list[str], current: str) -> Answer:
    """Candidates once the command is known: an option's value, an option, a positional."""
    options = {name: arg for arg in cmd.all_args if not arg.positional for name in arg.names}
    positionals = [arg for arg in cmd.args if arg.positional]
    given: set[str] = set()
    count = 0
    expects: Arg | None = None
    for word in typed:
        if expects is not None:
            expects = None
        elif word in options:
            given.add(options[word].name)
            expects = None if options[word].flag else options[word]
        elif not word.startswith("-"):
            count += 1
    if expects is not None:
        return _values(expects, current)
    if current.startswith("-"):
        offered = [
            (name, arg.help) for name, arg in options.items() if arg.repeat or arg.name not in given
        ]
        return _matching([*offered, ("--help", "Show this help.")], current)
    if not positionals:
        return []
    arg = positionals[min(count, len(positionals) - 1)]
    if count >= len(positionals) and not arg.repeat:
        return []
    return _values(arg, current)


def _values(arg: Arg, current: str) -> Answer:
    if arg.choices:
        return _matching([(choice, "") for choice in arg.choices], current)
    if arg.complete in ("file", "dir"):
        return arg.complete
    if arg.complete == "remote":
        return _matching([(name, "remote") for name in _git_lines("remote")], current)
    if arg.complete == "task":  # filtered first: 20k keys, few of them wanted
        keys = _task_keys(current)
        return list(zip(keys, ["task"] * len(keys), strict=True))  # no Python loop over them
    return []


def _matching(pairs: list[tuple[str, str]], current: str) -> list[tuple[str, str]]:
    return [(word, help) for word, help in pairs if word.startswith(current)]


def _git_lines(*args: str) -> list[str]:
    from ..git.process import git

    proc = git(None, *args)
    return proc.stdout.split() if proc.returncode == 0 else []


def _task_keys(prefix: str) -> list[str]:
    """The task keys that start with ``prefix``, on every TAB, without loading pygit2 (~60
    ms, twice the whole answer at 20k tasks) nor, in the usual case, starting git: the keys
    kept (``records/taskindex.py``) while the files holding the task refs are the same (a few
    stats; the repository found by its ``.git``), or while the task refs' names are (``git
    for-each-ref``); when the names changed (a task was made), the keys the task-list index
    holds for the refs' commits, else the full listing (which brings that index up to date),
    kept for the next TAB. The mark is taken first: a ref made meanwhile changes the next
    one."""
    from ..core.errors import OkstraError
    from ..core.tracking import TASKS_PREFIX
    from ..git import plumbing
    from ..records import taskindex

    try:
        common = plumbing.common_dir()
        mark = plumbing.ref_files_mark(common, TASKS_PREFIX)
        found = taskindex.remembered_keys(common, mark, prefix)
        if found is not None:
            return found
        names = plumbing.ref_names(TASKS_PREFIX)
        found = taskindex.keys_for_names(common, names)
        if found is None:
            refs = plumbing.list_refs(TASKS_PREFIX)
            found = taskindex.indexed_keys(common, refs)
            if found is None:
                _load_site()
                from ..services import tasks
                from ..services.context import open_context

                found = [task.task_key for task in tasks.list_tasks(open_context(), None)]
            found.sort()
            names = "".join(f"{ref}\n" for ref in refs).encode("utf-8", "surrogateescape")
        taskindex.remember_keys(common, mark, names, found)
        return [key for key in found if key.startswith(prefix)]
    except OkstraError:  # not in a repository, or an unreadable task: offer nothing
        return []


def _load_site() -> None:
    """What the full listing needs (pygit2, jsonschema) may be installed where only Python's
    site finds it (an editable install's site-packages, a .pth): a TAB starts Python without
    it (``views/completion.py``'s ``ENTRY``), so it is loaded here, as ``python -S`` says."""
    import sys

    if sys.flags.no_site and "site" not in sys.modules:
        import site

        site.main()
