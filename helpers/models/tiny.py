"""The offline default model: a tiny Qwen2-architecture LM and byte-level BPE tokenizer built from the bundled data.

`ensure_tiny_model()` returns runs/_cache/tiny-<hash>/ (building it once, ~2-3 min on one or two CPU cores): a directory
that `AutoTokenizer` / `AutoModelForCausalLM.from_pretrained` load like any Qwen2 checkpoint, with no hub access.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

from helpers import config
from helpers.models import cache as model_cache
from helpers.io import read_json, read_jsonl, stamp, write_json
from helpers.models.cache import sha256_file

BUILDER_VERSION = 4  # bump when the build recipe changes, so old caches are not reused
MARKER = "tiny_build.json"  # written last: its presence (with matching file hashes) marks a finished build
MAX_BUILD_THREADS = 2  # the counts whose weights were compared (identical); a 128-wide model gains little past it
SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")  # ids 0, 1, 2
# Qwen2's pre-tokenizer pattern (transformers' tokenization_qwen2 PRETOKENIZE_REGEX): the reloaded Qwen2
# tokenizer rebuilds its pipeline from this, so the tiny tokenizer must split text the same way.
QWEN2_PRETOKENIZE_REGEX = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
                           r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
CHAT_TEMPLATE = (  # Qwen ChatML without Qwen's default system prompt
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
BUNDLED_FILES = ("corpus.txt", "general_mcq.jsonl", "open_ended.jsonl")
CHAT_SYSTEM = "You answer questions with a short answer."  # half of the warm-up's chat exchanges open with it
MAX_GAP = 5  # corpus lines put between a warm-up question and its answer (a 4-choice prompt adds 5-6 lines)
# Words the puzzle topics use (seating, family trees), so their text does not shatter into bytes.
PUZZLE_TEXT = (
    "father mother son daughter brother sister uncle aunt nephew niece cousin grandfather grandmother grandson "
    "granddaughter grandparent grandchild husband wife spouse parent child children sibling siblings in-law "
    "father-in-law mother-in-law son-in-law daughter-in-law brother-in-law sister-in-law generation family tree "
    "relation related relationship paternal maternal only male female married elder younger "
    "seat seats seated sits sitting sit left right immediate immediately between next to neighbour neighbours "
    "opposite facing faces face centre center north south east west clockwise anticlockwise counterclockwise "
    "circular circle round table row linear end ends extreme position positions second third fourth fifth "
    "Amit Priya Rahul Neha Ravi Sita Anil Meena Arjun Kavya Ajay Pooja Vikram Divya Suresh Geeta Rohan Nina "
    "Alice Bob Carol Dave Eve Frank Grace Heidi Ivan Judy Karl Laura Mike Nora Oscar Paul Quinn Rita Sam Tina "
    "Uma Victor Wendy Xavier Yara Zoe A B C D E F G H P Q R S T U V W X Y Z "
    "Who sits to the immediate left of? How is related to? Which of the following is true? Answer: Explanation:"
)


@dataclasses.dataclass(frozen=True)
class TinySpec:
    """Everything that decides the built model: the cache hash covers all of it."""

    vocab_size: int = 2048          # min_frequency 2 saturates at ~2.6k on the bundled text; 2k costs +5% tokens
    hidden_size: int = 128
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int = 2
    intermediate_size: int = 384
    max_position_embeddings: int = 2048
    # ~115 s on one core: 1,200 x 16 x 64 = 1.2M tokens, ~18 passes over the spread corpus. At 800 steps the
    # answer behind four choice lines was found 41-68% of the time depending on the seed; at 1,200, 67-72%.
    warmup_steps: int = 1200
    seq_len: int = 64               # corpus lines are ~9 tokens
    batch_size: int = 16
    lr: float = 3e-3                # cosine, 5% warm-up: loss 7.6 -> 0.87
    seed: int = 1234


def data_dir() -> Path:
    """The bundled data folder (data/ in the checkout)."""
    return config.project_root() / "data"


def build_hash(spec: TinySpec, data: Path) -> str:
    """Short hash of the spec, the recipe version, the library versions and the bundled files' bytes."""
    import tokenizers
    import torch
    import transformers

    key = {"spec": dataclasses.asdict(spec), "builder": BUILDER_VERSION, "puzzle_text": PUZZLE_TEXT,
           "versions": [transformers.__version__, tokenizers.__version__, torch.__version__],
           "data": {name: sha256_file(data / name) for name in BUNDLED_FILES}}
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]


def tokenizer_texts(data: Path) -> list[str]:
    """The tokenizer's training text: corpus, MCQs in two common prompt layouts, open-ended questions,
    chat role names and puzzle words."""
    texts = (data / "corpus.txt").read_text(encoding="utf-8").splitlines()
    for i, rec in enumerate(read_jsonl(data / "general_mcq.jsonl")):
        answer = "ABCD"[rec["answer"]]
        if i % 2:  # "A. dog ... Answer: B" and "Choices:\nA) dog ... B": the layouts prompts are written in
            lines = [f"Question: {rec['question']}"] + [f"{'ABCD'[j]}. {c}" for j, c in enumerate(rec["choices"])]
            lines.append(f"Answer: {answer}")
        else:
            lines = [f"Question: {rec['question']}", "Choices:"]
            lines += [f"{'ABCD'[j]}) {c}" for j, c in enumerate(rec["choices"])] + [answer]
        texts.append("\n".join(lines))
    for rec in read_jsonl(data / "open_ended.jsonl"):
        texts.append(f"{rec['question']} {rec['answer_text']}")
    # Repeated so these words win merges: once each, they would stay split into bytes and short pieces.
    texts += [f"system\nuser\nassistant\n{CHAT_SYSTEM}"] * 16 + [PUZZLE_TEXT] * 4
    return texts


def train_tokenizer(texts: list[str], vocab_size: int):
    """A byte-level BPE with Qwen2's normaliser, pre-tokeniser and decoder, and the ChatML special tokens first."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.BPE(unk_token=None, continuing_subword_prefix="", end_of_word_suffix="",
                               fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PRETOKENIZE_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                                  special_tokens=list(SPECIAL_TOKENS),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def save_tokenizer(tok, out: Path, model_max_length: int) -> None:
    """Write tokenizer.json, vocab.json, merges.txt and a tokenizer_config.json that transformers 4.51 and 5.x read."""
    tok.save(str(out / "tokenizer.json"))
    tok.model.save(str(out))  # vocab.json + merges.txt, for the slow Qwen2Tokenizer of transformers 4.x
    added = {str(tok.token_to_id(t)): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                                       "single_word": False, "special": True} for t in SPECIAL_TOKENS}
    # Written by hand: transformers 5 saves extra_special_tokens as a list, which 4.51 cannot read.
    write_json(out / "tokenizer_config.json", {
        "add_prefix_space": False, "added_tokens_decoder": added,
        "additional_special_tokens": list(SPECIAL_TOKENS[1:]), "bos_token": None, "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False, "eos_token": SPECIAL_TOKENS[0], "errors": "replace",
        "model_max_length": model_max_length, "pad_token": SPECIAL_TOKENS[0], "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer", "unk_token": None})
    write_json(out / "special_tokens_map.json", {"additional_special_tokens": list(SPECIAL_TOKENS[1:]),
                                                 "eos_token": SPECIAL_TOKENS[0], "pad_token": SPECIAL_TOKENS[0]})


def make_model(spec: TinySpec, vocab_size: int):
    """A freshly initialised Qwen2ForCausalLM (seeded) with tied embeddings."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(vocab_size=vocab_size, hidden_size=spec.hidden_size, intermediate_size=spec.intermediate_size,
                      num_hidden_layers=spec.num_layers, num_attention_heads=spec.num_heads,
                      num_key_value_heads=spec.num_kv_heads, max_position_embeddings=spec.max_position_embeddings,
                      tie_word_embeddings=True, rope_theta=10000.0, use_sliding_window=False, sliding_window=None,
                      bos_token_id=None, eos_token_id=0, pad_token_id=0)
    torch.manual_seed(spec.seed)
    return Qwen2ForCausalLM(cfg)


def spread_answers(lines: list[str], seed: int, max_gap: int = MAX_GAP) -> list[str]:
    """Each 'Question: q Answer: a.' line becomes q, then 0..max_gap other corpus lines, then the answer: half
    as plain text ('Answer: a.'), half as a ChatML exchange whose assistant turn is ' a' (or a bare letter).

    Why (measured on the tiny model, fixed-set questions, first token of the right choice at the answer slot):
    a base that only saw each answer right after its question finds it 76% of the time without choices but
    27% with four choice lines in between, and LoRA adapters then stay at chance; answers spread over other
    lines bring that to 62-72%. The chat half teaches the turn tokens that chat fine-tunes and agents use.
    The leading space in ' a' reuses the ' mammal' token the plain sentences train: with a bare 'mammal'
    (another token id) the chat answer was found 26% of the time, with ' mammal' 55%.
    """
    rng = random.Random(seed)
    facts = [line for line in lines if not line.startswith("Question: ")]
    start, end = SPECIAL_TOKENS[1], SPECIAL_TOKENS[2]
    out = []
    for line in lines:
        if line.startswith("Question: ") and " Answer: " in line:
            question, answer = line.split(" Answer: ", 1)
            body = "\n".join([question, *rng.sample(facts, rng.randint(0, max_gap))])
            if rng.random() < 0.5:
                line = f"{body}\nAnswer: {answer}"
            else:
                system = f"{start}system\n{CHAT_SYSTEM}{end}\n" if rng.random() < 0.5 else ""
                reply = answer.rstrip(".")
                reply = reply if len(reply) == 1 else " " + reply  # a letter answer stays bare, like "B"
                line = f"{system}{start}user\n{body}{end}\n{start}assistant\n{reply}{end}"
        out.append(line)
    return out


def lm_blocks(lines: list[str], tok, seq_len: int, n_blocks: int, seed: int) -> list[list[int]]:
    """Pack the corpus into `n_blocks` blocks of `seq_len` ids; each pass spreads the answers anew and reshuffles.

    The gaps grow pass by pass (none in pass 0, up to MAX_GAP from pass 5): over three seeds, growing gaps found
    the answer behind the choices 67-72% of the time after 1,200 steps, fixed 1-5 line gaps 45-67%.
    """
    rng, stream, blocks, n_pass = random.Random(seed), [], [], 0
    while len(blocks) < n_blocks:
        texts = spread_answers(lines, seed + n_pass, max_gap=min(MAX_GAP, n_pass))
        n_pass += 1
        encoded = [e.ids for e in tok.encode_batch([text + "\n" for text in texts])]
        order = list(range(len(encoded)))
        rng.shuffle(order)
        for i in order:
            stream.extend(encoded[i])
        while len(stream) >= seq_len and len(blocks) < n_blocks:
            blocks.append(stream[:seq_len])
            stream = stream[seq_len:]
    return blocks


def training_args(out: Path, *, steps: int, batch_size: int, lr: float, seed: int, progress: bool, **extra):
    """TrainingArguments for a CPU run that both transformers 4.51 and 5.x accept."""
    from transformers import TrainingArguments

    return TrainingArguments(output_dir=str(out), max_steps=steps, per_device_train_batch_size=batch_size,
                             learning_rate=lr, lr_scheduler_type="cosine", warmup_steps=max(1, steps // 20),
                             weight_decay=0.0, max_grad_norm=1.0, optim="adamw_torch",
                             logging_steps=max(1, steps // 10), logging_first_step=True, save_strategy="no",
                             report_to="none", seed=seed, data_seed=seed, use_cpu=True, dataloader_num_workers=0,
                             disable_tqdm=not progress, **extra)


def warm_up(model, tok, lines: list[str], spec: TinySpec, work: Path, progress: bool) -> dict:
    """Short full-parameter causal-LM training on the corpus; returns first/last logged loss."""
    from transformers import Trainer, default_data_collator

    if spec.warmup_steps <= 0:
        return {"steps": 0, "loss_first": None, "loss_last": None}
    blocks = lm_blocks(lines, tok, spec.seq_len, spec.warmup_steps * spec.batch_size, spec.seed)
    dataset = [{"input_ids": b, "labels": b, "attention_mask": [1] * len(b)} for b in blocks]
    args = training_args(work, steps=spec.warmup_steps, batch_size=spec.batch_size, lr=spec.lr, seed=spec.seed,
                         progress=progress)
    trainer = Trainer(model=model, args=args, train_dataset=dataset, data_collator=default_data_collator)
    trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    one_pass = sum(len(e.ids) for e in tok.encode_batch([t + "\n" for t in spread_answers(lines, spec.seed)]))
    return {"steps": spec.warmup_steps, "loss_first": losses[0], "loss_last": losses[-1],
            "tokens_seen": spec.warmup_steps * spec.batch_size * spec.seq_len, "corpus_lines": len(lines),
            "corpus_tokens": one_pass}


def _write_model(model, out: Path) -> None:
    from transformers import GenerationConfig

    model.config.use_cache = True  # the Trainer turned it off for training; generation wants it on
    model.save_pretrained(str(out))
    cfg = read_json(out / "config.json")
    # transformers 5 writes rope_parameters/dtype; 4.51 reads rope_theta/torch_dtype. Keep both spellings.
    cfg.setdefault("rope_theta", 10000.0)
    cfg.setdefault("torch_dtype", "float32")
    write_json(out / "config.json", cfg)
    GenerationConfig(eos_token_id=[SPECIAL_TOKENS.index("<|im_end|>"), 0], pad_token_id=0,
                     do_sample=False).save_pretrained(str(out))


def is_complete(path: Path) -> bool:
    """A finished build: tiny_build.json present and every file it lists has the recorded sha256."""
    return model_cache.is_complete(path, MARKER)


def _is_current(path: Path, spec: TinySpec) -> bool:
    """Finished, and built from these parameters and this data (an out_dir may hold an older build)."""
    return is_complete(path) and read_json(path / MARKER).get("hash") == build_hash(spec, data_dir())


def cache_path(spec: TinySpec) -> Path:
    """<cache>/tiny-<hash>/ (runs/_cache/ unless KIT_CACHE_DIR is set) for this spec and the current bundled data."""
    return config.cache_root() / f"tiny-{build_hash(spec, data_dir())}"


def spec_for(warmup_steps: int | None = None, seed: int | None = None) -> TinySpec:
    """The default TinySpec with the warm-up length and seed a caller chose (None keeps the default)."""
    base = TinySpec()
    return dataclasses.replace(base, warmup_steps=base.warmup_steps if warmup_steps is None else warmup_steps,
                               seed=base.seed if seed is None else seed)


def build_tiny_model(*, out_dir: str | os.PathLike | None = None, warmup_steps: int | None = None,
                     seed: int | None = None, force: bool = False, progress: bool = True) -> Path:
    """Build tokenizer + model + warm-up into out_dir (default: the cache path), atomically; returns the directory."""
    spec = spec_for(warmup_steps, seed)
    final = Path(out_dir) if out_dir is not None else cache_path(spec)
    if not force and _is_current(final, spec):
        return final
    # One build at a time: notebooks 03-05 side by side, make test's workers and make test-container's all ask for
    # the same folder; the first builds it (~2-4 min of one core) and the others wait, then find it current.
    with model_cache.build_lock(final):
        if not force and _is_current(final, spec):
            return final
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".building", dir=final.parent))
        try:
            threads = build_threads()
            with _torch_threads(threads):
                _build_into(tmp, spec, threads, progress=progress and not os.environ.get("KIT_HEADLESS"))
            tmp.chmod(0o755)
            model_cache.install_dir(tmp, final, MARKER)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def build_threads() -> int:
    """Torch threads for the warm-up: every core of this process when nothing else of the kit's runs beside it.

    One thread under pytest-xdist (PYTEST_XDIST_WORKER, inherited by the notebooks' kernels): there the other cores
    run other tests, and 2-thread torch on a shared 2-core box spin-waits (measured 1.38 s against 0.23 s a
    16x128-token step). `make pipeline` runs alone: its first training notebook builds while the other two wait on
    the lock, so two threads use the core that sat idle (173 s -> 122 s on a 2-core AMD EPYC). The weights came out
    byte for byte the same at one and two threads there (sha256, 1,200 steps; tiny_build.json records the count), so
    the count is not in the cache key: a cache built by make test's workers serves make pipeline and the other way
    round. tests/test_tinymodel.py builds at both counts on every box that runs make test and fails if they differ.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return 1
    return max(1, min(MAX_BUILD_THREADS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                      else os.cpu_count() or 1))


@contextlib.contextmanager
def _torch_threads(n: int):
    """n torch threads and deterministic kernels for the build; both restored afterwards."""
    import torch

    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(n)
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)


def _build_into(tmp: Path, spec: TinySpec, threads: int, *, progress: bool) -> None:
    t0 = time.time()
    data = data_dir()
    tok = train_tokenizer(tokenizer_texts(data), spec.vocab_size)
    save_tokenizer(tok, tmp, spec.max_position_embeddings)
    model = make_model(spec, tok.get_vocab_size())
    lines = (data / "corpus.txt").read_text(encoding="utf-8").splitlines()
    warm = warm_up(model, tok, lines, spec, tmp / "_trainer", progress)
    shutil.rmtree(tmp / "_trainer", ignore_errors=True)
    _write_model(model, tmp)
    for path in tmp.iterdir():
        path.chmod(0o644)  # atomic writes create 0600 files; the cache may be read by another user's kernel
    files = {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.is_file()}
    info = write_json(tmp / MARKER, {  # written last: its presence marks a finished build
        "spec": dataclasses.asdict(spec), "hash": build_hash(spec, data), "builder_version": BUILDER_VERSION,
        "n_params": sum(p.numel() for p in model.parameters()), "vocab_size": tok.get_vocab_size(),
        "data_sha256": {n: sha256_file(data / n) for n in BUNDLED_FILES}, "warmup": warm,
        "wall_time_s": round(time.time() - t0, 1), "threads": threads, "files": files, "stamp": stamp(dataclasses.asdict(spec))})
    info.chmod(0o644)


def ensure_tiny_model(*, warmup_steps: int | None = None, seed: int | None = None, progress: bool = True) -> Path:
    """The cached tiny model's directory, building it first if it is missing or incomplete."""
    return build_tiny_model(warmup_steps=warmup_steps, seed=seed, progress=progress)


# ---------------------------------------------------------------- the tiny model with a pad-named token
# Unsloth will not pad with the eos and takes a pad-named token of the vocabulary instead (unsloth_zoo's
# fix_pad_token); the tiny model's pad is its eos, as in Qwen's base models, so Unsloth refuses it. `tiny-pad` is the
# same weights with Qwen2.5's <|fim_pad|> added as its pad (one embedding row, the mean of the others): make
# gpu-check's default model, so the check takes the Unsloth path wherever Unsloth imports. The smoke pipeline keeps
# "tiny" (a new vocabulary moved its learning test: docs/results.md).
TINY_PAD, PAD_TOKEN = "tiny-pad", "<|fim_pad|>"


def ensure_padded_tiny(*, progress: bool = True) -> Path:
    """<tiny's folder>-pad/: the tiny model with PAD_TOKEN as its pad, derived once (seconds) and cached beside it."""
    return padded_from(ensure_tiny_model(progress=progress))


def padded_from(base: Path) -> Path:
    """<base>-pad/, derived from the built tiny model in `base` unless already complete."""
    final = base.with_name(base.name + "-pad")
    if is_complete(final):
        return final
    with model_cache.build_lock(final):
        if is_complete(final):
            return final
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".building", dir=final.parent))
        try:
            _pad_into(base, tmp)
            model_cache.install_dir(tmp, final, MARKER)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def _pad_into(base: Path, tmp: Path) -> None:
    """Load the tiny model, add PAD_TOKEN as its pad with one new embedding row (the others' mean: deterministic),
    save it and its marker (the base's, with the pad recorded) into tmp."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    tok = AutoTokenizer.from_pretrained(str(base), local_files_only=True)
    tok.add_special_tokens({"pad_token": PAD_TOKEN})
    model = AutoModelForCausalLM.from_pretrained(str(base), local_files_only=True)
    model.resize_token_embeddings(len(tok), mean_resizing=False)
    with torch.no_grad():
        for emb in {id(e): e for e in (model.get_input_embeddings(), model.get_output_embeddings())}.values():
            emb.weight[-1] = emb.weight[:-1].mean(0)
    model.config.pad_token_id = tok.pad_token_id
    _write_model(model, tmp)
    gen = GenerationConfig.from_pretrained(str(tmp))
    gen.pad_token_id = tok.pad_token_id
    gen.save_pretrained(str(tmp))
    tok.save_pretrained(str(tmp))
    for path in tmp.iterdir():
        path.chmod(0o644)
    info = read_json(base / MARKER)
    files = {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.is_file()}
    write_json(tmp / MARKER, {**info, "files": files, "pad_token": PAD_TOKEN, "pad_token_id": tok.pad_token_id,
                              "vocab_size": len(tok), "derived_from": base.name}).chmod(0o644)
