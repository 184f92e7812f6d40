"""``git okstra demo``: the lifecycle on a throw-away repository."""

from __future__ import annotations

from ..views import Output
from .declare import Arg, command


@command(
    "demo",
    "Run the whole okstra lifecycle on a throw-away repository with a local bare remote.",
    Arg(
        "--dir",
        "An empty or new folder to build the demo in (default: a temp dir).",
        metavar="DIR",
        dest="directory",
        complete="dir",
    ),
    about="Prints every command as you would type it; exits 0 only if each behaved as "
    "expected. With --json the narration goes to stderr.",
)
def demo(directory: str | None) -> Output:
    from pathlib import Path

    from ..services.demo import run_demo
    from ..views.demo import Narration, finished

    return finished(run_demo(Path(directory) if directory else None, Narration()))
