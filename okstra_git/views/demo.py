"""What ``git okstra demo`` prints: its narration as it runs (each command as a user types it,
what the command printed, each part's heading, what the demo does by hand) on stdout — stderr
with ``--json``, where the command framework points stdout — and, with ``--json``, how it
ended."""

from __future__ import annotations

from pathlib import Path

from . import Output


class Narration:
    """The narration the demo's steps call (``services.demo.world.Narrator``)."""

    def started(self, root: Path) -> None:
        print(f"okstra demo in {root}")

    def command(self, shown: str, where: Path | None) -> None:
        """A command as typed; ``where``: the folder it runs in, when not the sample's."""
        print(f"\n$ {shown}" + (f"    # in {where}" if where is not None else ""), flush=True)

    def output(self, text: str) -> None:
        """What a command printed (or a part of it), without its trailing blank."""
        print(text.rstrip(), flush=True)

    def line(self, text: str) -> None:
        print(text, flush=True)

    def part(self, title: str) -> None:
        print(f"\n=== {title} ===", flush=True)

    def note(self, text: str) -> None:
        """What the demo does by hand, as a person or an agent would."""
        print(f"\n# {text}", flush=True)

    def page(self, page: Path, what: str) -> None:
        print(f"\nopen {page.as_uri()} in a browser to {what}", flush=True)

    def finished(self, root: Path) -> None:
        print(f"\nThe demo finished: every step behaved as expected. Files are in {root}")


def finished(code: int) -> Output:
    """``--json``: the demo's exit code (0: every command behaved as expected)."""
    return Output({"exitCode": code}, code=code, error="the demo did not finish")
