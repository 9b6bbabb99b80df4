"""Tier 1: static notebook checks (no torch, no kernel): the house rules (README / docs)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest

from helpers import layout

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
STAGES = layout.NOTEBOOKS  # "00" -> "00_env_check", ...: the stage table, named once in helpers/layout.py
ids = [p.name for p in NOTEBOOKS]


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_notebooks_and_names_follow_the_stage_table():
    assert NOTEBOOKS, "notebooks/ holds no notebooks"
    for path in NOTEBOOKS:
        assert STAGES.get(path.stem[:2]) == path.stem, f"{path.name}: expected {STAGES.get(path.stem[:2])}.ipynb"
    numbers = [p.stem[:2] for p in NOTEBOOKS]
    assert numbers == sorted(STAGES)[: len(numbers)], f"stages must be contiguous from 00: {numbers}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_valid_nbformat(path):
    nbformat.validate(nbformat.read(str(path), as_version=4))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_outputs_stripped(path):
    for i, cell in enumerate(_load(path)["cells"]):
        if cell["cell_type"] == "code":
            assert not cell.get("outputs"), f"{path.name} cell {i} carries outputs"
            assert cell.get("execution_count") is None, f"{path.name} cell {i} carries an execution count"


def _parameter_name(node: ast.stmt, notebook: str) -> str:
    """The name a parameters-cell line assigns: `NAME = literal`, or `NAME: type = literal` where the type checker
    cannot tell the type from the literal (`OVERRIDES: dict = {}`); papermill reads both forms."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
        return node.target.id
    raise AssertionError(f"{notebook}: parameters hold assignments only, got {ast.unparse(node)!r}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_exactly_one_parameters_cell_of_commented_literals(path):
    cells = _load(path)["cells"]
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{path.name}: {len(tagged)} cells tagged 'parameters'"
    source = "".join(tagged[0]["source"])
    names = []
    for node in ast.parse(source).body:
        names.append(_parameter_name(node, path.name))
        ast.literal_eval(node.value)  # raises if not a literal
    assert {"PROFILE", "RUN", "OVERRIDES"} <= set(names), f"{path.name}: PROFILE, RUN, OVERRIDES required"
    for line in source.splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            assert "#" in line, f"{path.name}: parameter line without a comment: {line!r}"
    assert re.search(r'^PROFILE = "smoke"', source, re.M), f"{path.name}: opened by hand it must run the smoke profile"
    # papermill silently ignores a parameter it cannot parse (e.g. a second '=' inside the comment),
    # which would make `-p NAME value` a no-op: every assigned name must be one papermill sees.
    import papermill

    seen = set(papermill.inspect_notebook(str(path)))
    assert seen == set(names), f"{path.name}: papermill cannot override {sorted(set(names) - seen)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_headless_contract(path):
    for i, cell in enumerate(_load(path)["cells"]):
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"])
        for bad in ("!pip", "%pip", "input(", "getpass", "notebook_login", "huggingface-cli login"):
            assert bad not in src, f"{path.name} cell {i}: '{bad}' breaks headless 'Run all'"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids)
def test_reads_like_a_script(path):
    cells = _load(path)["cells"]
    first = "".join(cells[0]["source"])
    assert cells[0]["cell_type"] == "markdown" and first.startswith("# "), f"{path.name}: opens with a '# Title' cell"
    for word in ("Inputs", "Outputs", "Run time"):
        assert word.lower() in first.lower(), f"{path.name}: title cell must state {word}"
    sections = [l for c in cells if c["cell_type"] == "markdown" for l in "".join(c["source"]).splitlines()
                if l.startswith("## ")]
    numbers = [int(m.group(1)) for s in sections if (m := re.match(r"## (\d+)\.", s))]
    assert numbers and numbers == list(range(1, len(numbers) + 1)), f"{path.name}: numbered ## sections, got {sections}"
    code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert "from helpers" in code or "import helpers" in code, f"{path.name}: logic lives in helpers/"
