"""Demo step: the verdict's report data rendered as the canonical Markdown (what the next run
and the §5 reader read) and the self-contained HTML view (what a person reviews)."""

from __future__ import annotations

from pathlib import Path

from ...core.errors import Refused
from .world import Demo


def step(demo: Demo) -> None:
    data = Path(demo.facts["verdict_data"])
    markdown = data.with_name(data.name.removesuffix(".data.json") + ".md")
    page = markdown.with_suffix(".html")
    demo.step("Render the verdict's report: canonical Markdown and a self-contained HTML view")
    demo.run("git", "okstra", "report", "render", str(data), "--md", str(markdown),
             "--html", str(page))  # fmt: skip
    demo.run("git", "okstra", "clarify", "status", str(markdown))
    text = markdown.read_text("utf-8")
    for heading in ("## Reader Summary", "## 2. Final Verdict", "### 2.1 Verification Scope"):
        if heading not in text:
            raise Refused(f"demo step failed: the rendered report has no {heading!r}: {markdown}")
    demo.narration.page(page, "review it")
