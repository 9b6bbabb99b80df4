"""The type check of the notebooks' code (`make typecheck`: mypy through nbqa, configured in pyproject.toml's
[tool.mypy]). The real notebooks pass it, and it fails on each kind of bug it is there for, shown on notebook 00
broken on purpose: a name whose type changes between cells (the `verdict` bug: the env check's dict, then the RL
line's str, read as a dict in the last cell), a name read before the cell that sets it, a name set on one branch
only, and a call with a keyword its function lacks (helpers' own signatures are read).

Every notebook is checked in one mypy run on copies under a temporary folder (mypy's cold start, ~6 s, paid once;
nbqa's scratch files never appear in notebooks/, which the smoke pipeline fingerprints while it runs)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
ENV_CHECK = ROOT / "notebooks" / "00_env_check.ipynb"
# nbqa names a code cell by its 1-based number among the code cells: "<file>:cell_7:13: error: ...  [assignment]"
ERROR = re.compile(r"^(?P<file>\S+?\.ipynb):cell_(?P<cell>\d+):(?P<line>\d+): error: (?P<message>.*?)  "
                   r"\[(?P<code>[a-z-]+)\]$")
SUMMARY = re.compile(r"^(?:Found \d+ errors? in \d+ files? \(checked (\d+) source files?\)|"
                     r"Success: no issues found in (\d+) source files?)$", re.M)


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _write(nb: dict, path: Path) -> Path:
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _replaced(nb: dict, old: str, new: str) -> dict:
    """The notebook with `old` replaced by `new` in its code cells; `old` must be there."""
    assert any(old in c["source"] for c in nb["cells"] if c["cell_type"] == "code"), f"{old!r} not in the notebook"
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["source"] = cell["source"].replace(old, new)
    return nb


def _cell_moved_last(nb: dict, opening: str) -> dict:
    """The notebook with the code cell whose source starts with `opening` moved to the end."""
    index = next((i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code" and c["source"].startswith(opening)),
                 None)
    assert index is not None, f"no code cell opens with {opening!r}"
    nb["cells"].append(nb["cells"].pop(index))
    return nb


def _cell_added(nb: dict, source: str) -> dict:
    nb["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None, "source": source, "outputs": []})
    return nb


def where(nb: dict, text: str) -> tuple[int, int]:
    """(code cell number from 1, line from 1) of the first line holding `text`, as nbqa numbers them."""
    code = [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]
    for number, source in enumerate(code, start=1):
        for line, content in enumerate(source.splitlines(), start=1):
            if text in content:
                return number, line
    raise AssertionError(f"{text!r} is in no code cell")


# name -> (notebook 00 broken in one way, the text on the line that must be flagged, mypy's error code there, every
# code its errors may carry: a name read before its cell also has no type yet where it is read, [has-type])
BROKEN = {
    "verdict_bug": (lambda nb: _replaced(nb, "rl_verdict", "verdict"), 'verdict = "fits" if', "assignment",
                    {"assignment"}),
    "read_before_set": (lambda nb: _cell_moved_last(nb, "checks = env.evaluate("), "facts, checks, recommendation",
                        "used-before-def", {"used-before-def", "has-type"}),
    "set_on_one_branch": (lambda nb: _cell_added(nb, 'print("RL stage verdict:", rl_verdict)'), "RL stage verdict:",
                          "possibly-undefined", {"possibly-undefined"}),
    "wrong_keyword": (lambda nb: _replaced(nb, "hf_budget_s=HF_CACHE_BUDGET_S", "hf_budget=HF_CACHE_BUDGET_S"),
                      "hf_budget=", "call-arg", {"call-arg"}),
}


def run_check(paths: list[Path], cache: Path) -> tuple[str, dict[str, list[dict]]]:
    """mypy over these notebooks' code through nbqa, with pyproject.toml's settings: (its output, notebook file name ->
    its errors). Fails unless mypy ran to the end over every notebook given. Run from the project root, where mypy
    finds helpers/ (the editable install's import hook is invisible to it)."""
    done = subprocess.run([sys.executable, "-m", "nbqa", "mypy", *map(str, paths), "--no-color-output",
                           "--cache-dir", str(cache), "--config-file", str(ROOT / "pyproject.toml")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    summary = SUMMARY.search(output)
    assert done.returncode in (0, 1) and summary, f"mypy did not finish (exit {done.returncode}):\n{output}"
    assert int(summary.group(1) or summary.group(2)) == len(paths), f"not every notebook was checked:\n{output}"
    errors: dict[str, list[dict]] = {p.name: [] for p in paths}
    for line in output.splitlines():
        if found := ERROR.match(line):
            errors[Path(found["file"]).name].append({**found.groupdict(), "cell": int(found["cell"]),
                                                     "line": int(found["line"])})
    assert sum(map(len, errors.values())) == output.count(": error: "), f"an error line was not understood:\n{output}"
    return output, errors


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> tuple[str, dict[str, list[dict]], dict[str, dict]]:
    """The real notebooks and the broken copies of notebook 00, checked together: (mypy's output, file name ->
    errors, broken case -> its notebook)."""
    folder = tmp_path_factory.mktemp("typecheck")
    paths = [Path(shutil.copy(nb, folder / nb.name)) for nb in NOTEBOOKS]
    broken = {name: make(_read(ENV_CHECK)) for name, (make, *_) in BROKEN.items()}
    paths += [_write(nb, folder / f"broken_{name}.ipynb") for name, nb in broken.items()]
    output, errors = run_check(paths, folder / "mypy-cache")
    return output, errors, broken


def test_the_notebooks_pass_the_type_check(checked):
    output, errors, _ = checked
    assert len(NOTEBOOKS) >= 9
    failing = {name: [f"cell_{e['cell']}:{e['line']}: {e['message']} [{e['code']}]" for e in found]
               for name, found in errors.items() if found and not name.startswith("broken_")}
    assert failing == {}, f"run `make typecheck` to see each error in its notebook:\n{output}"


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_the_type_check_fails_on_a_broken_notebook(checked, case):
    output, errors, broken = checked
    _, flagged_text, code, allowed = BROKEN[case]
    cell, line = where(broken[case], flagged_text)
    found = [(e["cell"], e["line"], e["code"]) for e in errors[f"broken_{case}.ipynb"]]
    assert (cell, line, code) in found, f"expected [{code}] at cell_{cell}:{line}, got {found}:\n{output}"
    assert {c for _, _, c in found} <= allowed, f"only {sorted(allowed)} errors expected, got {found}"


def test_the_verdict_bug_is_reported_as_a_dict_turned_str(checked):
    """The bug notebook 00 shipped with: the last cell's verdict['worst'] raised TypeError on every profile but smoke."""
    _, errors, _ = checked
    [error] = errors["broken_verdict_bug.ipynb"]
    assert 'expression has type "str", variable has type "dict[Any, Any]"' in error["message"], error
