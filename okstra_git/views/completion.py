"""What ``git okstra completion`` prints: the script for each shell, and the candidates its
``words`` command answers a TAB with (on every TAB: nothing loaded at this module's top)."""

from __future__ import annotations

from . import Output

SHELLS = ("bash", "zsh", "fish")

ENTRY = """import sys
sys.path.append(sys.argv.pop(1))
try:
    from okstra_git.entry import main
except ImportError:
    sys.exit(127)
sys.exit(main())"""
"""What a TAB runs: ``PYTHON -S -P -c ENTRY FOLDER completion words -- WORDS`` (the Python okstra
runs on, and the folder holding okstra_git), as the pre-push hook starts okstra: without site
(the .pth files of site-packages) or a console script's own imports (``re``, which loads
``enum`` and ``functools``), ~10 ms of a TAB's ~30 ms; nothing of the current folder on
``sys.path`` (``-P``). Exit 127 when okstra_git is not in FOLDER any more: the scripts then run
the console script. No quote or backslash in it: fish reads those inside '...'."""


def words_argv(python: str, folder: str) -> list[str]:
    """The command line a TAB starts, before ``-- WORDS``."""
    return [python, "-S", "-P", "-c", ENTRY, folder, "completion", "words"]


def script(shell: str, okstra: str, python: str, folder: str) -> Output:
    """The completion script for ``shell``: a TAB runs ``completion words`` on ``python`` with
    okstra_git from ``folder`` (:data:`ENTRY`), or, when that Python is gone or okstra_git is
    not in ``folder``, as the shell words ``okstra`` (the console script)."""
    import shlex

    text = _SCRIPTS[shell]
    for name, value in (
        ("PYTHON", shlex.quote(python)),
        ("ENTRY", shlex.quote(ENTRY)),
        ("FOLDER", shlex.quote(folder)),
        ("OKSTRA", okstra),
    ):
        text = text.replace(f"@{name}@", value)
    return Output({"shell": shell, "script": text}, text)


def candidates(found: list[tuple[str, str]] | str) -> Output:
    """``completion words``: one ``WORD<TAB>HELP`` line a candidate, or ``:file``/``:dir`` when
    the shell should complete a path (``found`` is then ``"file"`` or ``"dir"``)."""
    if isinstance(found, str):
        return Output({"candidates": [], "paths": found}, f":{found}")
    rows = [{"word": word, "help": help} for word, help in found]
    # A TAB on a task key answers thousands: each line made by builtins, no Python loop.
    return Output({"candidates": rows, "paths": None}, "\n".join(map("\t".join, found)))


_BASH = r"""# bash completion for git okstra, printed by `git okstra completion bash`.
# Load it from ~/.bashrc with: eval "$(git okstra completion bash)"
# or save it as ~/.local/share/bash-completion/completions/git-okstra.
# With git's own completion loaded, `git okstra <TAB>` completes as well as `git-okstra <TAB>`.

__git_okstra_words() {  # the candidates for the words "$@": `git okstra completion words -h`
	if [[ -x @PYTHON@ ]]; then  # okstra's Python, without its site (faster)
		@PYTHON@ -S -P -c @ENTRY@ @FOLDER@ completion words -- "$@" 2>/dev/null
		(($? != 127)) && return
	fi
	@OKSTRA@ completion words -- "$@" 2>/dev/null
}

__git_okstra_reply() {  # $1: suffix to add ("" or " "), $2: current word, then the words
	local suffix=$1 cur=$2 line IFS=$'\n'
	shift 2
	local -a found=($(__git_okstra_words "$@"))
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

__git_okstra_words() {  # the candidates for the words "$@": `git okstra completion words -h`
	if [[ -x @PYTHON@ ]]; then  # okstra's Python, without its site (faster)
		@PYTHON@ -S -P -c @ENTRY@ @FOLDER@ completion words -- "$@" 2>/dev/null
		(($? != 127)) && return
	fi
	@OKSTRA@ completion words -- "$@" 2>/dev/null
}

_git-okstra() {
	local line
	local -a found described
	found=("${(@f)$(__git_okstra_words "${(@)words[1,CURRENT]}")}")
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

function __git_okstra_words  # the candidates for the words $argv: `git okstra completion words -h`
    if test -x @PYTHON@  # okstra's Python, without its site (faster)
        @PYTHON@ -S -P -c @ENTRY@ @FOLDER@ completion words -- $argv 2>/dev/null
        test $status -ne 127; and return
    end
    @OKSTRA@ completion words -- $argv 2>/dev/null
end

function __git_okstra_complete
    set -l found (__git_okstra_words (commandline -opc) (commandline -ct))
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
