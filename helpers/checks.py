"""The checks a profile key carries: each returns the value (cast where allowed) or raises ValueError saying what
was expected; helpers.config turns that into an InputError naming the file and the dotted key."""

from __future__ import annotations

from typing import Any, Callable

from helpers import edition as edition_mod

Check = Callable[[Any], Any]  # returns the value (cast where allowed) or raises ValueError saying what was expected


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def integer(low: int | None = None, high: int | None = None) -> Check:
    """An int (not a bool), at least `low` and at most `high`."""
    def check(value: Any) -> int:
        if not _is_int(value):
            raise ValueError(f"expected a whole number, got {value!r}")
        if low is not None and value < low:
            raise ValueError(f"expected at least {low}, got {value}")
        if high is not None and value > high:
            raise ValueError(f"expected at most {high}, got {value}")
        return value
    return check


def number(low: float | None = None, high: float | None = None) -> Check:
    """An int or float (not a bool) inside [low, high], returned as a float."""
    def check(value: Any) -> float:
        if isinstance(value, str) and _looks_numeric(value):
            raise ValueError(f"expected a number, got the text {value!r}: YAML reads a number written without a dot "
                             f"(1e-4) as text; write it with one (1.0e-4)")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"expected a number, got {value!r}")
        if (low is not None and value < low) or (high is not None and value > high):
            raise ValueError(f"expected a number in [{low if low is not None else '-inf'}, "
                             f"{high if high is not None else 'inf'}], got {value}")
        return float(value)
    return check


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def flag(value: Any) -> bool:
    """true or false."""
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {value!r}")
    return value


def flag_or_auto(value: Any) -> bool | str:
    """true, false or auto (decided by the env check)."""
    if value == "auto" or isinstance(value, bool):
        return value
    raise ValueError(f"expected true, false or auto, got {value!r}")


def or_auto(inner: Check) -> Check:
    """auto (derived by the kit from other settings or a measurement), or what `inner` accepts."""
    def check(value: Any) -> Any:
        if value == "auto":
            return value
        try:
            return inner(value)
        except ValueError as exc:
            raise ValueError(f"{exc}, or auto") from None
    return check


def text(value: Any) -> str:
    """A non-empty string."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected text, got {value!r}")
    return value


def one_of(*choices: str) -> Check:
    """One of the given strings."""
    def check(value: Any) -> str:
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}, got {value!r}")
        return value
    return check


def puzzle_kind(value: Any) -> str:
    """A puzzle family helpers.puzzles generates (imported on use: numpy is not needed to read a profile)."""
    from helpers import puzzles
    return one_of(*puzzles.KINDS)(value)


def one_of_int(*choices: int) -> Check:
    """One of the given whole numbers."""
    def check(value: Any) -> int:
        if not _is_int(value) or value not in choices:
            raise ValueError(f"expected one of {', '.join(map(str, choices))}, got {value!r}")
        return value
    return check


def optional(inner: Check) -> Check:
    """null, or what `inner` accepts."""
    return lambda value: None if value is None else inner(value)


def list_of(inner: Check) -> Check:
    """A list whose every item `inner` accepts."""
    def check(value: Any) -> list:
        if not isinstance(value, list):
            raise ValueError(f"expected a list, got {value!r}")
        return [inner(v) for v in value]
    return check


def edition_name(value: Any) -> str:
    """An edition: a name under data/editions/ or a path to a team's own file, which must load (a bad key in it is
    named with its file)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"expected an edition's name ({', '.join(edition_mod.names())}) or a path, got {value!r}")
    edition_mod.load(value)
    return value
