"""Known environment problems as data: each Rule is a predicate over the facts record plus its fix.

The facts record is what helpers.env.collect_facts returns (plain JSON). Every rule here comes from
a failure the seeds hit (MI300X/ROCm 6.2 and MI50/gfx906) or from a trap they describe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from helpers.io import version_tuple  # noqa: F401  (rules and their tests use it from here)
from helpers.env.pinsets import MAIN

MAIN_TORCH_MIN = MAIN.torch_min  # the main pins' transformers 5.x needs this torch (helpers/env/pinsets.py)

if TYPE_CHECKING:  # importing helpers.config needs yaml; this package imports the standard library only
    from helpers.config import Profile

STATUS_ORDER = ("pass", "info", "warn", "fail")

# Data-centre AMD GPUs the ROCm runtime supports natively (MI200, MI300X/A, MI325X, MI355X):
# an HSA_OVERRIDE_GFX_VERSION there only makes the runtime load kernels built for another ISA.
NATIVE_DC_GFX = ("gfx90a", "gfx940", "gfx941", "gfx942", "gfx950")
# AMD archs with bf16 matrix units (MI100 onwards). gfx906 (MI50) has none: the seeds ran it in fp32.
BF16_ROCM_GFX = ("gfx908",) + NATIVE_DC_GFX
# triton major.minor each torch release was built against (torch's own Requires-Dist wins when present).
TORCH_TRITON = {(2, 4): "3.0", (2, 5): "3.1", (2, 6): "3.2", (2, 7): "3.3", (2, 8): "3.4", (2, 9): "3.5",
                (2, 12): "3.7"}
# Without these nothing trains; on Python 3.13 a missing one usually means no wheel for it yet.
CORE_PACKAGES = ("torch", "transformers", "peft", "datasets", "accelerate")
ALLOC_VARS = ("PYTORCH_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF")
DEFAULT_SETTINGS: dict[str, Any] = {
    "min_free_disk_gb": 20.0, "hf_cache_warn_gb": 200.0, "dtype": "auto", "load_in_4bit": "auto",
    "use_unsloth": "auto", "optim": "auto",
    "model_gib": None,  # optional: estimated training peak in GiB, e.g. helpers.env.memory.estimate(...).total_gib
}


# ---------------------------------------------------------------- fact accessors (tolerant of gaps)
def get(facts: dict, dotted: str, default: Any = None) -> Any:
    """facts['a']['b'] for 'a.b'; the default when any level is missing or None."""
    node: Any = facts
    for key in dotted.split("."):
        if not isinstance(node, dict) or node.get(key) is None:
            return default
        node = node[key]
    return node


def has_gpu(facts: dict) -> bool:
    """ROCm or CUDA device visible to torch."""
    return facts.get("backend") in ("rocm", "cuda")


def hw_gfx(facts: dict) -> str | None:
    """The GPU's real gfx target: KFD's sysfs view first (immune to HSA_OVERRIDE_GFX_VERSION), else torch's."""
    native = get(facts, "gpu.native_gfx") or []
    return native[0] if native else get(facts, "gpu.gfx")


def bnb_usable(facts: dict) -> bool:
    """bitsandbytes' native library loaded and ran an 8-bit step on this GPU."""
    return get(facts, "bitsandbytes.usable") is True


def unsloth_importable(facts: dict) -> bool:
    """`import unsloth` succeeded in a subprocess on this GPU box."""
    return get(facts, "unsloth.importable") is True


def unsloth_keeps_4bit(facts: dict) -> bool:
    """Unsloth keeps load_in_4bit on ROCm only with bitsandbytes 0.48.2 or newer (its device_type.py gate:
    version > 0.48.2.dev0); on CUDA a working bitsandbytes is enough."""
    if facts.get("backend") != "rocm":
        return True
    from packaging.version import InvalidVersion, Version
    try:
        return Version(str(get(facts, "packages.bitsandbytes"))) > Version("0.48.2.dev0")
    except InvalidVersion:  # not installed (None) or unreadable
        return False


def unsloth_choice(facts: dict) -> tuple[bool, str]:
    """(use Unsloth?, why): a GPU, an installed unsloth with unsloth_zoo, its declared requirements met, and
    `import unsloth` working; else transformers + PEFT, with the first reason that rules Unsloth out."""
    version, unmet = get(facts, "unsloth.version") or get(facts, "packages.unsloth"), get(facts, "unsloth.unmet") or []
    if not has_gpu(facts):
        return False, "no GPU: transformers + PEFT (Unsloth is the kit's GPU path)"
    if not version:
        return False, "Unsloth is not installed (make setup-gpu installs the kit's pin): transformers + PEFT"
    if get(facts, "unsloth.zoo") is None and get(facts, "packages.unsloth_zoo") is None:
        return False, f"unsloth {version} without unsloth_zoo cannot import (make setup-gpu): transformers + PEFT"
    if unmet:
        return False, (f"unsloth {version} needs what this Python lacks: {'; '.join(unmet[:3])}: "
                       "transformers + PEFT")
    if not unsloth_importable(facts):
        return False, f"`import unsloth` failed ({_detail(facts, 'unsloth')}): transformers + PEFT"
    if not bnb_loads(facts):
        return False, f"unsloth {version} can load no model here: {bnb_missing(facts)}; transformers + PEFT"
    return True, f"GPU present and unsloth {version}{_whose(version)} imports: Unsloth's loader and kernels"


def _whose(version: str) -> str:
    """' (this box's own, not the kit's pin X)' where the Unsloth found is not constraints-gpu.txt's (the starter kit's
    Dockerfile box brings its own): the kit uses it, and says so."""
    from helpers.env.pinsets import ROOT, read_pins
    try:
        pin = read_pins(ROOT / "constraints-gpu.txt").get("unsloth")
    except (OSError, ValueError):
        return ""
    return "" if pin in (None, version) else f" (this box's own, not the kit's pin {pin})"


# Seen on an NVIDIA H200 (make gpu-check, docs/results.md): `import unsloth` works without bitsandbytes, but every load
# fails in unsloth_zoo's patch_model_and_tokenizer, which imports bitsandbytes.nn.Linear4bit for a 16-bit model too
# (in a bare try: a build that fails to import fails the same way).
UNSLOTH_BNB = "Unsloth's loader imports bitsandbytes.nn on every load, a 16-bit LoRA's too"


def bnb_loads(facts: dict) -> bool:
    """bitsandbytes is installed and (where probed: a GPU box) `from bitsandbytes.nn import Linear4bit` works."""
    return bool(get(facts, "packages.bitsandbytes")) and get(facts, "bitsandbytes.importable") is not False


def bnb_missing(facts: dict) -> str:
    """Why Unsloth's loader cannot import bitsandbytes here (bnb_loads is False)."""
    if not get(facts, "packages.bitsandbytes"):
        return f"{UNSLOTH_BNB}, and bitsandbytes is not installed"
    return (f"{UNSLOTH_BNB}, and bitsandbytes {get(facts, 'packages.bitsandbytes')} fails to import "
            f"({_detail(facts, 'bitsandbytes')})")


BNB_FIX = ("Install this box's bitsandbytes build (the kit never installs it: it belongs to the box's torch stack), "
           "in Unsloth's range (>=0.45.5, not 0.46.0 or 0.48.0) and matching the box's torch: on CUDA "
           "`pip install --no-deps 'bitsandbytes>=0.45.5,!=0.46.0,!=0.48.0'`; on ROCm the build for its ROCm version "
           "(libbitsandbytes_rocmXY.so), 0.48.2 or newer (older builds load, but Unsloth then ignores 4-bit). Or keep "
           "transformers + PEFT.")


# A profile switch's values that mean off (model.use_unsloth: false, "no", ...): helpers.models.settings.falsy reads
# the same words.
OFF_WORDS = ("false", "no", "off", "0", "none")


def unsloth_backend(facts: dict, use_unsloth: Any = "auto") -> bool:
    """Whether the kit trains on Unsloth here: the profile's model.use_unsloth is not off and unsloth_choice says
    yes (helpers.models.settings.choose_backend's rule, on the facts)."""
    off = use_unsloth is False or str(use_unsloth).strip().lower() in OFF_WORDS
    return not off and unsloth_choice(facts)[0]


# What unsloth_zoo 2026.10.9 does to the allocator variables when it is imported on a ROCm torch (its __init__.py).
UNSLOTH_ROCM_ALLOCATOR = ("unsloth_zoo 2026.10.9, imported on a ROCm torch, deletes PYTORCH_HIP_ALLOC_CONF and "
                          "PYTORCH_CUDA_ALLOC_CONF and strips expandable_segments from PYTORCH_ALLOC_CONF "
                          "(\"expandable_segments is not supported on ROCm/HIP\"); other allocator options survive "
                          "in PYTORCH_ALLOC_CONF")


def unsloth_drops_expandable_segments(facts: dict, use_unsloth: Any = "auto") -> bool:
    """The backend is Unsloth on ROCm, where Unsloth removes expandable_segments whatever is set
    (UNSLOTH_ROCM_ALLOCATOR): the kit neither recommends it nor warns without it there."""
    return facts.get("backend") == "rocm" and unsloth_backend(facts, use_unsloth)


def bf16_capable(facts: dict) -> bool:
    """Whether the GPU has native bf16 (MI100+/gfx90a/gfx94x, CUDA sm_80+)."""
    if facts.get("backend") == "rocm":
        gfx = hw_gfx(facts)
        return gfx in BF16_ROCM_GFX or (gfx != "gfx906" and get(facts, "gpu.bf16") is True)
    if facts.get("backend") == "cuda":
        cc = get(facts, "gpu.compute_capability")
        return cc[0] >= 8 if cc else get(facts, "gpu.bf16") is True
    return False


def expected_triton(facts: dict) -> str | None:
    """The triton version torch was built against (its Requires-Dist, else the release table)."""
    pinned = get(facts, "triton.torch_requires")
    if pinned:
        return pinned
    if not (get(facts, "torch.hip") or get(facts, "torch.cuda")):
        return None  # CPU builds never load triton
    return TORCH_TRITON.get(version_tuple(get(facts, "torch.version"))[:2])


def actual_triton(facts: dict) -> str | None:
    """The version of the `triton` module Python will import (several dists can provide it)."""
    pkgs = facts.get("packages") or {}
    return get(facts, "triton.module_version") or pkgs.get("triton") or pkgs.get("pytorch-triton-rocm") \
        or pkgs.get("pytorch-triton")


def alloc_conf(facts: dict) -> tuple[str, str | None]:
    """(variable name the backend reads, its value): the first allocator variable that is set."""
    env = facts.get("env") or {}
    for var in ALLOC_VARS:
        if env.get(var):
            return var, env[var]
    return ("PYTORCH_HIP_ALLOC_CONF" if facts.get("backend") == "rocm" else "PYTORCH_CUDA_ALLOC_CONF"), None


def memory_gib(facts: dict) -> tuple[str, float | None]:
    """('VRAM', GiB of device 0) on a GPU, else ('RAM', total GiB)."""
    if has_gpu(facts):
        return "VRAM", get(facts, "gpu.vram_total_gib")
    return "RAM", get(facts, "system.ram_total_gib")


def _env(facts: dict, var: str) -> str | None:
    return (facts.get("env") or {}).get(var) or None


def _shown(value: str | None) -> str:
    return "unset" if value is None else repr(value)


def _detail(facts: dict, section: str) -> str:
    return str(get(facts, f"{section}.detail", "unknown")).rstrip(".")


def _n(value: Any, digits: int = 1) -> str:
    return "?" if value is None else f"{value:,.{digits}f}"


def _low_disks(facts: dict, settings: dict) -> list[tuple[str, dict]]:
    """Disk locations under the threshold, each physical device named once."""
    out, seen = [], set()
    for label in ("runs", "hf_cache"):
        disk = get(facts, f"disk.{label}") or {}
        free, dev = disk.get("free_gib"), disk.get("device")
        if free is None or (dev is not None and dev in seen):
            continue
        seen.add(dev)
        if free < float(settings["min_free_disk_gb"]):
            out.append((label, disk))
    return out


def _wants_8bit(settings: dict) -> bool:
    return "8bit" in str(settings.get("optim") or "")


# ---------------------------------------------------------------- settings
def settings_from_cfg(cfg: Profile, model_gib: float | None = None) -> dict:
    """Thresholds and requested values for the rules, from a resolved profile (helpers.config.load_profile)."""
    return {**DEFAULT_SETTINGS,
            "min_free_disk_gb": cfg.env.min_free_disk_gb, "hf_cache_warn_gb": cfg.env.hf_cache_warn_gb,
            "dtype": cfg.model.dtype, "load_in_4bit": cfg.model.load_in_4bit, "use_unsloth": cfg.model.use_unsloth,
            "optim": cfg.train.optim, "model_gib": model_gib}


def normalize_settings(settings: Profile | dict | None) -> dict:
    """Accept a profile, a settings dict (keys of DEFAULT_SETTINGS), or None."""
    if settings is not None and not isinstance(settings, dict):  # a Profile: duck-typed, helpers.config needs yaml
        return settings_from_cfg(settings)
    return {**DEFAULT_SETTINGS, **(settings or {})}


# ---------------------------------------------------------------- the table
@dataclass(frozen=True)
class Rule:
    """One known problem: fires when `applies(facts, settings)`; `message` explains it with the facts."""

    id: str
    severity: str
    title: str
    applies: Callable[[dict, dict], bool]
    message: Callable[[dict, dict], str]
    fix: str


RULES: list[Rule] = [
    Rule("torch_missing", "fail", "torch is not importable",
         lambda f, s: not get(f, "torch.version"),
         lambda f, s: f"torch could not be imported ({get(f, 'errors.torch', 'not installed')}): nothing can train.",
         "Run `make setup` (CPU wheel), or on a GPU box use the container's ROCm/CUDA build of torch."),
    Rule("probe_errors", "warn", "some environment probes failed",
         lambda f, s: bool(f.get("errors")),
         lambda f, s: "These probes failed, so checks that need their facts may pass on missing data: "
         + "; ".join(f"{k}: {v}" for k, v in sorted((f.get("errors") or {}).items())),
         "Read each error (usually a package that fails to import) and fix it, then rerun the check."),
    Rule("python_version", "warn", "Python 3.13+ on ROCm or with core packages missing",
         lambda f, s: version_tuple(get(f, "python.version"))[:2] >= (3, 13)
         and (f.get("backend") == "rocm" or not all(get(f, f"packages.{p}") for p in CORE_PACKAGES)),
         lambda f, s: f"Python {get(f, 'python.version')}: the MI50 team found most ML libraries would not "
         "install or load on 3.13 (C-extension wheels for ROCm torch, bitsandbytes, flash-attn lag behind).",
         "Create the venv with Python 3.10-3.12 (e.g. `make setup PYTHON=python3.12`); `python -m helpers.env box "
         "plan` says which pins a Python and torch get."),
    Rule("transformers_torch_mismatch", "fail", "this venv's transformers cannot use this torch",
         lambda f, s: version_tuple(get(f, "packages.transformers"))[:1] >= (5,)
         and bool(get(f, "torch.version")) and version_tuple(get(f, "torch.version"))[:2] < MAIN_TORCH_MIN,
         lambda f, s: f"transformers {get(f, 'packages.transformers')} with torch {get(f, 'torch.version')}: "
         f"transformers 5.x needs torch >= {MAIN_TORCH_MIN[0]}.{MAIN_TORCH_MIN[1]} and disables PyTorch below it "
         "(is_torch_available() is False), so every model load fails. The original team's MI300X ran 2.5.1+rocm6.2.",
         "`python -m helpers.env box plan` picks the challenge container's pins (transformers 4.51.3) for this "
         "torch: remove the venv and run `make setup`, which now chooses them (never replace the box's torch)."),
    Rule("triton_torch_mismatch", "fail", "triton does not match the one torch was built with",
         lambda f, s: bool(expected_triton(f) and actual_triton(f)
                           and version_tuple(expected_triton(f))[:2] != version_tuple(actual_triton(f))[:2]),
         lambda f, s: f"torch {get(f, 'torch.version')} was built against triton {expected_triton(f)} but the "
         f"`triton` module is {actual_triton(f)}. The seeds hit this with triton 3.5.0 on torch 2.5.1+rocm6.2: "
         "`ImportError: cannot import name 'triton_key' from 'triton.compiler.compiler'` as soon as Unsloth "
         "or torch.compile loads inductor.",
         "`pip uninstall -y triton`, then reinstall the triton torch pins (ROCm: `pip install "
         "pytorch-triton-rocm==<that version>` from torch's ROCm index; CUDA: `pip install triton==<that "
         "version>`). The original team's working pair: torch 2.5.1+rocm6.2 with triton 3.1.0."),
    Rule("torch_int1_torchao", "fail", "torchao/torchtune installed with a torch that lacks torch.int1",
         lambda f, s: get(f, "torch.int1") is False
         and bool(get(f, "packages.torchao") or get(f, "packages.torchtune")),
         lambda f, s: f"torchao {get(f, 'packages.torchao', '-')} / torchtune {get(f, 'packages.torchtune', '-')} "
         f"with torch {get(f, 'torch.version')}, which has no torch.int1: importing them fails with "
         "`AttributeError: module 'torch' has no attribute 'int1'` (the MI50 team's TorchTune attempt, "
         "every torchao version they tried).",
         "`pip uninstall -y torchtune torchao`: the kit trains with transformers + PEFT and needs neither."),
    Rule("no_accelerator", "info", "no GPU: CPU only",
         lambda f, s: f.get("backend") == "cpu" and bool(get(f, "torch.version")),
         lambda f, s: f"CPU only ({get(f, 'system.cpu_usable') or get(f, 'system.cpu_logical') or '?'} cores, "
         f"{_n(get(f, 'system.ram_total_gib'))} GiB RAM). The smoke profile (tiny local model) runs end to "
         "end here in minutes; laptop (0.5B) trains slowly; mi300x (72B, ~135 GiB of weights) cannot run.",
         "Use PROFILE = \"smoke\" here (or \"laptop\" with patience); run mi300x on the GPU machine."),
    Rule("gpu_build_no_device", "warn", "GPU build of torch but no GPU visible",
         lambda f, s: f.get("backend") == "cpu" and bool(get(f, "torch.hip") or get(f, "torch.cuda")),
         lambda f, s: f"torch {get(f, 'torch.version')} is a {'ROCm' if get(f, 'torch.hip') else 'CUDA'} build "
         f"but sees no GPU (HIP_VISIBLE_DEVICES {_shown(get(f, 'env.HIP_VISIBLE_DEVICES'))}, "
         f"CUDA_VISIBLE_DEVICES {_shown(get(f, 'env.CUDA_VISIBLE_DEVICES'))}); everything would run on the CPU.",
         "Pass the devices into the container (ROCm: --device=/dev/kfd --device=/dev/dri and the video/render "
         "groups; CUDA: --gpus all), make sure *_VISIBLE_DEVICES is not empty, and check `rocm-smi`/`nvidia-smi`."),
    Rule("bnb_unusable_rocm", "warn", "bitsandbytes unusable on ROCm: no 8-bit optimizer, no 4-bit",
         lambda f, s: f.get("backend") == "rocm" and not bnb_usable(f),
         lambda f, s: f"bitsandbytes {get(f, 'packages.bitsandbytes', '')} is not usable on ROCm "
         f"{get(f, 'torch.hip')}: {_detail(f, 'bitsandbytes')}. The seeds got "
         "`libbitsandbytes_rocm62.so not found` (no binary for ROCm 6.2; building from source failed), so "
         "adamw_8bit and 4-bit loading were unavailable.",
         "Train with optim adamw_torch and bf16 weights (the recommendation does); keep model.load_in_4bit false. "
         "On an MI300X a 72B LoRA fits in 16-bit (135-159 GB of 192)."),
    Rule("bnb_requested_unusable", "fail", "the profile needs bitsandbytes, which is unusable here",
         lambda f, s: (_wants_8bit(s) or s.get("load_in_4bit") is True) and not bnb_usable(f),
         lambda f, s: "The profile asks for "
         + " and ".join(x for x in (f"optim {s.get('optim')}" if _wants_8bit(s) else "",
                                    "load_in_4bit: true" if s.get("load_in_4bit") is True else "") if x)
         + f", but bitsandbytes is not usable here ({_detail(f, 'bitsandbytes')}).",
         "Set train.optim: adamw_torch (or auto) and model.load_in_4bit: false (or auto)."),
    Rule("unsloth_4bit_rocm", "warn", "Unsloth on ROCm silently ignores load_in_4bit with this bitsandbytes",
         lambda f, s: f.get("backend") == "rocm" and s.get("load_in_4bit") is True
         and s.get("use_unsloth") is not False and not unsloth_keeps_4bit(f),
         lambda f, s: "The profile asks for load_in_4bit on ROCm, but Unsloth keeps 4-bit on AMD only with "
         f"bitsandbytes 0.48.2 or newer (here: {get(f, 'packages.bitsandbytes') or 'not installed'}) and otherwise "
         "loads 16-bit weights without an error: the seeds planned ~40-50 GB for Qwen2.5-72B in 4-bit and got 135 GB "
         "(2.7x).",
         "Budget 2 bytes per parameter (72B -> ~135 GiB) and set model.load_in_4bit: false so the plan matches "
         "what loads, or install a bitsandbytes >= 0.48.2 built for this ROCm."),
    Rule("unsloth_zoo_missing", "warn", "unsloth is installed without unsloth_zoo",
         lambda f, s: bool(get(f, "unsloth.version")) and not get(f, "unsloth.zoo") and s.get("use_unsloth") is not False,
         lambda f, s: f"unsloth {get(f, 'unsloth.version')} is installed but unsloth_zoo is not: `import unsloth` "
         "fails before anything trains, so training runs on transformers + PEFT.",
         "make setup-gpu (installs the pinned unsloth and unsloth_zoo together, --no-deps)."),
    Rule("unsloth_version_unpinned", "warn", "unsloth is not the release the kit was checked against",
         lambda f, s: bool(get(f, "unsloth.version")) and bool(get(f, "unsloth.pinned"))
         and get(f, "unsloth.version") != get(f, "unsloth.pinned"),
         lambda f, s: f"unsloth {get(f, 'unsloth.version')} is installed; the kit's keyword arguments were checked "
         f"against {get(f, 'unsloth.pinned')} (constraints-gpu.txt, tests/test_unsloth_wheel.py). Another release "
         "may rename them (a TypeError deep in notebook 03) or pull its own transformers.",
         "make setup-gpu (installs the pin), or bump constraints-gpu.txt and run tests/test_unsloth_wheel.py."),
    Rule("unsloth_requirements_unmet", "warn", "this Python's packages do not meet Unsloth's requirements",
         lambda f, s: bool(get(f, "unsloth.unmet")) and s.get("use_unsloth") is not False,
         lambda f, s: f"unsloth {get(f, 'unsloth.version')} declares requirements this Python misses: "
         f"{'; '.join(get(f, 'unsloth.unmet')[:4])}. Training runs on transformers + PEFT. (The challenge "
         "container's transformers 4.51.3 and trl 0.19.0 cannot host the kit's Unsloth.)",
         "For transformers, trl, datasets and the like: make setup-gpu in the kit's venv moves them to "
         "constraints-gpu.txt's pins there (the box's own stay as they are). For torch or triton (the box's build): "
         "pin the Unsloth release that supports them in constraints-gpu.txt. Or keep transformers + PEFT."),
    Rule("unsloth_needs_bitsandbytes", "warn", "Unsloth imports but cannot load a model: no usable bitsandbytes",
         lambda f, s: has_gpu(f) and unsloth_importable(f) and not bnb_loads(f)
         and s.get("use_unsloth") is not False and s.get("use_unsloth") is not True,
         lambda f, s: f"unsloth {get(f, 'unsloth.version') or get(f, 'packages.unsloth')} imports here, but "
         f"{bnb_missing(f)}: every Unsloth load stops with 'Please install bitsandbytes' (seen on an NVIDIA H200). "
         "Training runs on transformers + PEFT.",
         BNB_FIX),
    Rule("accelerator_stack_changed", "fail", "the box's torch stack changed since make setup recorded it",
         lambda f, s: bool(get(f, "stack.changes")),
         lambda f, s: " ".join(get(f, "stack.changes")),
         "Each line above names its fix; then rerun the env check."),
    Rule("unsloth_requested_unavailable", "fail", "use_unsloth: true but Unsloth cannot load a model here",
         lambda f, s: s.get("use_unsloth") is True and (not unsloth_importable(f) or has_gpu(f) and not bnb_loads(f)),
         lambda f, s: (f"The profile sets use_unsloth: true but Unsloth is not importable here "
                       f"({_detail(f, 'unsloth')})." + ("" if has_gpu(f) else " The kit uses Unsloth only on a GPU.")
                       if not unsloth_importable(f) else
                       f"The profile sets use_unsloth: true, Unsloth imports, but {bnb_missing(f)}: training stops "
                       "at its first load."),
         "Set model.use_unsloth: auto (falls back to transformers + PEFT), or on the GPU box `make setup-gpu` "
         "(the pinned Unsloth, the box's torch stack untouched); without bitsandbytes: " + BNB_FIX),
    Rule("unsloth_import_broken", "warn", "Unsloth is installed but fails to import on this GPU",
         lambda f, s: has_gpu(f) and bool(get(f, "packages.unsloth")) and not unsloth_importable(f)
         and s.get("use_unsloth") is not True,
         lambda f, s: f"unsloth {get(f, 'packages.unsloth')} is installed but `import unsloth` failed: "
         f"{_detail(f, 'unsloth')}. Training falls back to transformers + PEFT (the seeds "
         "credited Unsloth with ~2x speed).",
         "Read the error: a triton/torch mismatch is the usual cause (see triton_torch_mismatch); otherwise "
         "run make setup-gpu (the pinned unsloth and unsloth_zoo, checked against this box's torch stack)."),
    Rule("torch_compile_rocm", "warn", "torch.compile left on under ROCm",
         lambda f, s: f.get("backend") == "rocm" and _env(f, "TORCH_COMPILE") != "0"
         and _env(f, "TORCHDYNAMO_DISABLE") != "1",
         lambda f, s: f"TORCH_COMPILE is {_shown(_env(f, 'TORCH_COMPILE'))} and TORCHDYNAMO_DISABLE is "
         f"{_shown(_env(f, 'TORCHDYNAMO_DISABLE'))}: the original team's compiled run reached into bitsandbytes and died; "
         "with compile off it was stable at 3.5-3.7 s/step (25-30% slower than the 2.5-3.0 s hoped for).",
         "Set TORCH_COMPILE=0 and TORCHDYNAMO_DISABLE=1 before torch is imported "
         "(helpers.env.apply_env does it from the recommendation)."),
    Rule("allocator_expandable_segments", "warn", "GPU allocator without expandable_segments",
         lambda f, s: has_gpu(f) and not unsloth_drops_expandable_segments(f, s.get("use_unsloth"))
         and "expandable_segments:true" not in (alloc_conf(f)[1] or "").lower().replace(" ", ""),
         lambda f, s: f"{alloc_conf(f)[0]} is {_shown(alloc_conf(f)[1])}: without expandable_segments the caching "
         "allocator fragments as batch shapes vary and a run can OOM with GBs nominally free; the MI50 "
         "team needed it just to load models.",
         "Set PYTORCH_HIP_ALLOC_CONF (ROCm) or PYTORCH_CUDA_ALLOC_CONF (CUDA) to expandable_segments:True "
         "before the first GPU allocation (helpers.env.apply_env does). Not on ROCm with Unsloth, which removes it "
         "(allocator_unsloth_rocm)."),
    Rule("allocator_unsloth_rocm", "info", "expandable_segments set, but Unsloth on ROCm removes it",
         lambda f, s: unsloth_drops_expandable_segments(f, s.get("use_unsloth"))
         and any("expandable_segments" in (_env(f, var) or "") for var in ALLOC_VARS),
         lambda f, s: "; ".join(f"{var}={_env(f, var)!r}" for var in ALLOC_VARS
                                if "expandable_segments" in (_env(f, var) or ""))
         + f": the backend is Unsloth on ROCm, and {UNSLOTH_ROCM_ALLOCATOR}. The allocator runs without "
         "expandable_segments whatever is set here, so the kit neither sets it nor warns without it on this backend.",
         "Nothing to do for Unsloth; unset it so the setting on record is the one that applies. Put other "
         "allocator options in PYTORCH_ALLOC_CONF. To train with expandable_segments, set model.use_unsloth: false "
         "(transformers + PEFT keeps it)."),
    Rule("hsa_override_mi300x", "fail", "HSA_OVERRIDE_GFX_VERSION set on an MI300X-class GPU",
         lambda f, s: hw_gfx(f) in NATIVE_DC_GFX and bool(_env(f, "HSA_OVERRIDE_GFX_VERSION")),
         lambda f, s: f"HSA_OVERRIDE_GFX_VERSION={_env(f, 'HSA_OVERRIDE_GFX_VERSION')} on "
         f"{get(f, 'gpu.name', 'this GPU')} ({hw_gfx(f)}), which ROCm supports natively: the override makes "
         "the runtime load kernels built for another ISA (memory access faults, wrong results).",
         "`unset HSA_OVERRIDE_GFX_VERSION` and remove it from the shell profile / container environment."),
    Rule("gfx906_torch", "fail", "MI50/gfx906 with a torch newer than 2.4",
         lambda f, s: hw_gfx(f) == "gfx906" and version_tuple(get(f, "torch.version"))[:2] >= (2, 5),
         lambda f, s: f"MI50/gfx906 with torch {get(f, 'torch.version')}: the MI50 team's 2.5.1+rocm6.2 crashed "
         "on any .cuda() op (`Memory access fault by GPU node-1 on address (nil)`) and 2.9.1+rocm7.1 has no "
         "gfx906 support; only 2.4.1+rocm6.0 worked.",
         "pip install torch==2.4.1 torchvision==0.19.1 torchaudio==2.4.1 "
         "--index-url https://download.pytorch.org/whl/rocm6.0"),
    Rule("gfx906_dtype", "warn", "16-bit training requested on MI50/gfx906",
         lambda f, s: hw_gfx(f) == "gfx906" and str(s.get("dtype")) in ("bfloat16", "bf16", "float16", "fp16"),
         lambda f, s: f"dtype {s.get('dtype')} on MI50/gfx906, which has no bf16 units; the MI50 team only got "
         "stable training in fp32 (fp16 and bf16 disabled).",
         "Set model.dtype: float32 (or auto) and budget 4 bytes per parameter: a 3B model needed ~51-55 GB to "
         "train on a 32 GB MI50, so use <= 1.5B there."),
    Rule("gfx906_hsa_override", "fail", "HSA_OVERRIDE_GFX_VERSION emulates another GPU on MI50/gfx906",
         lambda f, s: hw_gfx(f) == "gfx906" and bool(_env(f, "HSA_OVERRIDE_GFX_VERSION"))
         and _env(f, "HSA_OVERRIDE_GFX_VERSION").strip() != "9.0.6",
         lambda f, s: f"HSA_OVERRIDE_GFX_VERSION={_env(f, 'HSA_OVERRIDE_GFX_VERSION')} on MI50/gfx906: the MI50 "
         "team's 10.3.0 (RDNA2 emulation) gave memory access faults on tensor operations.",
         "export HSA_OVERRIDE_GFX_VERSION=9.0.6 (the native gfx906) or unset it."),
    Rule("gfx906_hsa_unset", "info", "MI50/gfx906 without the original team's HSA_OVERRIDE_GFX_VERSION=9.0.6",
         lambda f, s: hw_gfx(f) == "gfx906" and not _env(f, "HSA_OVERRIDE_GFX_VERSION"),
         lambda f, s: "The MI50 team's working setup pinned HSA_OVERRIDE_GFX_VERSION=9.0.6 (native gfx906) "
         "together with torch 2.4.1+rocm6.0 and fp32.",
         "export HSA_OVERRIDE_GFX_VERSION=9.0.6 before starting Python (helpers.env.apply_env sets it)."),
    Rule("bf16_unsupported", "warn", "bfloat16 requested on a GPU without bf16",
         lambda f, s: has_gpu(f) and hw_gfx(f) != "gfx906" and str(s.get("dtype")) in ("bfloat16", "bf16")
         and not bf16_capable(f),
         lambda f, s: f"dtype {s.get('dtype')} but {get(f, 'gpu.name', 'this GPU')} "
         f"({hw_gfx(f) or 'sm_' + ''.join(map(str, get(f, 'gpu.compute_capability') or []))}) has no native "
         "bf16: it is emulated (slow) or fails.",
         "Set model.dtype: auto (float16 on pre-Ampere CUDA, float32 on older AMD GPUs)."),
    Rule("low_disk", "warn", "low free disk where runs or the HF cache go",
         lambda f, s: bool(_low_disks(f, s)),
         lambda f, s: "; ".join(f"{_n(d.get('free_gib'))} GiB free at {d.get('path')} ({label})"
                                for label, d in _low_disks(f, s))
         + f" (profile minimum {s['min_free_disk_gb']} GiB). The original team's 697 GB disk hit 100% and SSH stopped "
         "working; each 72B chunk checkpoint was ~20 GB.",
         "Free space (prune the HF cache with `huggingface-cli delete-cache`, delete old runs/ checkpoints) or "
         "point KIT_RUNS_DIR / HF_HOME at a bigger disk."),
    Rule("hf_cache_large", "warn", "huge Hugging Face cache",
         lambda f, s: (get(f, "hf_cache.size_gib") or 0) >= float(s["hf_cache_warn_gb"]),
         lambda f, s: f"The HF cache at {', '.join(get(f, 'hf_cache.paths') or [])} holds "
         f"{'at least ' if get(f, 'hf_cache.truncated') else ''}{_n(get(f, 'hf_cache.size_gib'))} GiB "
         f"(warn at {s['hf_cache_warn_gb']} GiB): the original team's 578 GB cache filled a 697 GB disk.",
         "List it with `huggingface-cli scan-cache` and delete models you no longer need "
         "(`huggingface-cli delete-cache`)."),
    Rule("model_too_big", "fail", "the model will not fit in memory",
         lambda f, s: s.get("model_gib") is not None and memory_gib(f)[1] is not None
         and float(s["model_gib"]) > memory_gib(f)[1],
         lambda f, s: f"Estimated {_n(s.get('model_gib'))} GiB to train vs {_n(memory_gib(f)[1])} GiB of "
         f"{memory_gib(f)[0]}: layers would be offloaded to CPU/disk, which Unsloth cannot handle "
         "(`Cannot copy out of meta tensor; no data!`, the original team's Qwen3-235B on a 192 GB MI300X).",
         "Pick a smaller model (the seeds pivoted to Qwen2.5-72B: ~135 GiB in 16-bit) or a bigger GPU; do not "
         "rely on offloading."),
    Rule("model_fit_tight", "warn", "the model leaves under 15% memory headroom",
         lambda f, s: s.get("model_gib") is not None and bool(memory_gib(f)[1])
         and 0.85 * memory_gib(f)[1] < float(s["model_gib"]) <= memory_gib(f)[1],
         lambda f, s: f"Estimated {_n(s.get('model_gib'))} GiB of {_n(memory_gib(f)[1])} GiB "
         f"{memory_gib(f)[0]} ({100 * float(s['model_gib']) / memory_gib(f)[1]:.0f}%): the original team's 235B loaded "
         "at 158-180 GB of 192 and left under 12 GB for activations.",
         "Lower batch_size (raise grad_accum to keep the effective batch), max_seq_len or LoRA rank; keep "
         "gradient checkpointing on."),
    Rule("vram_in_use", "warn", "VRAM already held by another process",
         lambda f, s: has_gpu(f) and get(f, "gpu.vram_free_gib") is not None and bool(get(f, "gpu.vram_total_gib"))
         and get(f, "gpu.vram_free_gib") < 0.8 * get(f, "gpu.vram_total_gib"),
         lambda f, s: f"Only {_n(get(f, 'gpu.vram_free_gib'))} of {_n(get(f, 'gpu.vram_total_gib'))} GiB VRAM "
         "free before training starts: another process (an idle notebook kernel, a zombie run) holds the rest.",
         "Find it with `rocm-smi --showpids` or `nvidia-smi`, then shut the kernel down or kill the PID."),
]


def evaluate(facts: dict, settings: Profile | dict | None = None, rules: list[Rule] | None = None) -> list[dict]:
    """Every rule's verdict: status pass, or the rule's severity (fail/warn/info) when it fires."""
    settings = normalize_settings(settings)
    out = []
    for rule in RULES if rules is None else rules:
        row = {"id": rule.id, "severity": rule.severity, "title": rule.title, "status": "pass",
               "message": "", "fix": rule.fix}
        try:
            if rule.applies(facts, settings):
                row.update(status=rule.severity, message=rule.message(facts, settings))
        except Exception as exc:  # a rule must never take the env check down; say it could not run
            row.update(status="warn", message=f"could not evaluate this check ({type(exc).__name__}: {exc})")
        out.append(row)
    return out


def summarize(checks: list[dict]) -> dict:
    """Counts per status and the worst one ('fail' > 'warn' > 'info' > 'pass')."""
    counts = {status: sum(c["status"] == status for c in checks) for status in STATUS_ORDER}
    worst = max((c["status"] for c in checks), key=STATUS_ORDER.index, default="pass")
    return {**counts, "worst": worst}


def checks_table(checks: list[dict]) -> str:
    """One line per check that did not pass, worst first (for logs and headless runs)."""
    order = {"fail": 0, "warn": 1, "info": 2}
    rows = sorted((c for c in checks if c["status"] != "pass"), key=lambda c: order.get(c["status"], 3))
    return "\n".join(f"{c['status'].upper():5} {c['id']}: {c['message']}\n      fix: {c['fix']}" for c in rows) \
        or "all checks passed"
