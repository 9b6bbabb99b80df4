"""Which tests can behave differently on another pin set, derived from the code each test reaches.

The tiers that re-run the tests on other library pins (`make test-container`, `make test-gpu-stack`) only need the
tests whose code reaches a package those pins change. A test that reaches none is pure: it runs the same on every
pin set, so `make test` runs it once and the other tiers skip it (tests/conftest.py marks it `nolibs` at
collection). Nothing is marked by hand, so a new test cannot fall between the tiers.

What a test reaches is read from the source, never imported or run. Every module of helpers/ and tests/ is cut
into definitions (each top-level function or class, and the module's import-time code); a definition reaches:
- what it imports and the names it uses, followed into the definitions they name, in any module of the kit (a
  whole class when one of its methods is a test or a class is named: it may use any of its methods);
- for a test or a fixture, the fixtures its arguments name (in its file or tests/conftest.py), and the autouse ones;
- a module a test names in a string (`python -m helpers.train` in a subprocess): every definition in it;
- the import-time code of its own module and of every package above it.
A test is pure when none of that reaches a varying package: one the container's or the GPU stack's overlay pins
(constraints-container.txt, constraints-gpu.txt) or torch and the GPU stack's own packages, which each tier installs
its own of. constraints-py310.txt is not a varying set: it holds what Python 3.10 forces (numpy, matplotlib,
IPython ...), not a stack the kit is tested against, and the pure tests use none of those packages' newer APIs.
Dynamic imports (importlib with a computed name) are not seen: tests/test_structure.py imports every file whose
tests are all pure and fails if a varying package loads, and its import of every helpers module is not pure, so each
tier still imports the whole kit on its own Python.

`python tests/_tiers.py` prints each file's pure and varying tests.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata as metadata
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
VARYING_OVERLAYS = ("constraints-container.txt", "constraints-gpu.txt")
# Packages that differ between the tiers without an overlay line: each tier installs its own torch (2.13.0 CPU,
# 2.5.1, a CUDA 2.13.0), and the GPU stack adds Unsloth and what it brings.
ALWAYS_VARYING = frozenset({"torch", "triton", "unsloth", "unsloth_zoo", "bitsandbytes", "xformers", "torchao"})
MODULE_STRING = re.compile(r"^helpers(\.\w+)+$")
WHOLE = "*"      # every definition of a module (a module run as a program)
IMPORT_TIME = ""  # a module's top-level code


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


@functools.lru_cache(maxsize=None)
def varying_imports() -> frozenset[str]:
    """Top-level import names whose distribution a varying overlay pins, and the always-varying ones."""
    dists = set()
    for name in VARYING_OVERLAYS:
        for line in (ROOT / name).read_text().splitlines():
            key = re.split(r"[=<>!~;\[ \t#]", line.strip(), maxsplit=1)[0]
            if key:
                dists.add(_normal(key))
    names = {imp for imp, owners in metadata.packages_distributions().items()
             if any(_normal(d) in dists for d in owners)}
    names |= {_normal(d).replace("-", "_") for d in dists}  # one not installed here, by its own name
    return frozenset(names | ALWAYS_VARYING)


@functools.lru_cache(maxsize=None)
def kit_modules() -> dict[str, Path]:
    """Every module of the kit by its import name: helpers.* and the files of tests/ (by their stem)."""
    out = {}
    for path in (ROOT / "helpers").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    for path in TESTS.glob("*.py"):
        out[path.stem] = path
    return out


class Module:
    """One module's top-level bindings: imports (name -> (module, attribute or None)), definitions, fixtures."""

    def __init__(self, name: str, path: Path):
        self.name, self.path = name, path
        self.tree = ast.parse(path.read_text(encoding="utf-8"))
        self.imports: dict[str, tuple[str, str | None]] = {}
        self.defs: dict[str, ast.AST] = {}
        self.fixtures: set[str] = set()
        self.autouse: list[str] = []
        self.top: list[ast.AST] = []  # what runs at import: every statement but the bodies of functions
        for node in self.tree.body:
            self._take(node)

    def _take(self, node: ast.stmt) -> None:
        if isinstance(node, ast.If) and "__main__" in ast.unparse(node.test):
            return  # runs only as a program, never on import
        if isinstance(node, (ast.If, ast.Try)):
            self.top.append(getattr(node, "test", ast.Pass()))
            for child in [*node.body, *node.orelse, *getattr(node, "finalbody", [])]:
                self._take(child)
            for handler in getattr(node, "handlers", []):
                for child in handler.body:
                    self._take(child)
            return
        if isinstance(node, ast.Import):
            for a in node.names:
                self.imports[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], None)
            self.top.append(node)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                self.imports[a.asname or a.name] = (node.module, a.name)
            self.top.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.defs[node.name] = node
            self.top += node.decorator_list
            marks = " ".join(ast.unparse(d) for d in node.decorator_list)
            if "fixture" in marks and not isinstance(node, ast.ClassDef):
                self._fixture(node.name, marks)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for name in (n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)):
                self.defs[name] = node
                value = ast.unparse(node.value) if node.value else ""
                if value.startswith("pytest.fixture"):  # name = pytest.fixture(...)(function)
                    self._fixture(name, value)
        else:
            self.top.append(node)

    def _fixture(self, name: str, marks: str) -> None:
        self.fixtures.add(name)
        if "autouse=True" in marks:
            self.autouse.append(name)


@functools.lru_cache(maxsize=None)
def module(name: str) -> Module | None:
    path = kit_modules().get(name)
    return Module(name, path) if path else None


def _parents(name: str) -> list[str]:
    """helpers.a.b -> [helpers, helpers.a]: importing a module runs its packages' __init__ first."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


class Edges:
    """Collects one definition's direct successors (module, name) and the third-party modules it imports."""

    def __init__(self) -> None:
        self.next: list[tuple[str, str]] = []
        self.external: set[str] = set()

    def add(self, mod: str, name: str) -> None:
        self.next.append((mod, name))

    def target(self, mod_name: str, attr: str | None, used: bool = True) -> None:
        """An import of `mod_name` (and of `attr` from it: `used`, unless it is only bound at import time)."""
        if mod_name in kit_modules():
            self.add(mod_name, IMPORT_TIME)
            if attr is not None:
                sub = f"{mod_name}.{attr}"
                if sub in kit_modules():
                    self.add(sub, IMPORT_TIME)
                elif used:
                    self.add(mod_name, attr)
        elif mod_name.split(".")[0] not in ("helpers", "__future__"):
            self.external.add(mod_name.split(".")[0])

    def fixture(self, mod: Module, name: str) -> None:
        for where in (mod, module("conftest")):
            if where is not None and name in where.fixtures:
                self.add(where.name, name)
                return

    def walk(self, mod: Module, nodes: list, top: bool = False) -> None:
        """The names `nodes` use. At import time (`top`) a `from m import f` binds f without running it: f counts
        where a definition uses it; inside a function it is imported to be used, so it counts there."""
        bound = dict(mod.imports)
        for node in nodes:  # a function's own imports bind names the way the module's do
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import) and not top:
                    bound.update({a.asname or a.name.split(".")[0]: (a.name if a.asname else a.name.split(".")[0], None)
                                  for a in sub.names})
                elif isinstance(sub, ast.ImportFrom) and sub.module and sub.level == 0 and not top:
                    bound.update({a.asname or a.name: (sub.module, a.name) for a in sub.names})
        for node in nodes:
            for sub in ast.walk(node):
                if isinstance(sub, ast.Import):
                    for a in sub.names:
                        self.target(a.name, None)
                elif isinstance(sub, ast.ImportFrom) and sub.module and sub.level == 0:
                    for a in sub.names:
                        self.target(sub.module, a.name, used=not (top and sub in mod.top))
                elif isinstance(sub, ast.Name):
                    if sub.id in bound:
                        self.target(*bound[sub.id])
                    elif sub.id in mod.defs:
                        self.add(mod.name, sub.id)
                elif isinstance(sub, ast.Attribute):
                    self.attribute(bound, sub)
                elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and mod.path.parent == TESTS:
                    if MODULE_STRING.match(sub.value):  # `python -m helpers.env` runs helpers/env/__main__.py
                        for name in (sub.value, f"{sub.value}.__main__"):
                            if name in kit_modules():
                                self.add(name, WHOLE)

    def attribute(self, bound: dict[str, tuple[str, str | None]], node: ast.Attribute) -> None:
        """module.name, where module is bound to a kit module: that definition (or submodule)."""
        chain = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in bound:
            return
        bound_mod, attr = bound[node.id]
        dotted = f"{bound_mod}.{attr}" if attr else bound_mod
        for part in reversed(chain):
            if f"{dotted}.{part}" in kit_modules():
                dotted = f"{dotted}.{part}"
                self.add(dotted, IMPORT_TIME)
            else:
                if dotted in kit_modules():
                    self.add(dotted, part)
                return


@functools.lru_cache(maxsize=None)
def edges(mod_name: str, name: str) -> tuple[tuple[tuple[str, str], ...], frozenset[str]]:
    """What the definition `name` of module `mod_name` reaches directly: (definitions, third-party modules)."""
    out, mod = Edges(), module(mod_name)
    if mod is None:
        return (), frozenset()
    if name == WHOLE:
        out.add(mod_name, IMPORT_TIME)
        for d in mod.defs:
            out.add(mod_name, d)
    elif name == IMPORT_TIME:
        for parent in _parents(mod_name):
            out.add(parent, IMPORT_TIME)
        out.walk(mod, mod.top, top=True)
    elif name in mod.imports:  # a re-export: follow it where it came from
        out.add(mod_name, IMPORT_TIME)
        out.target(*mod.imports[name])
    elif (node := mod.defs.get(name)) is not None:
        out.add(mod_name, IMPORT_TIME)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (name in mod.fixtures or name.startswith("test")):
            for arg in node.args.args + node.args.kwonlyargs:
                out.fixture(mod, arg.arg)
        elif isinstance(node, ast.ClassDef):
            for m in node.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test"):
                    for arg in m.args.args[1:] + m.args.kwonlyargs:
                        out.fixture(mod, arg.arg)
        out.walk(mod, [node])
    return tuple(dict.fromkeys(out.next)), frozenset(out.external)


def _starts(mod_name: str, qualname: str) -> list[tuple[str, str]]:
    """A test's definition and the autouse fixtures of its file and of tests/conftest.py."""
    starts = [(owner, name) for owner in ("conftest", mod_name) if (m := module(owner)) for name in m.autouse]
    return starts + [(mod_name, qualname.split(".")[0])]


def reach(mod_name: str, qualname: str) -> dict[str, list[tuple[str, str]]]:
    """{third-party top-level module: the chain of definitions that reaches it} for one test."""
    came: dict[tuple[str, str], tuple[str, str] | None] = {s: None for s in _starts(mod_name, qualname)}
    todo, found = list(came), {}
    while todo:
        node = todo.pop()
        nxt, external = edges(*node)
        for ext in external:
            if ext not in found:
                chain, at = [], node
                while at is not None:
                    chain.append(at)
                    at = came[at]
                found[ext] = chain[::-1]
        for n in nxt:
            if n not in came:
                came[n] = node
                todo.append(n)
    return found


def varying(mod_name: str, qualname: str) -> frozenset[str]:
    """The varying packages the test reaches (empty: the test is pure)."""
    return frozenset(reach(mod_name, qualname)) & varying_imports()


def why(mod_name: str, qualname: str) -> dict[str, str]:
    """{varying package: 'module:definition -> ...'}: how the test reaches each (for a failure message)."""
    return {lib: " -> ".join(f"{m}:{n or '<import>'}" for m, n in chain)
            for lib, chain in reach(mod_name, qualname).items() if lib in varying_imports()}


def test_names(path: Path) -> list[str]:
    """A file's test functions and Test-class methods as qualnames (what pytest collects, less parameters)."""
    out = []
    for node in (module(path.stem) or Module(path.stem, path)).tree.body:  # parsed once, shared with the analysis
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            out.append(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            out += [f"{node.name}.{m.name}" for m in node.body
                    if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name.startswith("test")]
    return out


def clear_caches() -> None:
    """Forget every parsed module and derived edge (after ROOT or TESTS moved, as the structure test does)."""
    for cached in (varying_imports, kit_modules, module, edges):
        cached.cache_clear()


def main() -> None:
    total = [0, 0]
    for path in sorted(TESTS.glob("test_*.py")):
        names = test_names(path)
        found = {n: varying(path.stem, n) for n in names}
        pure = [n for n in names if not found[n]]
        total[0] += len(pure)
        total[1] += len(names)
        libs = sorted(set().union(*found.values())) if names else []
        print(f"{path.name:34s} pure {len(pure):3d} of {len(names):3d}  {' '.join(libs)}")
    print(f"test functions: {total[0]} of {total[1]} pure")


if __name__ == "__main__":
    main()
