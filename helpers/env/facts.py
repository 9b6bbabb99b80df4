"""The facts of this machine (Python, CPU, RAM, torch, GPU, packages, disks, HF cache), probed into one record.

Nothing heavy is imported at module level: torch, psutil and the GPU libraries are imported (or run in a
child interpreter) only by the probe that needs them, so importing helpers.env never imports torch.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import time
from importlib import util as import_util
from pathlib import Path
from typing import Callable, MutableMapping

from helpers.io import package_version

# Where Unsloth writes the code it generates. unsloth_zoo 2026.10.9 reads UNSLOTH_COMPILE_LOCATION once, when it is
# imported (unsloth_zoo/compiler.py), and defaults to "unsloth_compiled_cache" relative to the working directory: a
# notebook's is notebooks/, inside the checkout.
COMPILE_LOCATION_VAR = "UNSLOTH_COMPILE_LOCATION"


def compile_location() -> Path:
    """The folder the kit gives Unsloth for its generated code: unsloth_compiled_cache/ under the kit's cache
    (config.cache_root(): $KIT_CACHE_DIR, else runs/_cache), shared by every run like the built tiny model."""
    from helpers import config
    return config.cache_root() / "unsloth_compiled_cache"


def unsloth_environ() -> dict[str, str]:
    """The variables the kit sets before Unsloth is imported (models.unsloth_api.import_unsloth, and the import probe
    below); a value already in the environment wins."""
    return {COMPILE_LOCATION_VAR: str(compile_location().absolute())}


SCHEMA = 1
PACKAGES = (
    "torch", "triton", "pytorch-triton-rocm", "pytorch-triton", "transformers", "peft", "trl", "datasets",
    "accelerate", "bitsandbytes", "unsloth", "unsloth_zoo", "flash-attn", "torchao", "torchtune", "tokenizers",
)
ENV_VARS = (
    "HSA_OVERRIDE_GFX_VERSION", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
    "TORCH_COMPILE", "TORCHDYNAMO_DISABLE", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES", "PYTORCH_ROCM_ARCH", "HF_HOME", "HF_HUB_CACHE", "TOKENIZERS_PARALLELISM",
)
GIB = 1024 ** 3
KFD_NODES = Path("/sys/class/kfd/kfd/topology/nodes")
BNB_IMPORT = "from bitsandbytes.nn import Linear4bit"  # unsloth_zoo's patch_model_and_tokenizer, on every load
# A real 8-bit AdamW step: 8192 elements, because bitsandbytes keeps tensors < 4096 in 32-bit state.
BNB_CHECK = ("import torch, bitsandbytes as bnb\n"
             "p = torch.nn.Parameter(torch.zeros(8192, device='cuda')); p.grad = torch.ones_like(p)\n"
             "bnb.optim.Adam8bit([p], lr=1e-3).step()\n"
             "bnb.functional.quantize_4bit(torch.randn(64, 64, device='cuda', dtype=torch.float16))\n")


def _gib(n_bytes: float) -> float:
    return round(n_bytes / GIB, 2)


def _err(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"[:500]


def empty_facts() -> dict:
    """The facts record with every field present and unknown: probes fill it in, failures leave the defaults."""
    return {
        "schema": SCHEMA, "collected": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "backend": "cpu",
        "python": {"version": None, "implementation": None, "executable": None},
        "system": {"platform": None, "machine": None, "cpu_logical": None, "cpu_physical": None,
                   "cpu_usable": None, "ram_total_gib": None, "ram_available_gib": None},
        "torch": {"version": None, "hip": None, "cuda": None, "cuda_available": False, "mps_available": False,
                  "int1": None, "sdpa": None},
        "gpu": {"count": 0, "name": None, "arch": None, "gfx": None, "native_gfx": [],
                "compute_capability": None, "vram_total_gib": None, "vram_free_gib": None, "bf16": None},
        "packages": {name: None for name in PACKAGES},
        "triton": {"module_version": None, "torch_requires": None},
        "unsloth": {"importable": False, "detail": "not checked", "version": None, "zoo": None, "pinned": None,
                    "unmet": []},
        "stack": {"record": None, "changes": []},
        "bitsandbytes": {"usable": False, "importable": None, "detail": "not checked", "libs": [],
                         "expected_lib": None},
        "flash_attn": {"importable": False, "detail": "not checked"},
        "env": {var: None for var in ENV_VARS},
        "disk": {"runs": None, "hf_cache": None},
        "hf_cache": {"paths": [], "size_gib": None, "files": 0, "truncated": False, "seconds": 0.0},
        "errors": {},
    }


# ---------------------------------------------------------------- probes (each fills its part of the record)
def _probe_python(facts: dict) -> None:
    facts["python"] = {"version": platform.python_version(), "implementation": platform.python_implementation(),
                       "executable": sys.executable}


def _probe_system(facts: dict) -> None:
    sysf = facts["system"]
    sysf.update(platform=platform.platform(), machine=platform.machine(), cpu_logical=os.cpu_count())
    if hasattr(os, "sched_getaffinity"):  # containers often pin fewer cores than the host has
        sysf["cpu_usable"] = len(os.sched_getaffinity(0))
    import psutil
    mem = psutil.virtual_memory()
    sysf.update(cpu_physical=psutil.cpu_count(logical=False), ram_total_gib=_gib(mem.total),
                ram_available_gib=_gib(mem.available))


def _probe_packages(facts: dict) -> None:
    facts["packages"] = {name: package_version(name) for name in PACKAGES}


def _probe_env(facts: dict) -> None:
    facts["env"] = {var: os.environ.get(var) for var in ENV_VARS}


def _probe_torch(facts: dict) -> None:
    import torch

    t, gpu, errors = facts["torch"], facts["gpu"], facts["errors"]
    t.update(version=torch.__version__, hip=getattr(torch.version, "hip", None),
             cuda=getattr(torch.version, "cuda", None), int1=hasattr(torch, "int1"),
             sdpa=hasattr(torch.nn.functional, "scaled_dot_product_attention"))
    t["cuda_available"] = bool(torch.cuda.is_available())
    mps = getattr(torch.backends, "mps", None)
    t["mps_available"] = bool(mps and mps.is_available())
    if t["cuda_available"]:
        facts["backend"] = "rocm" if t["hip"] else "cuda"
        gpu["count"] = torch.cuda.device_count()
        props = torch.cuda.get_device_properties(0)
        gpu.update(name=props.name, arch=getattr(props, "gcnArchName", None))
        gpu["vram_total_gib"] = _gib(props.total_memory)
        if gpu["arch"]:
            gpu["gfx"] = gpu["arch"].split(":")[0]  # "gfx942:sramecc+:xnack-" -> "gfx942"
        if not t["hip"]:  # on ROCm major/minor are the gfx version, not a CUDA compute capability
            gpu["compute_capability"] = [props.major, props.minor]
        for key, fn in (("vram_free_gib", lambda: _gib(torch.cuda.mem_get_info(0)[0])),
                        ("bf16", lambda: bool(torch.cuda.is_bf16_supported()))):
            try:
                gpu[key] = fn()
            except Exception as exc:  # e.g. mem_get_info unsupported on some virtual functions
                errors[f"gpu.{key}"] = _err(exc)
    elif t["mps_available"]:
        facts["backend"] = "mps"
        gpu.update(count=1, name="Apple MPS")


def _probe_kfd(facts: dict) -> None:
    """Native gfx targets from the ROCm kernel driver (not fooled by HSA_OVERRIDE_GFX_VERSION)."""
    if not KFD_NODES.is_dir():
        return
    found = []
    for node in sorted(KFD_NODES.iterdir()):
        props = node / "properties"
        text = props.read_text() if props.exists() else ""
        match = re.search(r"^gfx_target_version\s+(\d+)", text, re.M)
        if match and int(match.group(1)):  # CPU nodes report 0
            v = int(match.group(1))  # 90402 -> gfx942, 90010 -> gfx90a, 110000 -> gfx1100
            found.append(f"gfx{v // 10000}{(v // 100) % 100:x}{v % 100:x}")
    facts["gpu"]["native_gfx"] = found


def _probe_triton(facts: dict) -> None:
    from importlib import metadata

    spec = import_util.find_spec("triton")  # locating a top-level package does not import it
    if spec and spec.origin and Path(spec.origin).exists():
        match = re.search(r"""^__version__\s*=\s*['"]([^'"]+)""", Path(spec.origin).read_text(), re.M)
        facts["triton"]["module_version"] = match.group(1) if match else None
    if package_version("torch"):
        for req in metadata.requires("torch") or []:
            match = re.match(r"(triton|pytorch-triton-rocm|pytorch-triton)\s*\(?\s*==\s*([^\s;)]+)", req)
            if match:
                facts["triton"]["torch_requires"] = match.group(2)


def disk_free(path: str | os.PathLike) -> dict:
    """Free/total GiB of the filesystem holding `path` (its nearest existing parent if not created yet)."""
    target = Path(path).expanduser().absolute()
    probe = target
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    usage = shutil.disk_usage(probe)
    return {"path": str(target), "measured_at": str(probe), "free_gib": _gib(usage.free),
            "total_gib": _gib(usage.total), "device": os.stat(probe).st_dev}


def dir_size(paths: list[str | os.PathLike], budget_s: float = 10.0, max_files: int = 200_000) -> dict:
    """Total size of files under `paths`, stopping at a time or file budget (then `truncated` is true)."""
    start, total, files, truncated = time.monotonic(), 0, 0, False
    stack = [Path(p).expanduser() for p in paths if Path(p).expanduser().exists()]
    while stack and not truncated:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue  # unreadable folder: skip it rather than stop the whole check
        for entry in entries:
            if files >= max_files or time.monotonic() - start > budget_s:
                truncated = True
                break
            try:
                # Never follow symlinks: the hub cache links snapshots/ to blobs/, counting both would double it.
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
                    files += 1
            except OSError:
                continue
    return {"paths": [str(Path(p).expanduser()) for p in paths], "size_gib": _gib(total), "files": files,
            "truncated": truncated, "seconds": round(time.monotonic() - start, 2)}


def hf_cache_paths(environ: MutableMapping[str, str] | None = None) -> list[str]:
    """Where Hugging Face keeps downloads: HF_HOME (default ~/.cache/huggingface), plus HF_HUB_CACHE if elsewhere."""
    env = os.environ if environ is None else environ
    xdg = env.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    home = Path(env.get("HF_HOME") or os.path.join(xdg, "huggingface")).expanduser()
    paths = [str(home)]
    hub = env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE")
    if hub and not Path(hub).expanduser().absolute().is_relative_to(home.absolute()):
        paths.append(str(Path(hub).expanduser()))
    return paths


def _run_python(code: str, timeout_s: float, env: dict[str, str] | None = None) -> tuple[bool, str]:
    """Run `code` in a fresh interpreter (a crash or hang there cannot take the notebook down), with `env`'s
    variables where the environment does not set them already."""
    start = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout_s,
                              env={**(env or {}), **os.environ})
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout_s:.0f} s"
    if proc.returncode == 0:
        return True, f"ok ({time.monotonic() - start:.1f} s)"
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    return False, (lines[-1] if lines else f"exit code {proc.returncode}")[:500]


DEFERRED = "not tried here: the caller imports it once, in its own process (make gpu-check)"


def _probe_unsloth(facts: dict, timeout_s: float, try_import: bool = True) -> None:
    out = facts["unsloth"]
    out.update(_unsloth_install_facts())
    if not package_version("unsloth"):
        out.update(importable=False, detail="not installed")
    elif not out["zoo"]:
        out.update(importable=False, detail="unsloth_zoo is not installed (unsloth imports it first)")
    elif facts["backend"] not in ("rocm", "cuda"):
        out.update(importable=False, detail="not tried: the kit uses Unsloth only on a GPU")  # 2026.10 has a CPU
        # fallback of its own; on a CPU the kit trains with transformers + PEFT
    elif not try_import:  # importable stays None: the caller's own import (tens of seconds on a GPU) is the probe
        out.update(importable=None, detail=DEFERRED)
    else:  # its compiled code sent under the kit's cache, as import_unsloth does, not into the working directory
        ok, detail = _run_python("import unsloth", timeout_s, env=unsloth_environ())
        out.update(importable=ok, detail=detail)


def _unsloth_install_facts() -> dict:
    """The installed Unsloth against the kit's pin and its own declared requirements (read, never imported)."""
    from helpers.env import box, stack
    version = package_version("unsloth")
    pinned = stack.read_pins(stack.GPU_PINS).get("unsloth") if stack.GPU_PINS.exists() else None
    unmet: list[str] = []
    if version:
        from importlib import metadata
        try:
            declared = metadata.requires("unsloth") or []
        except metadata.PackageNotFoundError:  # the version came from elsewhere (a test, a broken install)
            declared = []
        unmet = stack.unmet(stack.applicable(declared, source="unsloth's METADATA"), box.installed_versions())
    return {"version": version, "zoo": package_version("unsloth_zoo"), "pinned": pinned, "unmet": unmet}


def _probe_stack(facts: dict) -> None:
    """Whether a pip step replaced the torch stack make setup recorded in this venv (one line each, with the fix)."""
    from helpers.env import box
    path = box.stack_path()
    facts["stack"] = {"record": str(path) if path.exists() else None,
                      "changes": box.stack_changes(path, box.installed_versions())}


def _probe_bitsandbytes(facts: dict, timeout_s: float) -> None:
    out = facts["bitsandbytes"]
    spec = import_util.find_spec("bitsandbytes")
    if spec and spec.origin:
        out["libs"] = sorted(p.name for p in Path(spec.origin).parent.glob("libbitsandbytes*"))
    if not package_version("bitsandbytes"):
        out.update(usable=False, detail="not installed")
        return
    if facts["backend"] not in ("rocm", "cuda"):
        out.update(usable=False, detail="no GPU: its 8-bit optimizer and 4-bit kernels need one")
        return
    missing = ""
    hip = facts["torch"]["hip"]
    if hip:  # the seeds: "libbitsandbytes_rocm62.so not found" for ROCm 6.2
        major, minor = (hip.split(".") + ["0"])[:2]
        expected = f"libbitsandbytes_rocm{major}{minor}.so"
        out["expected_lib"] = expected
        missing = "" if expected in out["libs"] else f"{expected} not found (has: {', '.join(out['libs']) or 'none'}); "
    ok, detail = _run_python(BNB_CHECK, timeout_s)
    # what Unsloth's loader imports on every load (a build whose 8-bit step fails may still import)
    importable = ok or _run_python(BNB_IMPORT, timeout_s)[0]
    out.update(usable=ok, importable=importable, detail=detail if ok else missing + detail)


def _probe_flash_attn(facts: dict, timeout_s: float) -> None:
    out = facts["flash_attn"]
    if not facts["packages"].get("flash-attn"):
        out.update(importable=False, detail="not installed")
    elif facts["backend"] != "cuda":
        out.update(importable=False, detail="not checked: flash_attention_2 is only recommended on CUDA")
    else:
        ok, detail = _run_python("import flash_attn", timeout_s)
        out.update(importable=ok, detail=detail)


def collect_facts(runs_dir: str | os.PathLike | None = None, hf_cache: str | os.PathLike | None = None, *,
                  hf_budget_s: float = 10.0, hf_max_files: int = 200_000, import_timeout_s: float = 180.0,
                  import_unsloth: bool = True) -> dict:
    """Probe this machine into a plain JSON-able record; a failing probe records an error string, never raises.
    import_unsloth=False: on a GPU, `import unsloth` is left to the caller (unsloth.importable None), which imports it
    in its own process anyway, so it is imported once."""
    from helpers.config import runs_root

    facts = empty_facts()
    hf_paths = [str(Path(hf_cache).expanduser())] if hf_cache else hf_cache_paths()
    probes: list[tuple[str, Callable[[dict], None]]] = [
        ("python", _probe_python), ("system", _probe_system), ("packages", _probe_packages), ("env", _probe_env),
        ("torch", _probe_torch), ("kfd", _probe_kfd), ("triton", _probe_triton),
        ("disk.runs", lambda f: f["disk"].update(runs=disk_free(runs_dir or runs_root()))),
        ("disk.hf_cache", lambda f: f["disk"].update(hf_cache=disk_free(hf_paths[-1]))),
        ("hf_cache", lambda f: f.update(hf_cache=dir_size(hf_paths, hf_budget_s, hf_max_files))),
        ("stack", _probe_stack),
        ("unsloth", lambda f: _probe_unsloth(f, import_timeout_s, import_unsloth)),
        ("bitsandbytes", lambda f: _probe_bitsandbytes(f, import_timeout_s)),
        ("flash_attn", lambda f: _probe_flash_attn(f, import_timeout_s)),
    ]
    for name, probe in probes:
        try:
            probe(facts)
        except Exception as exc:
            facts["errors"][name] = _err(exc)
    return facts
