"""Every code block of every ``docs/*.md`` runs, and every link between the docs resolves.

The convention (``docs/README.md`` explains it to writers):

* ```` ```python ```` blocks of one file are joined in order into one script, run with this
  interpreter as a subprocess from the repository root; it passes when it exits 0. The script keeps
  the document's line numbers, and it is compiled under the document's name, so a traceback points
  at the line of the ``.md`` file (and quotes it).
* ```` ```console ```` blocks: each line starting with ``$ `` is a command for ``bash -c``, run alone
  from the repository root with the environment's ``bin`` first on ``PATH``; the lines after it, up
  to the next ``$ `` line or the block's end, are its expected stdout, compared line by line with
  trailing spaces stripped. A line that is only ``...`` matches any number of lines. The command
  must exit 0, unless the last expected line is ``[exit N]``: then it must exit N.
* A block whose info string has the word ``norun`` after the language, and blocks in any other
  language, are shown and never run.
"""

from __future__ import annotations

import difflib
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import pytest

from .conftest import ROOT

DOCS: Final = ROOT / "docs"
TIMEOUT_SECONDS: Final = 60.0
ANY_LINES: Final = "..."
EXIT_MARKER: Final = re.compile(r"\[exit (\d+)\]")
FENCE: Final = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)(.*)$")

# Runs the padded script as ``__main__``, compiled under the document's name so that tracebacks name
# the document and its line (Python reads the quoted line from the .md file itself).
BOOTSTRAP: Final = """\
import sys, types
script, name = sys.argv[1], sys.argv[2]
with open(script, encoding="utf-8") as f:
    code = compile(f.read(), name, "exec")
module = types.ModuleType("__main__")
module.__file__ = name
sys.modules["__main__"] = module
sys.argv = [name]
exec(code, module.__dict__)
"""


@dataclass
class Block:
    """One fenced code block: its language, the 1-based line of its first content line, its lines."""

    doc: Path
    language: str
    first_line: int
    lines: list[str] = field(default_factory=list)
    runs: bool = True


@dataclass
class Command:
    """One ``$ `` line of a console block and the stdout it promises."""

    doc: Path
    line: int
    command: str
    expected: list[str]
    status: int = 0


def parse_blocks(doc: Path) -> list[Block]:
    """The fenced code blocks of *doc* (CommonMark fences of backticks or tildes, indented at most
    three spaces; the indentation of the opening fence is removed from the block's lines)."""
    blocks: list[Block] = []
    current: Block | None = None
    fence = indent = ""
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
        if current is None:
            found = FENCE.match(line)
            if found:
                indent, fence, language, rest = found.groups()
                current = Block(doc, language.lower(), number + 1, runs="norun" not in rest.split())
            continue
        stripped = line.strip()
        if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
            blocks.append(current)
            current = None
            continue
        current.lines.append(line[len(indent) :] if line.startswith(indent) else line.lstrip(" "))
    if current is not None:
        raise ValueError(
            f"{doc.name}: the code block opened at line {current.first_line - 1} is never closed"
        )
    return blocks


def python_script(doc: Path) -> str | None:
    """The python blocks of *doc* joined into one script whose line N is the document's line N
    (everything else is blank lines), or ``None`` when there are none."""
    blocks = [b for b in parse_blocks(doc) if b.language == "python" and b.runs]
    if not blocks:
        return None
    last = blocks[-1].first_line + len(blocks[-1].lines)
    script = [""] * last
    for block in blocks:
        script[block.first_line - 1 : block.first_line - 1 + len(block.lines)] = block.lines
    return "\n".join(script) + "\n"


def console_commands(doc: Path) -> list[Command]:
    """The commands of the console blocks of *doc*, each with its expected output and status.

    A command line ending with a backslash goes on at the next line, as in a shell.
    """
    commands: list[Command] = []
    for block in parse_blocks(doc):
        if block.language != "console" or not block.runs:
            continue
        current: Command | None = None
        continued = False
        found: list[Command] = []
        for offset, line in enumerate(block.lines):
            if continued and current is not None:
                current.command += "\n" + line
                continued = line.endswith("\\")
            elif line.startswith("$ "):
                current = Command(doc, block.first_line + offset, line[2:], [])
                found.append(current)
                continued = line.endswith("\\")
            elif current is None:
                raise ValueError(
                    f"{doc.name}:{block.first_line + offset}: a console block must start with a '$ ' line"
                )
            else:
                current.expected.append(line.rstrip())
        for command in found:
            while command.expected and not command.expected[-1]:
                command.expected.pop()
            marker = EXIT_MARKER.fullmatch(command.expected[-1]) if command.expected else None
            if marker:
                command.status = int(marker.group(1))
                command.expected.pop()
        commands.extend(found)
    return commands


def lines_match(expected: list[str], actual: list[str]) -> bool:
    """Whether *actual* matches *expected* line for line, a ``...`` line standing for any lines."""
    # reachable[j]: the first i expected lines can match the first j actual lines.
    reachable = [True] + [False] * len(actual)
    for want in expected:
        if want == ANY_LINES:
            for j in range(1, len(actual) + 1):
                reachable[j] = reachable[j] or reachable[j - 1]
        else:
            reachable = [False] + [reachable[j] and actual[j] == want for j in range(len(actual))]
    return reachable[-1]


def environment() -> dict[str, str]:
    """What the docs' commands and scripts run with: this environment's ``bin`` first on ``PATH``
    (so ``mcpkit`` is the checkout's), and output that does not depend on the runner's terminal."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(COLUMNS="80", NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1")
    env.pop("FORCE_COLOR", None)
    return env


def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """Run *argv* from the repository root with no terminal; on timeout kill its whole process group
    (a server the command started included) and fail."""
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(
            f"still running after {TIMEOUT_SECONDS:g} s\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
        )
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


def documents() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def well_formed() -> list[Path]:
    """The documents whose blocks parse; the others fail :func:`test_documents_parse` instead of
    breaking the collection of every case."""
    good = []
    for doc in documents():
        try:
            console_commands(doc)
        except ValueError:
            continue
        good.append(doc)
    return good


def relative(doc: Path) -> str:
    return doc.relative_to(ROOT).as_posix()


PYTHON_CASES: Final = [doc for doc in well_formed() if python_script(doc) is not None]
CONSOLE_CASES: Final = [command for doc in well_formed() for command in console_commands(doc)]


@pytest.mark.parametrize("doc", documents(), ids=lambda d: d.name)
def test_documents_parse(doc: Path) -> None:
    console_commands(doc)  # raises ValueError naming the line of an unclosed fence or a stray line


def run_python(doc: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run the python blocks of *doc* as one script named after *doc*."""
    script = python_script(doc)
    assert script is not None
    padded = tmp_path / f"{doc.stem}.py"
    padded.write_text(script, encoding="utf-8")
    name = relative(doc) if doc.is_relative_to(ROOT) else str(doc)
    return run([sys.executable, "-c", BOOTSTRAP, str(padded), name])


@pytest.mark.parametrize("doc", PYTHON_CASES, ids=lambda d: f"{d.name}:python")
def test_python_blocks_run(doc: Path, tmp_path: Path) -> None:
    done = run_python(doc, tmp_path)
    if done.returncode != 0:
        pytest.fail(
            f"the python blocks of {relative(doc)} exited {done.returncode} (line numbers are the document's)\n"
            f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}",
            pytrace=False,
        )


@pytest.mark.parametrize("command", CONSOLE_CASES, ids=lambda c: f"{c.doc.name}:{c.line}")
def test_console_commands_print_what_the_docs_show(command: Command) -> None:
    done = run(["bash", "-c", command.command])
    actual = [line.rstrip() for line in done.stdout.splitlines()]
    while actual and not actual[-1]:
        actual.pop()
    where = f"{relative(command.doc)}:{command.line}: $ {command.command}"
    if done.returncode != command.status:
        pytest.fail(
            f"{where}\nexited {done.returncode}, the doc expects {command.status}\n"
            f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}",
            pytrace=False,
        )
    if not lines_match(command.expected, actual):
        diff = "\n".join(difflib.unified_diff(command.expected, actual, "the doc", "stdout", lineterm=""))
        pytest.fail(
            f"{where}\nstdout differs from the doc:\n{diff}\n--- stderr ---\n{done.stderr}", pytrace=False
        )


# -- links -------------------------------------------------------------------------------------------

LINK: Final = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def prose(doc: Path) -> str:
    """*doc* without its code blocks and inline code, where link syntax is only an example."""
    text = doc.read_text(encoding="utf-8")
    lines = text.splitlines()
    for block in parse_blocks(doc):
        for index in range(block.first_line - 2, block.first_line + len(block.lines)):
            lines[index] = ""
    return re.sub(r"`[^`\n]*`", "", "\n".join(lines))


def anchors(doc: Path) -> set[str]:
    """The heading anchors GitHub makes for *doc*: lower case, punctuation dropped, spaces to
    hyphens, ``-1``, ``-2``... for repeats."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for line in prose(doc).splitlines():
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.group(1))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def broken_links(doc: Path) -> list[str]:
    if doc not in well_formed():
        return []  # test_documents_parse says what is wrong
    broken = []
    for target in LINK.findall(prose(doc)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        resolved = (doc.parent / path).resolve() if path else doc
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.name}")
    return broken


@pytest.mark.parametrize("doc", documents(), ids=lambda d: d.name)
def test_links_resolve(doc: Path) -> None:
    broken = broken_links(doc)
    assert not broken, f"broken links in {relative(doc)}:\n" + "\n".join(broken)


def test_every_guide_is_in_the_index() -> None:
    index = DOCS / "README.md"
    listed = {(DOCS / target.partition("#")[0]).resolve() for target in LINK.findall(prose(index))}
    assert [doc.name for doc in documents() if doc != index and doc.resolve() not in listed] == []


def test_the_features_table_is_the_one_the_code_generates() -> None:
    # docs/features.md says its table cannot drift from mcpkit._versions.FEATURES: this keeps it so.
    # Regenerate it with `python -m mcpkit._versions`.
    from mcpkit._versions import features_table

    text = (DOCS / "features.md").read_text(encoding="utf-8")
    assert features_table() in text


# -- the runner itself -------------------------------------------------------------------------------


def test_any_lines_matches_none_some_or_all() -> None:
    assert lines_match(["a", "...", "z"], ["a", "z"])
    assert lines_match(["a", "...", "z"], ["a", "b", "c", "z"])
    assert lines_match(["..."], [])
    assert lines_match(["...", "x", "..."], ["a", "x", "b"])
    assert not lines_match(["a", "...", "z"], ["a", "b"])
    assert not lines_match(["a"], ["a", "b"])
    assert not lines_match(["a", "b"], ["b", "a"])
    assert not lines_match([], ["a"])


def test_parsing_follows_the_convention(tmp_path: Path) -> None:
    doc = tmp_path / "sample.md"
    doc.write_text(
        "# Sample\n\n"
        "```python\nx = 1\n```\n\n"
        "text\n\n"
        "````markdown\n```python\nnot = 'run'\n```\n````\n\n"
        "```python norun\nraise SystemExit(1)\n```\n\n"
        "  ```python\n  assert x == 1\n  ```\n\n"
        "```console\n$ echo a \\\n  b\na b\n$ false\n...\n[exit 1]\n\n$ true\n```\n",
        encoding="utf-8",
    )
    script = python_script(doc)
    assert script is not None
    assert script.splitlines()[3] == "x = 1" and script.splitlines()[19] == "assert x == 1"
    assert "not = " not in script and "SystemExit" not in script
    assert [(c.line, c.command, c.expected, c.status) for c in console_commands(doc)] == [
        (24, "echo a \\\n  b", ["a b"], 0),
        (27, "false", ["..."], 1),
        (31, "true", [], 0),
    ]


def test_a_failing_script_names_the_document_and_its_line(tmp_path: Path) -> None:
    doc = tmp_path / "broken.md"
    doc.write_text(
        "# Broken\n\n```python\nfrom dataclasses import dataclass\n```\n\nText.\n\n"
        "```python\n@dataclass\nclass Point:\n    x: int\n\nassert Point(1).x == 2, 'wrong'\n```\n",
        encoding="utf-8",
    )
    done = run_python(doc, tmp_path)
    assert done.returncode == 1
    assert f'File "{doc}", line 14' in done.stderr
    assert "assert Point(1).x == 2, 'wrong'" in done.stderr  # the line, quoted from the document
    assert "AssertionError: wrong" in done.stderr


def test_a_malformed_document_is_refused_with_its_line(tmp_path: Path) -> None:
    unclosed = tmp_path / "unclosed.md"
    unclosed.write_text("# Title\n\n```python\nx = 1\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match=re.escape("unclosed.md: the code block opened at line 3 is never closed")
    ):
        parse_blocks(unclosed)
    stray = tmp_path / "stray.md"
    stray.write_text("```console\nmcpkit --version\n```\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match=re.escape("stray.md:2: a console block must start with a '$ ' line")
    ):
        console_commands(stray)
