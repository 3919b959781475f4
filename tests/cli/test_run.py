"""``mcpkit run``: a server file that fails while loading is reported with the user's frames only, an
``:OBJECT`` that is no server says what it is, and what a module prints at import never reaches the
stdio stream."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from ..conftest import ROOT, initialize_request
from .conftest import run_mcpkit


def _server_file(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


def _no_mcpkit_frames(stderr: str) -> None:
    assert "mcpkit/cli" not in stderr and "importlib" not in stderr and "<frozen" not in stderr


def test_a_syntax_error_shows_the_line_and_nothing_of_mcpkit(tmp_path: Path) -> None:
    path = _server_file(
        tmp_path, "syn.py", "from mcpkit import Server\nserver = Server('x')\ndef f(:\n    pass\n"
    )
    done = run_mcpkit("run", path)
    assert done.returncode == 3 and done.stdout == ""  # the server cannot start
    lines = done.stderr.splitlines()
    assert lines[0] == f"mcpkit: {path} failed while loading:"
    assert lines[1] == f'  File "{path}", line 3'
    assert lines[2] == "    def f(:"
    assert lines[-1] == "SyntaxError: invalid syntax"
    assert "Traceback" not in done.stderr
    _no_mcpkit_frames(done.stderr)


def test_a_missing_module_and_an_exception_show_the_users_frames(tmp_path: Path) -> None:
    missing = _server_file(tmp_path, "imp.py", "from mcpkit import Server\nimport helper_missing\n")
    done = run_mcpkit("run", missing)
    assert done.returncode == 3
    assert done.stderr.splitlines() == [
        f"mcpkit: {missing} failed while loading:",
        "Traceback (most recent call last):",
        f'  File "{missing}", line 2, in <module>',
        "    import helper_missing",
        "ModuleNotFoundError: No module named 'helper_missing'",
    ]
    raising = _server_file(
        tmp_path,
        "exc.py",
        """\
        from mcpkit import Server
        server = Server("x", bogus=1)
        """,
    )
    done = run_mcpkit("run", raising)
    lines = done.stderr.splitlines()
    assert lines[2] == f'  File "{raising}", line 2, in <module>'
    assert lines[-1] == "TypeError: LowLevelServer.__init__() got an unexpected keyword argument 'bogus'"
    _no_mcpkit_frames(done.stderr)  # mcpkit's own frame, where the TypeError was raised, is left out


def test_an_object_that_is_not_a_server_says_what_it_is(tmp_path: Path) -> None:
    path = _server_file(
        tmp_path,
        "two.py",
        """\
        import json
        from mcpkit import Server
        server = Server("x")
        def helper() -> None: ...
        settings = {"a": 1}
        """,
    )
    function = run_mcpkit("run", f"{path}:helper")
    assert (function.returncode, function.stderr) == (
        2,
        f"mcpkit: {path}:helper is a function (helper), not a server (a Server or LowLevelServer); "
        "servers in it: server\n",
    )
    assert "is a module, not a server" in run_mcpkit("run", f"{path}:json").stderr
    assert "is a dict, not a server" in run_mcpkit("run", f"{path}:settings").stderr
    missing = run_mcpkit("run", f"{path}:srv")
    assert missing.stderr == f"mcpkit: {path} has no attribute 'srv'; servers in it: server\n"
    module = run_mcpkit("run", "no_such_module_for_mcpkit")
    assert module.stderr == "mcpkit: no module named 'no_such_module_for_mcpkit' (and no file of that name)\n"


def test_what_a_module_prints_at_import_goes_to_stderr_over_stdio(tmp_path: Path) -> None:
    path = _server_file(
        tmp_path,
        "printer.py",
        """\
        import os
        from mcpkit import Server
        print("hello from print")
        os.write(1, b"hello from fd 1\\n")
        server = Server("printer")
        """,
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpkit", "run", path],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = proc.communicate(json.dumps(initialize_request("2025-06-18")).encode() + b"\n", timeout=120)
    first = out.splitlines()[0]
    assert json.loads(first)["result"]["serverInfo"]["name"] == "printer"
    assert len(out.splitlines()) == 1
    assert b"hello from print\n" in err and b"hello from fd 1\n" in err


def test_the_installed_script_finds_a_module_in_the_current_folder(tmp_path: Path) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    _server_file(tmp_path / "mypkg", "srv.py", "from mcpkit import Server\nserver = Server('modsrv')\n")
    script = str(Path(sys.executable).parent / "mcpkit")  # not python -m: its sys.path[0] is bin/
    done = subprocess.run(
        [script, "info", f"{script} run mypkg.srv", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["serverInfo"]["name"] == "modsrv"


def test_a_server_file_is_named_as_pathlib_would_name_it() -> None:
    """``mcpkit run`` spells the file's path and module name without pathlib (a stdio server's
    start-up pays for every import), and must spell them exactly as pathlib does: they are the
    module's ``__file__`` and ``__name__`` and what its tracebacks show."""
    import itertools
    from pathlib import PurePosixPath

    from mcpkit.cli._load import _normalized, _stem

    segments = ["", ".", "..", "a", "b.py", ".py", "x.", "a.b.py", "..py"]
    for count in range(1, 4):
        for combination in itertools.product(segments, repeat=count):
            for location in ("/".join(combination), "/" + "/".join(combination)):
                if location and sys.platform != "win32":
                    expected = PurePosixPath(location)
                    assert _normalized(location) == str(expected), location
                    assert _stem(_normalized(location)) == expected.stem, location
    assert _normalized("//a/./b.py") == "//a/b.py" and _normalized("///a//b.py") == "/a/b.py"


def test_a_plain_run_line_is_read_as_the_parser_reads_it() -> None:
    """``mcpkit run FILE`` alone (what hosts spawn) is read without argparse: the namespace must be
    the parser's, every option at its default; any other line goes to the parser."""
    from mcpkit.cli import _parser
    from mcpkit.cli.run import plain_run

    plain = plain_run(["run", "server.py:app"])
    assert plain is not None
    for first in ("run", None):
        assert vars(plain) == vars(_parser(first).parse_args(["run", "server.py:app"]))
    assert plain_run(["run", "server.py"]).allow_host is not plain_run(["run", "server.py"]).allow_host
    for words in (
        [],
        ["run"],
        ["run", "--help"],
        ["run", "-h"],
        ["run", "server.py", "--transport", "http"],
        ["run", "--transport=http", "server.py"],
        ["client", "server.py"],
        ["run", "a.py", "b.py"],
    ):
        assert plain_run(words) is None, words
