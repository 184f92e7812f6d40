"""Demo step: the gate where people push. The pre-push hook refuses main without a verdict
and lets the verified commit through; sync publishes okstra's refs and notes; CI on a fresh
clone fetches the verdict notes and passes."""

from __future__ import annotations

from .world import Demo


def step(demo: Demo) -> None:
    verified = demo.facts["verified_head"]
    demo.step("Install the pre-push hook; an unverified commit cannot reach main")
    demo.run("git", "okstra", "hooks", "install")
    demo.run("git", "okstra", "hooks", "status")
    # main takes the task's verified result; a last-minute edit on top was never verified.
    demo.run("git", "merge", "-q", "--ff-only", verified)
    demo.run("git", "switch", "-q", "-c", "readme-tweak")
    readme = (demo.repo / "README.md").read_text("utf-8")
    demo.write("README.md", readme + "\nIt adds and multiplies.\n")
    demo.run("git", "commit", "-q", "-am", "README: mention mul")
    demo.run("git", "push", "origin", "readme-tweak:main", expect=1)
    # Unprotected branches pass untouched.
    demo.run("git", "push", "-q", "origin", "readme-tweak")

    demo.step("Push the verified commit: the gate opens")
    demo.run("git", "switch", "-q", "main")
    demo.run("git", "push", "origin", "main")
    demo.run("git", "okstra", "sync", "origin")

    demo.step("CI on a fresh clone: fetch the verdict notes, check the gate")
    clone = demo.root / "ci-clone"
    demo.run("git", "clone", "-q", str(demo.remote), str(clone))
    demo.run("git", "okstra", "ci", "check", "--fetch", "origin", cwd=clone)
    demo.run("git", "notes", "--ref", "okstra-remotes/origin/verdicts", "show", "HEAD", cwd=clone)
