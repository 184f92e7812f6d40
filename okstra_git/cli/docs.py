"""``git okstra docs``: the documents shipped with okstra (plan and report formats, the
workflow, agents), readable where only the installed package is."""

from __future__ import annotations

from ..views import Output
from .declare import Arg, command


@command(
    "docs",
    "Print one of okstra's documents (the plan format, the report format, the workflow…), or "
    "list them.",
    Arg("name", "The document, e.g. plan-format; none: list them.", metavar="NAME", optional=True),
    Arg("--path", "Print the document's file path instead of its text.", flag=True),
    about="The same Markdown files as docs/ in okstra-git's source, shipped in the package.",
)
def docs(name: str | None, path: bool) -> Output:
    from ..services import docs as service
    from ..views.docs import document, listing

    if name is None:
        return listing(service.shipped(), service.title)
    return document(name, service.find(name), path)
