"""``git okstra completion``: shell completion for bash, zsh and fish.

The scripts are small: on TAB they ask ``git okstra completion words`` for the candidates, and
that answers from the command declarations (groups, commands, options, choices; task keys
from the repository), so completion always matches the installed version.
"""

from __future__ import annotations

from ..views import Output
from .declare import Arg, Command, command

SHELLS = ("bash", "zsh", "fish")
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
    from ..core.resources import okstra_command
    from ..core.shell import command as quoted

    text = _SCRIPTS[shell].replace("@OKSTRA@", quoted(*okstra_command()))
    return Output({"shell": shell, "script": text}, text)


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
    found = candidates(words)
    if isinstance(found, str):
        return Output({"candidates": [], "paths": found}, f":{found}")
    rows = [{"word": word, "help": help} for word, help in found]
    return Output({"candidates": rows, "paths": None}, "\n".join(f"{w}\t{h}" for w, h in found))


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
        return [(key, "task") for key in _task_keys(current)]
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
                from ..services import tasks
                from ..services.context import open_context

                found = [task.task_key for task in tasks.list_tasks(open_context(), None)]
            found.sort()
            names = "".join(f"{ref}\n" for ref in refs).encode("utf-8", "surrogateescape")
        taskindex.remember_keys(common, mark, names, found)
        return [key for key in found if key.startswith(prefix)]
    except OkstraError:  # not in a repository, or an unreadable task: offer nothing
        return []


_BASH = r"""# bash completion for git okstra, printed by `git okstra completion bash`.
# Load it from ~/.bashrc with: eval "$(git okstra completion bash)"
# or save it as ~/.local/share/bash-completion/completions/git-okstra.
# With git's own completion loaded, `git okstra <TAB>` completes as well as `git-okstra <TAB>`.

__git_okstra_reply() {  # $1: suffix to add ("" or " "), $2: current word, then the words
	local suffix=$1 cur=$2 line IFS=$'\n'
	shift 2
	local -a found=($(@OKSTRA@ completion words -- "$@" 2>/dev/null))
	COMPREPLY=()
	case ${found[0]} in
	:file) COMPREPLY=($(compgen -f -- "$cur")) ;;
	:dir) COMPREPLY=($(compgen -d -- "$cur")) ;;
	esac
	if [[ ${found[0]} == :file || ${found[0]} == :dir ]]; then
		compopt -o filenames 2>/dev/null || :  # quote and mark folders with a /
		return 0
	fi
	for line in "${found[@]}"; do
		COMPREPLY+=("${line%%$'\t'*}$suffix")
	done
	# bash splits words at ':' (task keys have two): reply with the part after the last one
	if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
		local colon=${cur%"${cur##*:}"}
		COMPREPLY=("${COMPREPLY[@]#"$colon"}")
	fi
}

# git's completion calls _git_okstra for `git okstra …` (its words keep ':' together, and it
# completes with -o nospace, so whole words get their space here).
_git_okstra() {
	local at=${__git_cmd_idx:-1}
	__git_okstra_reply " " "$cur" "${words[@]:at:cword-at+1}"
}

_git_okstra_main() {
	local cur words cword
	if declare -F _get_comp_words_by_ref >/dev/null; then
		_get_comp_words_by_ref -n =: cur words cword
	else
		cur=${COMP_WORDS[COMP_CWORD]} words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
	fi
	__git_okstra_reply "" "$cur" "${words[@]:0:cword+1}"
}

complete -o default -F _git_okstra_main git-okstra
"""

_ZSH = r"""#compdef git-okstra
# zsh completion for git okstra, printed by `git okstra completion zsh`.
# Save it as _git-okstra in a folder on $fpath (before compinit runs); zsh's git completion then
# completes `git okstra …` as well as `git-okstra …`. Or: eval "$(git okstra completion zsh)".

_git-okstra() {
	local line
	local -a found described
	found=("${(@f)$(@OKSTRA@ completion words -- "${(@)words[1,CURRENT]}" 2>/dev/null)}")
	case $found[1] in
	:file) _files; return ;;
	:dir) _files -/; return ;;
	esac
	for line in $found; do
		[[ -n $line ]] && described+=("${${line%%$'\t'*}//:/\\:}:${line#*$'\t'}")
	done
	_describe -t okstra 'git okstra' described
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
	_git-okstra "$@"
else
	compdef _git-okstra git-okstra
fi
"""

_FISH = r"""# fish completion for git okstra, printed by `git okstra completion fish`.
# Save it as ~/.config/fish/completions/git-okstra.fish; for `git okstra …` also source it from
# ~/.config/fish/config.fish (fish loads git's completions from git.fish only).

function __git_okstra_complete
    set -l found (@OKSTRA@ completion words -- (commandline -opc) (commandline -ct) 2>/dev/null)
    switch "$found[1]"
        case :file
            __fish_complete_path (commandline -ct)
        case :dir
            __fish_complete_directories (commandline -ct)
        case '*'
            string join \n -- $found
    end
end

complete -c git-okstra -f -a '(__git_okstra_complete)'
complete -c git -n '__fish_seen_subcommand_from okstra' -f -a '(__git_okstra_complete)'
"""

_SCRIPTS = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}
