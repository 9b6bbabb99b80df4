"""The project's shape: one run layout (held against the README), no import circles, 03/04/05 kept identical."""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import config, layout
from helpers.layout import STAGES, RunLayout

ROOT = config.project_root()
HELPERS = ROOT / "helpers"


# ---------------------------------------------------------------- the run layout
def test_layout_is_under_the_runs_folder_and_creates_nothing_until_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("KIT_RUNS_DIR", str(tmp_path))
    lay = RunLayout.of(config.load_profile("smoke", run="r1"))
    assert lay.root == tmp_path / "r1" and lay == RunLayout.of("r1")
    assert lay.val_data == tmp_path / "r1" / "data" / "val.jsonl"
    assert lay.adapter_dir("model1_lora") == tmp_path / "r1" / "models" / "model1_lora" / "adapter"
    assert not (tmp_path / "r1").exists()
    assert lay.made(lay.eval_dir).is_dir() and lay.rel(lay.eval_rows("base")) == "eval/base.jsonl"


def _readme_stage_rows() -> dict[str, tuple[set[str], set[str]]]:
    """'03' -> (paths in the reads column, paths in the writes column) of the README's stage table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("| notebook | reads | writes under `runs/<run>/`")
    rows = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        numbers = re.match(r"`([\d/]+)_", cells[0]).group(1)
        reads, writes = (set(re.findall(r"`([^`]+)`", c)) for c in cells[1:3])
        rows[numbers] = (reads, writes)
    return rows


def test_the_readme_stage_table_is_the_layouts():
    rows = _readme_stage_rows()
    assert set(rows) == {"/".join(s.numbers) for s in STAGES}
    for stage in STAGES:
        reads, writes = rows["/".join(stage.numbers)]
        assert reads == set(stage.reads), (stage.notebooks, "reads")
        assert writes == set(stage.writes), (stage.notebooks, "writes")


def test_every_pipeline_notebook_is_in_the_stage_table():
    on_disk = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert on_disk == sorted(layout.NOTEBOOKS.values())


def _code_files() -> dict[str, str]:
    """Every helpers module and notebook code cell, by a readable name."""
    out = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in HELPERS.rglob("*.py")}
    for nb in (ROOT / "notebooks").glob("*.ipynb"):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        out[nb.name] = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return out


# A stage file spelled as a literal (a run folder joined by hand, a stage file's name) anywhere but layout.py;
# the project's own folders (project_root() / "data", / "notebooks") and the model cache are not run files.
SPELLED = re.compile(r'''(?<!project_root\(\) )/ "(env|data|curriculum|models|eval|ensemble|agents|notebooks)"|'''
                     r'''"(env|pipeline|stats|tournament)\.json"|"(train|val)\.jsonl"|runs_root\(\) / (?!"_cache")''')


def test_run_paths_are_spelled_only_in_the_layout():
    offenders = {name: sorted({m.group(0) for m in SPELLED.finditer(text)})
                 for name, text in _code_files().items() if name != "helpers/layout.py" and SPELLED.search(text)}
    assert offenders == {}, "ask helpers.layout.RunLayout instead"


# ---------------------------------------------------------------- imports
def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """helpers module -> the helpers modules it imports anywhere in its source (function-level imports too)."""
    modules = {_module_name(p): p for p in HELPERS.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                           for a in node.names]
            else:
                continue
            graph[name] |= {t for t in targets if t in modules and t != name and t != "helpers"}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [node, nxt] if nxt in path else [node, nxt]
            if nxt not in state and (found := visit(nxt, path + [node])):
                return found
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start, [])):
            return found
    return None


def room_of(module: str) -> str:
    """The part a helpers module belongs to: its first folder under helpers/ (helpers.env.facts -> helpers.env), or
    itself for a top-level module (helpers.config)."""
    return ".".join(module.split(".")[:2])


def room_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Part -> the other parts its modules import (a part's own imports left out)."""
    rooms: dict[str, set[str]] = {}
    for module, targets in graph.items():
        rooms.setdefault(room_of(module), set()).update(room_of(t) for t in targets)
    return {room: targets - {room} for room, targets in rooms.items()}


def layers(rooms: dict[str, set[str]]) -> list[list[str]]:
    """The parts floor by floor from the bottom: each part one floor above the highest part it imports."""
    floor: dict[str, int] = {}

    def height(room: str) -> int:
        if room not in floor:
            floor[room] = 1 + max((height(t) for t in rooms[room]), default=-1)
        return floor[room]

    for room in rooms:
        height(room)
    return [sorted(r for r, f in floor.items() if f == k) for k in range(max(floor.values()) + 1)]


def test_a_part_importing_a_part_above_it_is_a_circle_between_parts():
    modules = {"helpers.env.facts": {"helpers.models.api"}, "helpers.env.gpu": set(),
               "helpers.models.api": set(), "helpers.models.load": {"helpers.env.facts"}}
    assert find_cycle({m: set() for m in modules} | modules) is None  # no circle file by file
    assert find_cycle(room_graph(modules)) == ["helpers.env", "helpers.models", "helpers.env"]
    assert layers(room_graph({"helpers.env.gpu": set(), "helpers.models.load": {"helpers.env.facts"},
                              "helpers.env.facts": set()})) == [["helpers.env"], ["helpers.models"]]


def test_parts_import_only_the_parts_below_them():
    """Folder by folder, not only file by file: a part (helpers/env/, helpers/train/, helpers/config.py) may import
    another only if that one imports nothing of it, however indirectly; `pytest tests/test_structure.py -k
    parts_import -s` prints the floors."""
    rooms = room_graph(import_graph())
    assert {"helpers.env", "helpers.gpu_check", "helpers.models", "helpers.train", "helpers.curriculum"} <= set(rooms)
    assert find_cycle(rooms) is None, f"an import runs back up between parts: {find_cycle(rooms)}"
    for k, floor in enumerate(layers(rooms)):
        print(f"floor {k}: {', '.join(r.removeprefix('helpers.') for r in floor)}")


def test_the_cycle_finder_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_helpers_imports_never_circle():
    graph = import_graph()
    assert {"helpers.layout", "helpers.models.members", "helpers.agents.harness.cli", "helpers.data.rows"} <= set(graph)
    assert find_cycle(graph) is None


# ---------------------------------------------------------------- the three training notebooks
TRAINING = tuple(layout.NOTEBOOKS[n] for n in ("03", "04", "05"))


@pytest.mark.parametrize("other", TRAINING[1:])
def test_training_notebooks_differ_only_in_title_and_parameters(other):
    first, second = (json.loads((ROOT / "notebooks" / f"{n}.ipynb").read_text(encoding="utf-8"))["cells"]
                     for n in (TRAINING[0], other))
    assert len(first) == len(second)
    model = {n: re.search(r'MODEL_NAME = "(\w+)"', "".join(c[1]["source"])).group(1) for n, c in
             ((TRAINING[0], first), (other, second))}
    for i, (a, b) in enumerate(zip(first, second)):
        src_a, src_b = "".join(a["source"]), "".join(b["source"])
        assert (a["cell_type"], a.get("metadata")) == (b["cell_type"], b.get("metadata")), i
        if i == 0:
            assert a["cell_type"] == "markdown" and src_a.startswith("# 03") and src_b.startswith(f"# {other[:2]}")
        elif i == 1:  # the parameters cell: the same but for the adapter it names
            assert src_a.replace(model[TRAINING[0]], "<model>") == src_b.replace(model[other], "<model>")
        else:
            assert src_a == src_b, f"cell {i} of {other} differs from {TRAINING[0]}: edit all three together"


# ---------------------------------------------------------------- entry points
ENTRY_POINTS = ("helpers.pipeline", "helpers.data", "helpers.train", "helpers.report", "helpers.env",
                "helpers.models", "helpers.agents.harness", "helpers.agents.stages")


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_every_stage_command_line_starts(module):
    done = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "usage:" in done.stdout, done.stderr


def test_the_agents_command_line_names_its_two_agents():
    for argv, code, needle in ((["question", "--help"], 0, "--num_questions"), (["answer", "--help"], 0, "--input_file"),
                               ([], 2, "question,answer"), (["nosuch"], 2, "question,answer")):
        done = subprocess.run([sys.executable, "-m", "helpers.agents", *argv], cwd=ROOT, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == code and needle in done.stdout + done.stderr, (argv, done.stderr)


def _named_in(doc: str) -> set[str]:
    return set(re.findall(r"[a-z_]+(?:\.[a-z_]+)*", doc))


def _is_named(module: str, named: set[str]) -> bool:
    """A module counts as named by its dotted name, or (three parts or more) by its name inside its package."""
    parts = module.split(".")
    return module in named or (len(parts) >= 3 and ".".join(parts[1:]) in named)


def test_the_package_maps_name_every_module():
    import helpers
    import helpers.agents
    import helpers.puzzles
    top = _named_in(helpers.__doc__.split("Stage -> where its logic lives", 1)[1])
    own = {"agents.": _named_in(helpers.agents.__doc__), "puzzles.": _named_in(helpers.puzzles.__doc__)}
    modules = {_module_name(p).removeprefix("helpers.") for p in HELPERS.rglob("*.py")}
    modules = {m for m in modules if m != "helpers" and not m.endswith("__main__")}
    missing = {m for m in modules if not _is_named(m, top)
               and not any(m.startswith(pkg) and _is_named(m[len(pkg):], names) for pkg, names in own.items())}
    assert missing == set(), ("name every module in its package's map (helpers/__init__.py, helpers/agents/__init__.py, "
                              "helpers/puzzles/__init__.py)")


# ---------------------------------------------------------------- which tiers run a test (tests/_tiers.py)
def _tiny_kit(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_the_pure_derivation_follows_what_a_test_reaches(tmp_path, monkeypatch):
    """Each way a test reaches a varying package makes it varying; a binding it never uses does not."""
    import _tiers
    _tiny_kit(tmp_path, {
        "constraints-container.txt": "transformers==4.51.3\npeft==0.15.2  # a pin\n", "constraints-gpu.txt": "trl==1.15.0\n",
        "helpers/__init__.py": "", "helpers/cli/__init__.py": "", "helpers/cli/__main__.py": "import transformers\n",
        "helpers/pure.py": "import json\n\ndef plain():\n    return json.dumps(1)\n",
        "helpers/lazy.py": ("from helpers.pure import plain\n\ndef fast():\n    return plain()\n\n"
                            "def heavy():\n    import torch\n    return torch.ones(1)\n"),
        "tests/conftest.py": "import pytest\n\n@pytest.fixture\ndef tok():\n    import transformers\n",
        "tests/_aid.py": "def light():\n    return 1\n\ndef model():\n    import peft\n",
        "tests/test_x.py": (
            "import pytest\nfrom helpers import lazy\nfrom helpers.lazy import heavy\nimport _aid\n"
            "import subprocess, sys\n\n"
            "def test_binding_unused():\n    assert lazy.fast()\n\n"
            "def test_function_level_import():\n    heavy()\n\n"
            "def test_fixture(tok):\n    pass\n\n"
            "def test_helper_module():\n    _aid.model()\n\n"
            "def test_helper_module_pure():\n    _aid.light()\n\n"
            "def test_subprocess():\n    subprocess.run([sys.executable, '-m', 'helpers.cli'])\n"),
        # a parameter list is built when the file is imported: every test of the file reaches what it imports
        "tests/test_z.py": ("import pytest\n\ndef _builds():\n    import trl\n\n"
                            "@pytest.mark.parametrize('x', [_builds()])\ndef test_parametrize(x):\n    pass\n"),
        "tests/test_y.py": ("import pytest\nfrom _aid import model\n"
                            "_auto = pytest.fixture(autouse=True)(model)\n\ndef test_autouse():\n    pass\n"),
    })
    monkeypatch.setattr(_tiers, "ROOT", tmp_path)
    monkeypatch.setattr(_tiers, "TESTS", tmp_path / "tests")
    _tiers.clear_caches()
    try:
        got = {name: set(_tiers.varying(mod, name)) for mod in ("test_x", "test_y", "test_z")
               for name in _tiers.test_names(tmp_path / "tests" / f"{mod}.py")}
    finally:
        _tiers.clear_caches()
    assert got == {"test_binding_unused": set(), "test_function_level_import": {"torch"},
                   "test_fixture": {"transformers"}, "test_helper_module": {"peft"}, "test_helper_module_pure": set(),
                   "test_subprocess": {"transformers"}, "test_parametrize": {"trl"}, "test_autouse": {"peft"}}


@functools.lru_cache(maxsize=1)
def _pure_and_varying() -> tuple[list[Path], dict[str, list[str]]]:
    """The test files whose every test is pure, and {file: its varying tests} for the rest."""
    import _tiers
    pure_files, varying = [], {}
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        names = [n for n in _tiers.test_names(path) if _tiers.varying(path.stem, n)]
        if names:
            varying[path.name] = names
        elif _tiers.test_names(path):
            pure_files.append(path)
    return pure_files, varying


def test_no_test_is_marked_nolibs_by_hand():
    """tests/conftest.py marks the pure tests at collection; a hand mark would be a second, unchecked opinion."""
    hand = [p.name for p in (ROOT / "tests").glob("test_*.py") if re.search(r"mark\.nolibs\b", p.read_text())]
    assert hand == []


def test_the_pure_and_varying_tests_are_where_they_should_be():
    """The derivation is not so generous that nothing is pure, nor so lax that the model tests are."""
    pure_files, varying = _pure_and_varying()
    pure = {p.name for p in pure_files}
    assert {"test_records.py", "test_io.py", "test_learning_rule.py", "test_agents_json.py", "test_bundled_data.py",
            "test_puzzles_arrangements.py", "test_proof_seating.py", "test_deduction_kinship.py"} <= pure
    assert len(varying["test_memory.py"]) < 10 and len(varying["test_config.py"]) < 3  # their command lines, a loader
    assert {"test_models.py", "test_train.py", "test_scoring.py", "test_tinymodel.py", "test_rl.py"} <= set(varying)
    assert "test_every_stage_command_line_starts" in varying["test_structure.py"]  # python -m helpers.train ...


def _tier_expressions() -> dict[str, str]:
    """The -m expression of each make target that runs pytest (an unmarked run selects everything: "")."""
    tiers: dict[str, str] = {}
    target = None
    for line in (ROOT / "Makefile").read_text(encoding="utf-8").splitlines():
        head = re.match(r"^([\w.$()-]+):", line)
        if head:
            target = head.group(1)
        elif line.startswith("\t") and "-m pytest" in line and target:
            args = line.split("-m pytest", 1)[1]
            expr = re.search(r' -m (?:"([^"]*)"|(\w+))', args)
            if expr or not re.search(r"tests/\w+\.py", args):  # one named file without -m chooses no marker
                tiers[target] = (expr.group(1) or expr.group(2)) if expr else ""
    return tiers


def _selected(expr: str, marks: set[str]) -> bool:
    from _pytest.mark.expression import Expression
    return not expr or Expression.compile(expr).evaluate(lambda name, **kw: name in marks)


def test_every_marked_test_is_run_by_a_tier_that_ci_runs():
    """A marker that make test leaves out must be some other tier's, and CI must run that tier: otherwise its tests
    run nowhere. Each marker of pyproject.toml alone (and none) must be selected by a tier .ci/run calls."""
    ci = re.sub(r'"[^"]*"|#.*', "", (ROOT / ".ci" / "run").read_text(encoding="utf-8"))  # commands only
    tiers = {t: e for t, e in _tier_expressions().items() if re.search(rf"(?m)(?:^|\bthen|[;&|(]|\btimed)\s*make {re.escape(t)}(?![\w-])", ci)}
    assert {"test", "test-integration", "test-realmodel", "test-rehearsal", "test-container"} <= set(tiers), tiers
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    markers = re.findall(r'^\s+"(\w+):', text.split("markers = [", 1)[1].split("]", 1)[0], re.M)
    set_at_collection = {"nolibs", "pins", "unslothwheels"}  # they narrow a tier, never choose one
    assert {"pipeline", "integration", "realmodel"} <= set(markers)
    nowhere = [m for m in [None, *markers] if m not in set_at_collection
               and not any(_selected(e, {m} if m else set()) for e in tiers.values())]
    assert nowhere == [], f"no tier that CI runs selects tests marked {nowhere}"
    assert not _selected(tiers["test"], {"integration"}) and _selected(tiers["test-integration"], {"integration"})


BLOCKER = """import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is blocked: a pure test must not reach it")
sys.meta_path.insert(0, Block())
"""


def test_pure_tests_import_and_pass_with_every_varying_package_blocked(tmp_path):
    """Importing every all-pure file, and running three of them, with the varying packages unimportable."""
    import _tiers
    pure_files, _ = _pure_and_varying()
    (tmp_path / "sitecustomize.py").write_text(f"BLOCKED = {sorted(_tiers.varying_imports())!r}\n" + BLOCKER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT), str(ROOT / "tests")]))
    names = ", ".join(repr(p.stem) for p in pure_files)
    probe = f"import importlib; [importlib.import_module(n) for n in ({names},)]"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    sample = [f"{ROOT / 'tests' / f}.py::{name.replace('.', '::')}" for f in ("test_memory", "test_config", "test_records")
              for name in _tiers.test_names(ROOT / "tests" / f"{f}.py") if not _tiers.varying(f, name)]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", *sample],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:]


@pytest.mark.pins  # each pin tier imports the whole kit on its own Python and packages (what pure tests skip there)
def test_every_helpers_module_imports():
    import importlib
    import _tiers
    modules = sorted(m for m in _tiers.kit_modules() if m.startswith("helpers") and "__main__" not in m)
    had_unsloth = "unsloth" in sys.modules  # an earlier test of this worker may have loaded it on purpose
    for name in modules:
        importlib.import_module(name)
    assert had_unsloth or "unsloth" not in sys.modules  # importing the kit never patches transformers by itself


def test_tests_reading_the_unsloth_wheels_say_so():
    """The container tier has no Unsloth wheels (its pin set leaves Unsloth out): a test that reads them must be pure
    (skipped there) or marked unslothwheels, which that tier deselects (it failed CI once for want of this)."""
    import _tiers
    reads = re.compile(r"pinned_wheels\(\)")
    readers = [p for p in (ROOT / "tests").glob("test_*.py") if reads.search(p.read_text())]
    assert readers, "no test reads the pinned Unsloth wheels"
    for path in readers:
        for fn in ast.parse(path.read_text()).body:
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and reads.search(ast.unparse(fn)):
                marks = " ".join(ast.unparse(d) for d in fn.decorator_list)
                file_mark = re.search(r"^pytestmark = .*", path.read_text(), re.M)
                marked = "unslothwheels" in marks + (file_mark.group(0) if file_mark else "")
                assert marked or not _tiers.varying(path.stem, fn.name), f"{path.name}::{fn.name}"


# ---------------------------------------------------------------- the agents that play never import their stages
def test_match_time_agents_never_import_the_stages():
    graph = import_graph()
    stages = {m for m in graph if m == "helpers.agents.stages" or m.startswith("helpers.agents.stages.")}
    assert {"helpers.agents.stages.writer_train", "helpers.agents.stages.reasoner_train"} <= stages
    offenders = {m: sorted(graph[m] & stages) for m in graph
                 if m.startswith("helpers.agents") and m not in stages and graph[m] & stages}
    assert offenders == {}, "a stage writes its decision into the run; helpers.agents.build reads it (RunLayout)"


# ---------------------------------------------------------------- packages only re-export; library modules parse no flags
def _init_offences(source: str) -> list[str]:
    """What an __init__.py holds beyond a docstring, imports and __all__ (each offence as its line and kind)."""
    body = ast.parse(source).body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    allowed = (ast.Import, ast.ImportFrom)
    return [f"line {node.lineno}: {type(node).__name__}" for node in body
            if not isinstance(node, allowed) and not _is_dunder_assignment(node)]


def _is_dunder_assignment(node: ast.AST) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else []
    return len(targets) == 1 and isinstance(targets[0], ast.Name) and targets[0].id in {"__all__", "__version__"}


def test_the_init_check_catches_logic():
    assert _init_offences('"""Doc."""\nfrom a import b\n__all__ = ["b"]\n') == []
    assert _init_offences('"""Doc."""\nimport a\ndef f():\n    return 1\nX = 2\n') == ["line 3: FunctionDef",
                                                                                   "line 5: Assign"]


@pytest.mark.parametrize("init", sorted(str(p.relative_to(ROOT)) for p in HELPERS.rglob("__init__.py")))
def test_every_package_init_only_re_exports(init):
    source = (ROOT / init).read_text(encoding="utf-8")
    assert len(source.splitlines()) <= 40, f"{init}: over 40 lines; logic lives in modules named for it"
    assert _init_offences(source) == [], f"{init}: an __init__.py holds a docstring, imports and __all__ only"


def test_only_command_line_modules_parse_flags():
    """Command lines live in one place per stage: a package's __main__.py, the agents' harness flags (cli.py), the
    pipeline's own, and `python -m helpers.config show` (config is one module, not a package)."""
    parsing = sorted(str(p.relative_to(ROOT)) for p in HELPERS.rglob("*.py")
                     if "argparse" in p.read_text(encoding="utf-8"))
    assert parsing and all(p.endswith(("/__main__.py", "/cli.py")) or p in ("helpers/pipeline.py", "helpers/config.py")
                           for p in parsing), parsing


# ---------------------------------------------------------------- profiles are read by attribute, never re-defaulted
PROFILE_SUBSCRIPT = re.compile(r'''\bcfg\[["'](env|model|data|curriculum|train|models|eval|writer|reasoner|agents)["']\]''')


def test_profile_sections_are_read_as_typed_attributes():
    """config.Profile's sections are frozen dataclasses: `cfg.train.lr_start`, never `cfg["train"]["lr_start"]` and
    never `.get(key, default)` (the objects have no .get; configs/base.yaml gives every value)."""
    offenders = {name: sorted({m.group(0) for m in PROFILE_SUBSCRIPT.finditer(text)})
                 for name, text in _code_files().items() if PROFILE_SUBSCRIPT.search(text)}
    assert offenders == {}


@pytest.mark.parametrize("module", sorted(__import__("helpers.moved", fromlist=["MOVED"]).MOVED))
def test_a_command_that_moved_says_where_it_lives_now_and_exits_2(module):
    """`python -m helpers.env.memory ...` or `python -m helpers.env gpu-check ...` (the line before the move) must
    not exit 0 having done nothing."""
    from helpers.moved import MOVED
    name, *subcommand = module.split()
    where = HELPERS / name.removeprefix("helpers.").replace(".", "/")
    assert where.with_suffix(".py").is_file() or (where / "__main__.py").is_file(), f"{name} is gone"
    done = subprocess.run([sys.executable, "-m", name, *subcommand, "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and MOVED[module] in done.stderr and not done.stdout, (module, done.stderr)
    # one line of its own (runpy may warn first when the package imported the module before running it)
    assert done.stderr.strip().splitlines()[-1].startswith(f"python -m {module} is not a command"), done.stderr
