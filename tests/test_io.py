"""helpers.io: atomic writes (whole file or nothing, normal permissions) and located JSONL errors."""

from __future__ import annotations

import os
import stat

import pytest

from helpers import io


def test_atomic_write_replaces_whole_and_leaves_no_temp(tmp_path):
    path = tmp_path / "a" / "x.json"
    io.write_json(path, {"n": 1})
    io.write_json(path, {"n": 2})
    assert io.read_json(path) == {"n": 2}
    assert [p.name for p in path.parent.iterdir()] == ["x.json"]


def test_atomic_write_gives_the_umask_permissions_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        io._UMASK = 0o022
        path = io.atomic_write_text(tmp_path / "r.md", "# report")
        assert stat.S_IMODE(path.stat().st_mode) == 0o644  # readable by others, like any file the user writes
    finally:
        os.umask(old)
        io._UMASK = io._current_umask()


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = io.atomic_write_text(tmp_path / "keep.txt", "old")

    def boom(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        io.atomic_write_text(path, "new")
    assert path.read_text() == "old" and len(list(tmp_path.iterdir())) == 1


def test_bad_jsonl_line_names_file_and_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('{"a": 1}\n{"a": \n')
    with pytest.raises(io.InputError) as info:
        io.read_jsonl(path)
    assert str(path) in str(info.value) and "line 2" in str(info.value)


def test_gc_paused_restores_the_collector_as_it_found_it():
    import gc

    was = gc.isenabled()
    try:
        gc.enable()
        with pytest.raises(RuntimeError), io.gc_paused():
            assert not gc.isenabled()
            raise RuntimeError("stage failed")
        assert gc.isenabled()  # back on after an error too
        gc.disable()
        with io.gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        (gc.enable if was else gc.disable)()


def test_write_jsonl_writes_what_json_dumps_would(tmp_path):
    import json

    recs = [{"q": "Zoë's café — naïve?", "n": 1.5, "l": [1, None, True]}, {}]
    io.write_jsonl(tmp_path / "x.jsonl", recs)
    want = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in recs)
    assert (tmp_path / "x.jsonl").read_text(encoding="utf-8") == want
