"""Demo step: set okstra up and follow a task through its first run."""

from __future__ import annotations

from .world import Demo


def step(demo: Demo) -> None:
    demo.step("Set up okstra and create a task")
    demo.run("git", "okstra", "init", "--project-id", "demo", "--remote", "origin")
    demo.write("brief.md", "Add multiplication to calc, with tests.\n", cwd=demo.root)
    demo.run(
        "git",
        "okstra",
        "task",
        "new",
        demo.key,
        "--type",
        "implementation-planning",
        "--brief",
        str(demo.root / "brief.md"),
    )
    demo.run(
        "git", "okstra", "task", "new", "demo:calc:bad..key/with~chars", "--type", "nope", expect=2
    )
    demo.run("git", "okstra", "run", "start", demo.key, "--type", "implementation-planning")
    demo.run("git", "okstra", "task", "list")
    demo.run("git", "show", "refs/okstra/tasks/calc/add-mul:task.json", quiet=True)
