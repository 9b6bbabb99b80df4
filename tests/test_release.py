"""helpers.models.release: a released model is really gone (CPU), the accelerator's cache is emptied when there is
one (faked here), and a stage that loads its own model releases it before returning."""

from __future__ import annotations

import dataclasses
import gc

import pytest
import torch

from helpers import config, models
from helpers.models import release

from _tiny import cpu_recommendation, one_torch_thread, tiny_model_dir, write_curriculum

_one_thread = pytest.fixture(scope="module", autouse=True)(one_torch_thread)
GIB = 1024 ** 3


def _peft():
    smoke = config.load_profile("smoke")
    model, tok, _ = models.load_model(tiny_model_dir(), model=dataclasses.replace(smoke.model, gradient_checkpointing=False),
                                      for_training=True)
    lora = dataclasses.replace(smoke.models["model1_lora"], r=4, alpha=8.0, dropout=0.0)
    return models.add_adapter(model, lora, ["q_proj", "v_proj"]), tok


def test_a_released_model_held_in_a_cycle_is_dead_after_free_memory(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    model, _ = _peft()
    holder = {"model": model}
    holder["self"] = holder  # a reference cycle: refcounting alone never frees it
    gone = release.watch(model, None)  # None (an agent that loaded nothing) is skipped
    gc.disable()  # so that only free_memory's collection can free it
    try:
        del model, holder
        assert gone[0]() is not None
        report = release.free_memory(*gone, quiet=True)
    finally:
        gc.enable()
    assert len(gone) == 1 and gone[0]() is None and report["still_alive"] == []
    zero = {"allocated_gib": 0.0, "reserved_gib": 0.0}
    assert report["before"] == report["after"] == zero and report["freed_gib"] == 0.0  # no accelerator: zeros


def test_a_model_still_named_somewhere_is_reported_alive(capsys):
    model, _ = _peft()
    kept = [model]  # e.g. an agent that still holds it
    gone = release.watch(model)
    del model
    report = release.free_memory(*gone, label="test", quiet=True)
    assert report["still_alive"] == [type(kept[0]).__name__] and gone[0]() is kept[0]
    assert "[release] test: warning: still referenced after del: PeftModelForCausalLM" in capsys.readouterr().out


def test_on_an_accelerator_it_synchronizes_then_empties_the_cache(monkeypatch, capsys):
    calls, reserved = [], iter([10 * GIB, 2 * GIB])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: calls.append("synchronize"))
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: calls.append("empty_cache"))
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda *a: 1 * GIB)
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda *a: next(reserved))
    collect = gc.collect
    monkeypatch.setattr(release.gc, "collect", lambda *a: calls.append("gc") or collect())
    report = release.free_memory(label="between loads")
    assert calls == ["gc", "synchronize", "empty_cache"]
    assert report["before"] == {"allocated_gib": 1.0, "reserved_gib": 10.0}
    assert report["after"] == {"allocated_gib": 1.0, "reserved_gib": 2.0} and report["freed_gib"] == 8.0
    assert "[release] between loads: accelerator reserved 10.00 -> 2.00 GiB" in capsys.readouterr().out


def test_train_adapter_releases_the_model_it_loaded_and_keeps_a_prepared_one(tmp_path, monkeypatch):
    import helpers.train as train
    cur = write_curriculum(tmp_path / "c.jsonl", 1, 4)
    cfg = config.load_profile("smoke", "t", {"model.base": str(tiny_model_dir()), "train.batch_size": 4,
                                             "train.epochs_per_chunk": 1})
    watched, reports, prepare, free = [], [], train.prepare_adapter, release.free_memory

    def spy_prepare(*args, **kwargs):
        out = prepare(*args, **kwargs)
        watched.extend(release.watch(out[0]))  # weakly: the spy must not keep the model alive
        return out

    monkeypatch.setattr("helpers.train.run.prepare_adapter", spy_prepare)  # where train_adapter finds it
    monkeypatch.setattr(release, "free_memory", lambda *a, **k: reports.append({**free(*a, **k), "watched": len(a)}))
    train.train_adapter(cfg, "model1_lora", curriculum_path=cur, out_dir=tmp_path / "own",
                        recommendation=cpu_recommendation(), progress=False)
    assert watched[0]() is None  # gone before train_adapter returned
    assert [(r["watched"], r["still_alive"]) for r in reports] == [(1, [])]  # it watched the model and saw it go
    prepared = prepare(cfg, "model1_lora", cpu_recommendation())
    train.train_adapter(cfg, "model1_lora", curriculum_path=cur, out_dir=tmp_path / "prepared",
                        recommendation=cpu_recommendation(), progress=False, prepared=prepared)
    assert len(reports) == 1 and prepared[2]["trained"]  # the caller's model: kept, not released
