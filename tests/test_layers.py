"""The package's layers, declared once: each folder of ``okstra_git/`` is a layer, and a module
imports only its own layer and those below it, with no import circle anywhere (imports inside
functions and under ``TYPE_CHECKING`` count: both are dependencies). Only ``git/`` loads pygit2
or starts git; see docs/architecture.md."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "okstra_git"

LAYERS = ("core", "logic", "git", "records", "gate", "services", "views", "cli")
"""Bottom to top."""
ENTRY_POINTS = {"okstra_git.entry", "okstra_git.__main__"}
"""The package root holds only these (and ``__init__``, the version), above every layer."""
PROCESS_STARTERS = {
    "okstra_git.gate.signing",  # ssh-keygen -Y sign / verify, as git signs commits
    "okstra_git.services.reports",  # the user's $EDITOR (clarify resume)
    "okstra_git.services.worker",  # the agent's command (git okstra work)
}
"""Modules besides ``git/`` that may start a process — never git itself."""


def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def layer_of(module: str) -> int:
    if module == "okstra_git":
        return -1
    if module in ENTRY_POINTS:
        return len(LAYERS)
    return LAYERS.index(module.split(".")[1])


def imports(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every okstra_git module ``module`` imports, anywhere in it, and the third-party and
    stdlib top-level names it imports (prefixed ``ext:``)."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                found.add(alias.name if top == "okstra_git" else f"ext:{top}")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + is_package]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.split(".")[0] != "okstra_git":
                found.add(f"ext:{target.split('.')[0]}")
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub in known else target)
    found.discard(module)
    return found


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def test_every_module_lives_in_a_layer():
    stray = [
        m
        for m in modules()
        if m != "okstra_git"
        and m not in ENTRY_POINTS
        and (m.count(".") == 0 or m.split(".")[1] not in LAYERS)
    ]
    assert not stray, f"modules outside the layer folders: {stray}"


def test_no_module_imports_a_layer_above_its_own():
    upward = [
        f"{m} ({LAYERS[layer_of(m)] if 0 <= layer_of(m) < len(LAYERS) else 'root'}) imports {t}"
        for m, targets in graph().items()
        for t in sorted(targets)
        if not t.startswith("ext:") and layer_of(t) > layer_of(m)
    ]
    assert not upward, "\n".join(upward)


def test_no_import_circle():
    edges = {m: {t for t in ts if not t.startswith("ext:")} for m, ts in graph().items()}
    circles = []
    state: dict[str, int] = {}  # 1 on the path, 2 finished
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                circles.append(" -> ".join([*path[path.index(nxt) :], nxt]))
            elif nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)
    assert not circles, "\n".join(circles)


def test_only_the_git_layer_loads_pygit2_or_starts_git():
    loads = [m for m, ts in graph().items() if "ext:pygit2" in ts and layer_of(m) != 2]
    assert not loads, f"pygit2 imported outside okstra_git/git/: {loads}"
    spawns = [
        m
        for m, ts in graph().items()
        if "ext:subprocess" in ts and layer_of(m) != 2 and m not in PROCESS_STARTERS
    ]
    assert not spawns, f"subprocess imported outside okstra_git/git/: {spawns}"
    for name in PROCESS_STARTERS:
        text = modules()[name].read_text("utf-8")
        assert '"git"' not in text, f"{name} starts git: go through okstra_git.git.process"


PYGIT2_VOCABULARY = {
    # pygit2's objects: a Commit's, a Tree's, an Object's, a Repository's and its Config's
    "commit_time", "commit_time_offset", "parent_ids", "type_str", "read_raw",
    "revparse_single", "lookup_reference", "references", "head_is_unborn",
    "TreeBuilder", "create_blob", "create_commit", "descendant_of", "merge_base_many",
    "get_multivar", "set_multivar", "delete_multivar", "get_bool", "Oid", "Signature",
}  # fmt: skip
"""Attributes that only a pygit2 object has: code outside ``git/`` touching one holds a pygit2
object the git layer should have turned into an okstra value (an id, ``CommitInfo``, bytes)."""


def _pygit2_leaks(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        inner = node.value
        # A GitRepo is held as `repo`, `ctx.repo`, `self.repo`: its `.repo` is the pygit2
        # Repository itself.
        holds_repo = (isinstance(inner, ast.Name) and inner.id == "repo") or (
            isinstance(inner, ast.Attribute) and inner.attr == "repo"
        )
        if (node.attr == "repo" and holds_repo) or node.attr == "_pygit2":
            found.append(f"line {node.lineno}: .{node.attr} of a GitRepo (pygit2's Repository)")
        elif node.attr in PYGIT2_VOCABULARY:
            found.append(f"line {node.lineno}: .{node.attr} (a pygit2 object's)")
        elif (
            node.attr in ("name", "email")
            and isinstance(inner, ast.Attribute)
            and inner.attr in ("author", "committer")
        ):
            found.append(f"line {node.lineno}: .{inner.attr}.{node.attr} (a Signature's)")
    return found


def test_only_the_git_layer_holds_pygit2_objects():
    """The git facade hands out okstra values, never pygit2's objects: nothing above ``git/``
    reaches a GitRepo's pygit2 Repository or reads a Commit's, Tree's or Signature's
    attributes (docs/architecture.md)."""
    leaks = [
        f"{name} {leak}"
        for name, path in modules().items()
        if layer_of(name) != LAYERS.index("git")
        for leak in _pygit2_leaks(ast.parse(path.read_text("utf-8")))
    ]
    assert not leaks, "\n".join(leaks)


def _pygit2_returns(tree: ast.AST) -> list[str]:
    """The public functions and methods of ``tree`` whose return annotation names pygit2."""
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.returns
            and not node.name.startswith("_")
            and "pygit2" in ast.unparse(node.returns)
        ):
            found.append(f"line {node.lineno}: {node.name}() -> {ast.unparse(node.returns)}")
    return found


def test_the_git_facade_returns_no_pygit2_object():
    """What ``git/`` offers the layers above returns okstra values (ids, ``CommitInfo``, bytes):
    no public function or method of it is declared to return a pygit2 object."""
    leaks = [
        f"{name} {leak}"
        for name, path in modules().items()
        if layer_of(name) == LAYERS.index("git")
        for leak in _pygit2_returns(ast.parse(path.read_text("utf-8")))
    ]
    assert not leaks, "\n".join(leaks)
    source = (
        "class R:\n"
        "    def head(self) -> pygit2.Commit: ...\n"
        "    def _raw(self) -> pygit2.Repository: ...\n"
        "    def tree_id(self, c: str) -> str: ...\n"
        "def walk() -> Iterator[pygit2.Commit]: ...\n"
    )
    assert sorted(leak.split(": ")[1] for leak in _pygit2_returns(ast.parse(source))) == [
        "head() -> pygit2.Commit",
        "walk() -> Iterator[pygit2.Commit]",
    ]


def test_tests_and_benches_use_the_git_facade_too():
    """The helpers of ``tests/`` and ``bench/`` build and read through the facade as the package
    does: none reaches a GitRepo's pygit2 Repository (``GitRepo._pygit2``, the git layer's own)."""
    root = PACKAGE.parent
    leaks = [
        f"{path.relative_to(root)} {leak}"
        for folder in ("tests", "bench")
        for path in sorted((root / folder).rglob("*.py"))
        for leak in _pygit2_leaks(ast.parse(path.read_text("utf-8")))
        if "._pygit2 " in leak
    ]
    assert not leaks, "\n".join(leaks)


def test_the_pygit2_rule_catches_what_it_names():
    """The rule above fails on each kind of leak it names (so it cannot pass by matching
    nothing), and passes the facade's own vocabulary."""
    leaky = (
        "ctx.repo.repo.config['x'] = 1\n"
        "repo.repo.remotes.names()\n"
        "c.commit_time\n"
        "c.author.name\n"
        "found.type_str\n"
    )
    assert len(_pygit2_leaks(ast.parse(leaky))) == 5
    assert len(_pygit2_leaks(ast.parse("grepo._pygit2[head]\nctx.repo._pygit2.walk(h)\n"))) == 2
    clean = "repo.tree_id(head)\nctx.repo.commit_info(c).author\nrepo.history(h, r)\n"
    assert _pygit2_leaks(ast.parse(clean)) == []


UNSHIPPED = "SPEC" + " §"
"""How a citation of the specification the project does not ship starts (spelt in two parts so
this file does not cite it)."""
SHIPPED_TEXT = ("okstra_git", "tests", "bench", "docs", "schemas", "templates", "contrib", "hooks")
"""The folders whose text is read for citations, beside ``README.md``."""


def _citations(text: str) -> tuple[bool, list[str]]:
    """Whether ``text`` cites the unshipped specification, and the ``docs/`` pages it names."""
    import re

    return UNSHIPPED in text, re.findall(r"docs/([\w.-]+\.md)", text)


def _shipped_texts() -> dict[str, str]:
    root = PACKAGE.parent
    paths = [root / "README.md"] + [
        path
        for folder in SHIPPED_TEXT
        for path in sorted((root / folder).rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".png",)
    ]
    return {str(p.relative_to(root)): p.read_text("utf-8", errors="replace") for p in paths}


def test_comments_cite_the_docs_the_project_ships():
    """A docstring, comment, schema description or page points at ``docs/`` (which ships with
    the source), never at a specification the project does not ship, and every page it names
    exists: in the package, its docs, schemas, templates and hooks (and no citation of that
    specification in its tests and benches either)."""
    docs = PACKAGE.parent / "docs"
    unshipped, missing = [], []
    for name, text in _shipped_texts().items():
        cites, pages = _citations(text)
        if cites:
            unshipped.append(name)
        if name.split("/")[0] not in ("tests", "bench"):  # theirs name files of test repos
            missing += [f"{name}: {page}" for page in pages if not (docs / page).is_file()]
    assert not unshipped, f"cite docs/ instead of the unshipped specification: {unshipped}"
    assert not missing, f"pages that docs/ does not have: {missing}"


def test_the_citation_rule_catches_what_it_names():
    """The rule above sees a citation of the unshipped specification and a page docs/ lacks, and
    reads every folder it names (so it cannot pass by reading nothing)."""
    assert _citations(f"Stage claims ({UNSHIPPED}5).") == (True, [])
    assert _citations("see docs/workflow.md and docs/no-such-page.md") == (
        False,
        ["workflow.md", "no-such-page.md"],
    )
    read = {name.split("/")[0] for name in _shipped_texts()}
    assert read == {*SHIPPED_TEXT, "README.md"}, read


def _data_classes(tree: ast.AST) -> tuple[list[str], list[str]]:
    """The classes ``tree`` declares with ``@dataclass``, and those with a ``to_data`` method."""
    dataclasses, shaped = [], []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name == "dataclass":
                dataclasses.append(node.name)
        if any(isinstance(m, ast.FunctionDef) and m.name == "to_data" for m in node.body):
            shaped.append(node.name)
    return dataclasses, shaped


def test_one_value_convention_and_no_output_shaped_in_services():
    """Value classes declare their fields once as ``core.values`` classes (no dataclass, which
    writes six methods per class as its module loads), and services return typed values: the
    ``--json`` shape of what a command prints is ``views/``'s (docs/architecture.md)."""
    declared, shaped = [], []
    for name, path in modules().items():
        dataclasses, to_data = _data_classes(ast.parse(path.read_text("utf-8")))
        declared += [f"{name}.{cls}" for cls in dataclasses]
        if layer_of(name) == LAYERS.index("services"):
            shaped += [f"{name}.{c}" for c in to_data]
    assert not declared, f"declare these as core.values classes: {declared}"
    assert not shaped, f"shape their output in views/ instead: {shaped}"


def test_the_value_rule_catches_what_it_names():
    """The rule above sees each spelling of a dataclass and a ``to_data`` method."""
    source = (
        "@dataclass\nclass A: pass\n"
        "@dataclass(frozen=True)\nclass B: pass\n"
        "@dataclasses.dataclass\nclass C: pass\n"
        "class D(Value):\n    def to_data(self): return {}\n"
    )
    assert _data_classes(ast.parse(source)) == (["A", "B", "C"], ["D"])
    assert _data_classes(ast.parse("class E(Value):\n    x: int\n")) == ([], [])


STREAMS = {"stdout", "stderr", "__stdout__", "__stderr__"}
"""``sys``'s output streams."""


def _writes_output(tree: ast.AST) -> list[str]:
    """Where ``tree`` prints or reaches an output stream: ``print`` (called, or handed on as
    a function), ``sys.stdout``/``sys.stderr`` (any use: a write, a flush, a ``fileno()``),
    ``from sys import stdout``, and ``os.write`` to descriptor 1 or 2. Reading ``sys.stdin``
    is input, not output."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "print":
            found.append(f"line {node.lineno}: print")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in STREAMS
            and isinstance(node.value, ast.Name)
            and node.value.id == "sys"
        ):
            found.append(f"line {node.lineno}: sys.{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            found += [f"line {node.lineno}: from sys import {a.name}" for a in node.names
                      if a.name in STREAMS]  # fmt: skip
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == "os.write"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in (1, 2)
        ):
            found.append(f"line {node.lineno}: os.write({node.args[0].value}, …)")
    return found


def test_services_print_nothing():
    """A service returns values or tells typed steps to a callback the command gives; what
    is printed, and where, is the command's (its view words it): nothing in ``services/``
    prints or writes to stdout or stderr (docs/architecture.md)."""
    found = [
        f"{name} {where}"
        for name, path in modules().items()
        if layer_of(name) == LAYERS.index("services")
        for where in _writes_output(ast.parse(path.read_text("utf-8")))
    ]
    assert not found, "\n".join(found)


def test_the_output_rule_catches_what_it_names():
    """The rule above sees each way of printing it names (so it cannot pass by matching
    nothing), and lets input and other programs' streams be."""
    loud = (
        "print('x')\n"
        "def f(say=print): ...\n"
        "sys.stderr.write('x\\n')\n"
        "sys.stdout.flush()\n"
        "stream = sys.__stderr__\n"
        "from sys import stdout\n"
        "os.write(2, b'x')\n"
        "subprocess.Popen(argv, stdout=sys.stderr.fileno())\n"
    )
    assert len(_writes_output(ast.parse(loud))) == 8
    quiet = (
        "lines = sys.stdin.read()\n"
        "proc.stdout.strip()\n"
        "say(Serving(url))\n"
        "os.write(fd, b'x')\n"
        "self.printed = True\n"
    )
    assert _writes_output(ast.parse(quiet)) == []
