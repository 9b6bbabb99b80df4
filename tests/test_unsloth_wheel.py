"""The kit held to the pinned Unsloth release: its wheels (downloaded by make setup, never imported: Unsloth wants a GPU)
are read as source and metadata. Bump constraints-gpu.txt's pin and these tests say what the new release broke."""

from __future__ import annotations

import ast
import dataclasses
import functools
import zipfile
from pathlib import Path

import pytest
from packaging.markers import default_environment

from helpers import config, models
from helpers.models import unsloth_api
from helpers.env import box, gpu_setup, stack


# The machines the GPU path runs on: Linux x86_64 (MI300X, NVIDIA boxes), the kit's Python.
LINUX = {**default_environment(), "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64"}


@pytest.fixture(scope="module")
def wheels() -> dict[str, Path]:
    try:
        found = gpu_setup.pinned_wheels()
    except FileNotFoundError as exc:
        pytest.fail(f"{exc} (make setup downloads them; this test never reaches the network)")
    return {stack.wheel_metadata(w)[0]: w for w in found}


@functools.cache
def _texts(wheel: Path) -> dict[str, str]:
    """unsloth/models/*.py of the wheel, read once."""
    with zipfile.ZipFile(wheel) as zf:
        return {n: zf.read(n).decode("utf-8") for n in zf.namelist()
                if n.startswith("unsloth/models/") and n.endswith(".py")}


@functools.cache
def _source(wheel: Path, path: str) -> ast.Module:
    return ast.parse(_texts(wheel)[path])


def _method(tree: ast.Module, cls: str, name: str) -> ast.FunctionDef | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == name), None)
    return None


def _wrapped(fn: ast.FunctionDef) -> tuple[str, str] | None:
    """(class, method) of a `@functools.wraps(Class.method)` decorator: the signature the wrapper forwards to."""
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Call) and ast.unparse(dec.func) in ("functools.wraps", "wraps") and dec.args:
            target = ast.unparse(dec.args[0]).split(".")
            if len(target) == 2:
                return target[0], target[1]
    return None


def _resolve(wheel: Path, cls: str, name: str) -> ast.FunctionDef:
    """unsloth.FastLanguageModel.<name> as Unsloth defines it, following functools.wraps to the real signature."""
    for path, text in _texts(wheel).items():
        if f"class {cls}" not in text:
            continue
        fn = _method(_source(wheel, path), cls, name)
        if fn is None:
            continue
        named = [a.arg for a in fn.args.args + fn.args.kwonlyargs]
        target = _wrapped(fn)
        if target and named == ["model"]:  # def f(model, *args, **kwargs) forwarding to the wrapped method
            return _resolve(wheel, *target)
        return fn
    pytest.fail(f"{wheel.name}: no {cls}.{name} under unsloth/models/: Unsloth moved its API; read its release notes")


def _unknown_keywords(fn: ast.FunctionDef, passed: dict) -> list[str]:
    """Keywords the kit passes that the function neither names nor reads from its **kwargs."""
    named = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    literals = {n.value for n in ast.walk(fn) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    return [k for k in passed if k not in named and not (fn.args.kwarg and k in literals)]


def _settings(**patch) -> dict:
    return {"max_seq_len": 2048, "load_in_4bit": False, "trust_remote_code": False, "gradient_checkpointing": True,
            **patch}


def test_from_pretrained_takes_every_keyword_the_kit_passes(wheels):
    fn = _resolve(wheels["unsloth"], "FastLanguageModel", "from_pretrained")
    for settings in (_settings(), _settings(gradient_checkpointing=False, load_in_4bit=True)):
        passed = unsloth_api.unsloth_load_kwargs("Qwen/Qwen2.5-72B-Instruct", settings, "bfloat16")
        assert _unknown_keywords(fn, passed) == [], f"from_pretrained{ast.unparse(fn.args)[:200]}"
        assert passed["use_exact_model_name"] is True  # no silent switch to unsloth/<name>, no second download


@pytest.mark.parametrize("method", models.METHODS)
def test_get_peft_model_takes_every_keyword_the_kit_passes(wheels, method):
    fn = _resolve(wheels["unsloth"], "FastLanguageModel", "get_peft_model")
    spec = dataclasses.replace(config.load_profile("smoke").models["model1_lora"], method=method, r=64, alpha=128.0,
                               dropout=0.05)
    lora = models.lora_config_kwargs(spec, ["q_proj", "v_proj"])
    passed = unsloth_api.unsloth_peft_kwargs(lora, gradient_checkpointing=False, seed=3407)
    assert _unknown_keywords(fn, passed) == []
    assert passed["use_dora"] is (method == "dora") and passed["use_rslora"] is (method == "rslora")
    assert passed["use_gradient_checkpointing"] is False  # the profile's false is honoured, not "unsloth"


def test_get_peft_model_forwards_its_kwargs_into_the_lora_config(wheels):
    """use_dora travels through **kwargs: it reaches PEFT only if Unsloth passes them into the LoraConfig it builds."""
    fn = _resolve(wheels["unsloth"], "FastLanguageModel", "get_peft_model")
    kwarg = fn.args.kwarg.arg
    forwarding = [n for n in ast.walk(fn) if isinstance(n, ast.Call)
                  and any(k.arg is None and ast.unparse(k.value) == kwarg for k in n.keywords)]
    built = [ast.unparse(c.func) for c in ast.walk(fn) if isinstance(c, ast.Call)]
    assert forwarding and "LoraConfig" in built, "Unsloth stopped building LoraConfig from its **kwargs"
    assert set(unsloth_api.UNSLOTH_VIA_KWARGS) == {"use_dora"}  # the only keyword the kit sends through **kwargs


def test_unknown_keyword_is_caught(wheels):
    """The check can fail: a keyword Unsloth neither names nor reads is reported."""
    fn = _resolve(wheels["unsloth"], "FastLanguageModel", "get_peft_model")
    assert _unknown_keywords(fn, {"r": 8, "use_qdora_typo": True}) == ["use_qdora_typo"]


def test_pins_are_the_wheels_read(wheels):
    pins = stack.read_pins(gpu_setup.GPU_PINS)
    for name, wheel in wheels.items():
        assert stack.wheel_metadata(wheel)[1] == pins[name], wheel.name


def test_the_gpu_extra_names_the_same_pins():
    import re  # not tomllib: the kit supports Python 3.10
    line = re.search(r"^gpu = \[(.*)\]$", (gpu_setup.ROOT / "pyproject.toml").read_text(), re.M).group(1)
    extra = re.findall(r'"([^"]+)"', line)
    assert {box.canon(r.split("==")[0]): r.split("==")[1] for r in extra} == gpu_setup.unsloth_pins()


def _requirements(wheels) -> list:
    out = []
    for wheel in wheels.values():
        out += stack.applicable(stack.wheel_metadata(wheel)[2], LINUX, source=wheel.name)
    return stack.merged(out)


def test_every_requirement_is_pinned_beside_the_kit_or_owned_by_the_box(wheels):
    pins = gpu_setup.pins()
    problems = []
    for req in _requirements(wheels):
        name = box.canon(req.name)
        if name in stack.UNSLOTH or name in box.GUARDED:
            continue  # the wheels themselves; the box's own torch stack (reported by make setup-gpu, never installed)
        if name not in pins:
            problems.append(f"{name}{req.specifier}: not pinned in constraints.txt or constraints-gpu.txt")
        elif not stack.satisfies(req, pins[name]):
            problems.append(f"{name}{req.specifier}: pinned {pins[name]}")
    assert problems == []


def test_the_box_owns_exactly_what_unsloth_declares_of_the_torch_stack(wheels):
    declared = {box.canon(r.name) for r in _requirements(wheels)}
    assert {"torch", "triton", "bitsandbytes", "xformers", "torchao", "torchvision"} <= declared
    assert declared & set(box.GUARDED) == {"torch", "triton", "bitsandbytes", "xformers", "torchao", "torchvision"}


def test_the_challenge_container_pins_cannot_host_unsloth(wheels):
    """docs/gpu.md: transformers 4.51.3 and trl 0.19.0 (the organisers' container) are outside Unsloth's range."""
    container = {**stack.read_pins(gpu_setup.KIT_PINS), **stack.read_pins(gpu_setup.ROOT / "constraints-container.txt")}
    missing = stack.unmet(_requirements(wheels), container)
    assert any(m.startswith("transformers 4.51.3 ") for m in missing), missing
    assert any(m.startswith("trl 0.19.0 ") for m in missing), missing
    p = stack.plan(_requirements(wheels), container, gpu_setup.pins())
    assert p.replaces["transformers"] == "4.51.3" and p.install["transformers"] == "5.17.0"


def test_the_kit_main_pins_need_the_gpu_stack(wheels):
    """constraints.txt alone (transformers 5.23, trl 1.16, datasets 5.x) is newer than Unsloth allows: hence
    constraints-gpu.txt, and make test-gpu-stack runs the unit tier on it."""
    missing = stack.unmet(_requirements(wheels), stack.read_pins(gpu_setup.KIT_PINS))
    assert {m.split()[0] for m in missing} >= {"transformers", "trl", "datasets"}
    assert stack.unmet([r for r in _requirements(wheels) if box.canon(r.name) not in box.GUARDED],
                       gpu_setup.pins()) == []


# ---------------------------------------------------------------- what importing Unsloth does (docs/gpu.md)
@functools.cache
def _member(wheel: Path, path: str) -> str:
    """One file of a wheel, as text."""
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(path).decode("utf-8")


def _env_reads(text: str) -> set[str]:
    """The variables the source reads with os.getenv(...) / os.environ.get(...) (literal names; not in strings)."""
    return {node.args[0].value for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("os.getenv", "os.environ.get") and node.args
            and isinstance(node.args[0], ast.Constant)}


def test_the_libraries_the_kit_imports_after_unsloth_are_the_ones_it_patches(wheels):
    """import_unsloth (and tests/test_rl.py's stand-in) check the very modules Unsloth warns about when they came
    first."""
    tree = ast.parse(_member(wheels["unsloth"], "unsloth/_gpu_init.py"))
    [critical] = [ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                  and [ast.unparse(t) for t in n.targets] == ["critical_modules"]]
    assert set(critical) == set(unsloth_api.PATCHED_ON_IMPORT)


def test_unsloth_zoo_reads_the_compile_location_the_kit_sets(wheels):
    """unsloth_zoo writes its generated code where UNSLOTH_COMPILE_LOCATION says, else into unsloth_compiled_cache/
    under the working directory: the kit sets the variable (unsloth_api.unsloth_environ) and ignores the folder."""
    text = _member(wheels["unsloth-zoo"], "unsloth_zoo/compiler.py")
    reads = _env_reads(text)
    assert unsloth_api.COMPILE_LOCATION_VAR in reads, sorted(reads)
    defaults = {n.value.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Assign)
                and [ast.unparse(t) for t in n.targets] == [unsloth_api.COMPILE_LOCATION_VAR]
                and isinstance(n.value, ast.Constant)}
    assert defaults == {"unsloth_compiled_cache"}  # relative: the working directory's
    assert set(unsloth_api.unsloth_environ()) == {unsloth_api.COMPILE_LOCATION_VAR}
    assert "unsloth_compiled_cache/" in (gpu_setup.ROOT / ".gitignore").read_text().splitlines()


def _assigned_in(tree: ast.AST, name: str, under: str | None = None) -> list[str]:
    """The string constants assigned to `name` (implicit concatenation is one constant), only in the body of an `if`
    whose test reads `under` (not its elif/else) when given."""
    scopes = ([b for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) == under for b in n.body]
              if under else [tree])
    return [n.value.value for scope in scopes for n in ast.walk(scope) if isinstance(n, ast.Assign)
            and [ast.unparse(t) for t in n.targets] == [name] and isinstance(n.value, ast.Constant)]


def _installed_source(module: str) -> str:
    """An installed module's source, found without importing it."""
    import importlib.util
    package, _, rest = module.partition(".")
    root = Path(importlib.util.find_spec(package).origin).parent  # finding a top-level package imports nothing
    return (root / (rest.replace(".", "/") + ".py")).read_text(encoding="utf-8")


def test_unsloths_grpo_holds_the_kl_term_to_the_base_model_not_the_starting_adapter(wheels):
    """docs/rl.md: on trl >= 1.4 Unsloth deletes GRPOTrainer's block that copies a PEFT model's adapter as "ref", so
    trl's reference pass runs with the adapters disabled (the base model). Checked on the installed trl's source."""
    import re
    from helpers.agents.stages import reasoner_rl
    tree = ast.parse(_texts(wheels["unsloth"])["unsloth/models/rl.py"])
    [pattern] = _assigned_in(tree, "peft_pattern", under="trl_version >= Version('1.4.0')")
    trainer = _installed_source("trl.trainer.grpo_trainer")
    assert 'model.add_adapter("ref"' in trainer  # this trl copies the starting adapter on transformers + PEFT
    patched = re.sub(pattern, "\n", trainer, flags=re.DOTALL)
    assert 'model.add_adapter("ref"' not in patched, "Unsloth's pattern no longer removes trl's copy"
    # the reference pass then falls back to the model with its adapters off
    assert 'use_adapter(model, adapter_name="ref" if "ref" in model.peft_config else None)' in patched
    assert reasoner_rl.kl_reference(object(), 0.04, "unsloth").startswith(reasoner_rl.KL_BASE_MODEL)


def test_unsloths_grpo_config_makes_checkpointing_reentrant_and_the_report_says_so(wheels):
    """docs/rl.md: the kit asks GRPOConfig for use_reentrant=False; Unsloth's config sets it True whenever
    checkpointing is on. The wheel's own code is run on a stand-in config, and the report reads the result."""
    from types import SimpleNamespace

    from helpers.agents.stages import reasoner_rl
    tree = ast.parse(_texts(wheels["unsloth"])["unsloth/models/rl.py"])
    [post] = _assigned_in(tree, "RLConfig_post")
    scope: dict = {}
    exec("def post(self):\n" + post, scope)  # the lines Unsloth appends to its GRPOConfig.__init__
    args = SimpleNamespace(gradient_checkpointing=True, gradient_checkpointing_kwargs={"use_reentrant": False})
    scope["post"](args)
    assert reasoner_rl.checkpointing_applied(args) == {"enabled": True, "use_reentrant": True}
    off = SimpleNamespace(gradient_checkpointing=False, gradient_checkpointing_kwargs={"use_reentrant": False})
    scope["post"](off)
    assert off.gradient_checkpointing_kwargs == {"use_reentrant": False}


def _calls_under(tree: ast.AST, test: str) -> set[str]:
    """The calls (unparsed) in the body of every `if <test>:` of the module."""
    return {ast.unparse(c) for n in ast.walk(tree) if isinstance(n, ast.If) and ast.unparse(n.test) == test
            for b in n.body for c in ast.walk(b) if isinstance(c, ast.Call)}


def test_unsloth_zoo_removes_expandable_segments_on_rocm_so_the_kit_does_not_ask_for_it(wheels):
    """helpers.env: on ROCm with Unsloth the env check neither recommends PYTORCH_HIP_ALLOC_CONF=expandable_segments
    nor warns without it, because unsloth_zoo's import deletes it (rules.UNSLOTH_ROCM_ALLOCATOR says so)."""
    from helpers.env import rules
    tree = ast.parse(_member(wheels["unsloth-zoo"], "unsloth_zoo/__init__.py"))
    on_rocm = _calls_under(tree, "IS_TORCH_ROCM_BUILD")
    assert {"delete_key('PYTORCH_HIP_ALLOC_CONF')", "delete_key('PYTORCH_CUDA_ALLOC_CONF')",
            "remove_expandable_segments('PYTORCH_ALLOC_CONF')"} <= on_rocm, sorted(on_rocm)
    assert "remove_expandable_segments('PYTORCH_ALLOC_CONF')" in _calls_under(tree, "IS_HIP_RUNTIME")
    version = stack.wheel_metadata(wheels["unsloth-zoo"])[1]
    assert rules.UNSLOTH_ROCM_ALLOCATOR.startswith(f"unsloth_zoo {version},")


def _file(wheel: Path, path: str) -> str:
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(path).decode("utf-8")


def test_unsloth_cuts_input_past_its_load_length_which_the_kit_refuses_first(wheels):
    """The fast forward cuts input past `self.max_seq_length` with only a warning, and the loader sets that attribute
    on the model and every module: unsloth_api.refuse_overlength reads the same attribute and refuses first."""
    import inspect
    llama = _texts(wheels["unsloth"])["unsloth/models/llama.py"]
    assert "input_ids = input_ids[:, : self.max_seq_length]" in llama and "We shall truncate it ourselves" in llama
    assert "model.max_seq_length = max_seq_length" in llama and "module.max_seq_length = max_seq_length" in llama
    assert 'getattr(model, "max_seq_length", None)' in inspect.getsource(unsloth_api.refuse_overlength)


def test_unsloths_fused_lora_kernels_hand_a_dora_layer_back_to_peft(wheels):
    """Every fused LoRA path of the pinned release skips a layer with an active DoRA adapter, so DoRA's forward
    (magnitudes included) is PEFT's own even through Unsloth; the kit's inference goes through PEFT in any case
    (model.unsloth_inference: false)."""
    fast = _file(wheels["unsloth"], "unsloth/kernels/fast_lora.py")
    assert fast.count("_has_active_dora_adapter(proj)") >= 4
    assert config.load_profile("mi300x").model.unsloth_inference is False

