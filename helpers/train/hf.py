"""The transformers side of adapter training: version-tolerant TrainingArguments and the per-chunk Trainer.

Imported only inside helpers.train.run / helpers.train.state functions (after the model is loaded), never at import,
so Unsloth can still be imported first (see helpers.models). Works on transformers 4.51.3 and 5.x:
  - group_by_length=True (4.51.3) is train_sampling_strategy="group_by_length" on 5.x;
  - eval_strategy (4.41+) was evaluation_strategy before; use_cpu (4.34+) was no_cuda;
  - Trainer(processing_class=) (4.46+) was Trainer(tokenizer=);
  - 4.51.3 on torch 2.4-2.5 cannot reload its own RNG state on resume (allow_rng_state_on_old_torch).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Iterable

import torch
from transformers import Trainer, TrainingArguments

MAGNITUDE_KEY = "lora_magnitude_vector"  # PEFT's name for DoRA's per-output-channel magnitude parameters
# Canonical argument -> the names it has had, newest first.
RENAMED = {"eval_strategy": ("eval_strategy", "evaluation_strategy"), "use_cpu": ("use_cpu", "no_cuda")}


def allow_rng_state_on_old_torch() -> bool:
    """transformers 4.51.3's Trainer reloads a checkpoint's rng_state.pth with torch.load(weights_only=True) but
    allow-lists numpy's array types only on torch >= 2.6, so on torch 2.4-2.5 (the original team's MI300X ran 2.5.1)
    every resume fails: 'Unsupported global: numpy._core.multiarray._reconstruct'. Allow-list the types it allows on
    2.6 (numpy arrays and dtypes: data, no code) for this process; True when it did."""
    import numpy as np
    from helpers.io import version_tuple
    if version_tuple(torch.__version__)[:2] >= (2, 6) or not hasattr(torch.serialization, "add_safe_globals"):
        return False
    core = np._core if hasattr(np, "_core") else np.core
    torch.serialization.add_safe_globals([core.multiarray._reconstruct, np.ndarray, np.dtype,
                                          type(np.dtype(np.uint32))])
    return True


def accepted_training_args() -> set[str]:
    """The TrainingArguments field names this transformers accepts."""
    return {f.name for f in dataclasses.fields(TrainingArguments) if f.init}


def compat_training_kwargs(wanted: dict, accepted: Iterable[str]) -> tuple[dict, list[str]]:
    """Map canonical TrainingArguments names onto what this version accepts; returns (kwargs, dropped names)."""
    accepted = set(accepted)
    out: dict[str, Any] = {}
    dropped: list[str] = []
    for key, value in wanted.items():
        if key == "group_by_length":
            if "group_by_length" in accepted:
                out["group_by_length"] = bool(value)
            elif "train_sampling_strategy" in accepted:  # transformers 5.x
                out["train_sampling_strategy"] = "group_by_length" if value else "random"
            else:
                dropped.append(key)
            continue
        name = next((n for n in RENAMED.get(key, (key,)) if n in accepted), None)
        if name is None:
            dropped.append(key)
        else:
            out[name] = value
    return out, dropped


def make_training_args(**wanted: Any) -> tuple[TrainingArguments, list[str]]:
    """TrainingArguments from canonical names, passing only what the installed version accepts."""
    kwargs, dropped = compat_training_kwargs(wanted, accepted_training_args())
    return TrainingArguments(**kwargs), dropped


def trainer_tokenizer_kwarg(tokenizer: Any) -> dict:
    """{'processing_class': tok} on transformers >= 4.46, {'tokenizer': tok} before."""
    params = inspect.signature(Trainer.__init__).parameters
    return {"processing_class": tokenizer} if "processing_class" in params else {"tokenizer": tokenizer}


def param_groups(model: torch.nn.Module, *, lr: float, weight_decay: float, magnitude_lr_multiplier: float,
                 decay_names: set[str]) -> list[dict]:
    """Trainable parameters in optimizer groups: decay / no-decay, and DoRA magnitudes at lr x multiplier.

    The magnitude vector is one scale per output channel, initialised to the weight's column norms
    (values ~1) while its gradients are small relative to that value, so at the direction's lr it
    barely moves; the original team's DoRA plan gave it 5x (range 5-10x).
    """
    groups: dict[str, dict] = {
        "decay": {"params": [], "lr": lr, "weight_decay": weight_decay, "name": "decay"},
        "no_decay": {"params": [], "lr": lr, "weight_decay": 0.0, "name": "no_decay"},
        "magnitude": {"params": [], "lr": lr * magnitude_lr_multiplier, "weight_decay": 0.0, "name": "magnitude"},
    }
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        key = "magnitude" if MAGNITUDE_KEY in name else "decay" if name in decay_names else "no_decay"
        groups[key]["params"].append(p)
    return [g for g in groups.values() if g["params"]]


def load_optimizer_state(optimizer: torch.optim.Optimizer, state: dict) -> None:
    """Carry AdamW moments over from the previous chunk; keep this chunk's learning rates."""
    lrs = [g["lr"] for g in optimizer.param_groups]
    optimizer.load_state_dict(state)
    for group, lr in zip(optimizer.param_groups, lrs):
        group["lr"] = lr
        # LambdaLR only sets initial_lr when absent: a stale one would keep the previous chunk's lr.
        group.pop("initial_lr", None)


def accepts_logits_to_keep(model: torch.nn.Module) -> bool:
    """True when the (base) model's forward takes logits_to_keep, which transformers' causal LMs accept as a tensor
    of positions (4.50+); Unsloth's patched forwards and custom models may not."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    return "logits_to_keep" in inspect.signature(base.forward).parameters


class AnswerOnlyRefused(ValueError):
    """The forward took logits_to_keep as positions but did not return logits for exactly those positions."""


@dataclasses.dataclass
class AnswerOnlyGuard:
    """Batches whose loss fell back from the answer-only head to the Trainer's own, and why; shared by every chunk's
    Trainer so a forward found to mishandle positions is not tried again (its right-shaped output is not trusted)."""

    fallbacks: int = 0
    reason: str | None = None

    def fall_back(self, reason: str | None = None) -> None:
        """Count one batch on the full loss; the first reason is kept and printed once."""
        if reason and self.reason is None:
            self.reason = reason
            print(f"[train] warning: answer-only logits off: {reason}; every batch from here takes the Trainer's "
                  "full loss (counted as answer_only_fallbacks in the summary)", flush=True)
        self.fallbacks += 1


def _vocab_size(model: torch.nn.Module) -> int | None:
    """Rows of the output embedding (the LM head's width), else config.vocab_size, else None."""
    model = getattr(model, "module", model)  # DDP wraps the model the Trainer hands to compute_loss
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    weight = getattr(head, "weight", None)
    return int(weight.shape[0]) if weight is not None else getattr(getattr(model, "config", None), "vocab_size", None)


def check_kept_logits(logits: Any, batch: int, kept: int, vocab: int | None) -> None:
    """Raise AnswerOnlyRefused unless logits is a (batch, kept, vocab) tensor (vocab unchecked when unknown)."""
    got = tuple(logits.shape) if torch.is_tensor(logits) else None
    ok = got is not None and len(got) == 3 and got[:2] == (batch, kept) and vocab in (None, got[2])
    if not ok:
        raise AnswerOnlyRefused(f"the forward took logits_to_keep={kept} positions but returned logits of shape "
                                f"{list(got) if got is not None else type(logits).__name__}, not "
                                f"[{batch}, {kept}, {vocab if vocab is not None else 'vocab'}] (a patched forward, "
                                "e.g. Unsloth's, that drops a tensor of positions)")


def answer_only_loss(model: torch.nn.Module, inputs: dict, num_items_in_batch: Any = None) -> torch.Tensor:
    """The causal-LM loss with the LM head run only at positions followed by a label.

    The answer is a few tokens after a long prompt, so the model's usual loss spends the vocabulary projection
    (and its fp32 logits, batch x length x vocabulary) on positions whose labels are ignored; their cross-entropy
    terms are zero and so are their gradients. Here only the columns where some row has a label are projected:
    the loss is the same sum over labelled tokens divided by num_items_in_batch (or their mean when it is None),
    as transformers' ForCausalLMLoss computes it, and so are the gradients. Raises AnswerOnlyRefused when the
    forward accepts logits_to_keep but does not honour the positions (signature alone cannot tell)."""
    from helpers.train.data import IGNORE_INDEX
    targets = inputs["labels"][:, 1:]  # the token each position predicts
    cols = (targets != IGNORE_INDEX).any(dim=0).nonzero().squeeze(-1)
    rest = {k: v for k, v in inputs.items() if k != "labels"}
    logits = getattr(model(**rest, logits_to_keep=cols), "logits", None)
    check_kept_logits(logits, targets.shape[0], len(cols), _vocab_size(model))
    logits = logits.float()
    picked = targets[:, cols].to(logits.device)
    reduction = "sum" if num_items_in_batch is not None else "mean"
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), picked.reshape(-1),
                                             ignore_index=IGNORE_INDEX, reduction=reduction)
    if num_items_in_batch is not None:
        loss = loss / (num_items_in_batch.to(loss.device) if torch.is_tensor(num_items_in_batch) else num_items_in_batch)
    return loss


class ChunkTrainer(Trainer):
    """Trainer for one curriculum chunk: DoRA magnitude lr group, optimizer state carried across chunks,
    a count of real (non-pad) tokens for throughput, and (answer_only_logits) the LM head only where it is scored,
    falling back to the Trainer's own loss, counted in answer_only_guard, when the forward does not honour it."""

    def __init__(self, *args: Any, magnitude_lr_multiplier: float = 1.0, optimizer_state: dict | None = None,
                 token_counter: Any = None, answer_only_logits: bool = False,
                 answer_only_guard: AnswerOnlyGuard | None = None, **kwargs: Any):
        self.magnitude_lr_multiplier = float(magnitude_lr_multiplier)
        self.optimizer_state = optimizer_state
        self.token_counter = token_counter
        self.answer_only_logits = answer_only_logits
        self.answer_only_guard = answer_only_guard if answer_only_guard is not None else AnswerOnlyGuard()
        self.raw_optimizer: torch.optim.Optimizer | None = None
        super().__init__(*args, **kwargs)

    def create_optimizer(self, model: torch.nn.Module | None = None) -> torch.optim.Optimizer:
        """The configured optimizer over param_groups(); previous chunk's state loaded when given."""
        if self.optimizer is None:
            opt_model = self.model if model is None else model
            groups = param_groups(opt_model, lr=self.args.learning_rate, weight_decay=self.args.weight_decay,
                                  magnitude_lr_multiplier=self.magnitude_lr_multiplier,
                                  decay_names=set(self.get_decay_parameter_names(opt_model)))
            cls, kwargs = Trainer.get_optimizer_cls_and_kwargs(self.args, opt_model)
            kwargs = {k: v for k, v in kwargs.items() if k not in ("params", "model")}
            self.optimizer = cls(groups, **kwargs)
            if self.optimizer_state is not None:
                load_optimizer_state(self.optimizer, self.optimizer_state)
            self.raw_optimizer = self.optimizer
        return self.optimizer

    def training_step(self, model: torch.nn.Module, inputs: dict, *args: Any, **kwargs: Any) -> torch.Tensor:
        """Count real tokens (attention_mask sum), then the usual step."""
        if self.token_counter is not None and "attention_mask" in inputs:
            self.token_counter.add(int(inputs["attention_mask"].sum()))
        return super().training_step(model, inputs, *args, **kwargs)

    def compute_loss(self, model: torch.nn.Module, inputs: dict, return_outputs: bool = False,
                     num_items_in_batch: Any = None) -> Any:
        """answer_only_loss() while training; the Trainer's own loss otherwise (and whenever outputs are wanted), and
        for every batch once the forward has returned logits of the wrong shape (counted, never a crash)."""
        wanted = self.answer_only_logits and model.training and not return_outputs and "labels" in inputs
        if wanted and self.answer_only_guard.reason is None:
            try:
                return self._across_devices(answer_only_loss(model, inputs, num_items_in_batch), num_items_in_batch)
            except AnswerOnlyRefused as exc:
                self.answer_only_guard.fall_back(str(exc))
        elif wanted:
            self.answer_only_guard.fall_back()
        return super().compute_loss(model, inputs, return_outputs=return_outputs,
                                    num_items_in_batch=num_items_in_batch)

    def _across_devices(self, loss: torch.Tensor, num_items_in_batch: Any) -> torch.Tensor:
        """As Trainer.compute_loss: a loss normalised by the global token count is scaled back up across processes."""
        if getattr(self.args, "average_tokens_across_devices", False) and num_items_in_batch is not None:
            loss = loss * self.accelerator.num_processes
        return loss
