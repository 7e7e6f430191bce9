"""Helpers shared by the scripts that write generated sections into the READMEs and worklogs."""
import sys


def replace_section(readme, section, body, prog="klab_docs"):
    """Replaces the text between `<!-- klab:SECTION:begin -->` and `<!-- klab:SECTION:end -->` in
    README with BODY; exits with an error naming PROG when the markers are missing."""
    text = open(readme).read()
    begin, end = f"<!-- klab:{section}:begin -->", f"<!-- klab:{section}:end -->"
    if begin not in text or end not in text:
        sys.exit(f"{prog}: {readme} has no {begin} ... {end} section")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    open(readme, "w").write(f"{head}{begin}\n{body}\n{end}{tail}")
