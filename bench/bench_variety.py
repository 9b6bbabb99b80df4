"""How varied each puzzle family's questions read (helpers.puzzles.variety), per family and level.

    python bench/bench_variety.py [--n 200] [--levels 3] [--seed 26] [--kinds family ...] [--markdown] [--examples]
    python bench/bench_variety.py --blind [--n 300]   # docs/results.md, "Blind strategies"

Per family and level, over the first n puzzles of catalogue.generate(n, seed, kinds=(kind,), levels=(level,)):
distinct openings (first 4 words) and sentence templates (names, numbers, relation words, attribute values and
letters masked), the fewest and median wordings per clue kind, the question forms asked (%) and the most common one
among the hardest of each 4 (what the Q-agent asks), the share of names that are single letters, and the key's rank
among the options by length (and, where all four are numbers, by value), in % at ranks 0-3 (0 = shortest /
smallest; uniform is 25 each). `--examples` prints each family's first puzzle at the first level asked, with its
key. `--blind` plays helpers.puzzles.blind's option strategies instead, over puzzles.generate(n, seed=26,
kinds=(kind,)) (the three levels cycling): hit rates in %, chance 25. `--unnamed` measures how often each seating
family's key is a person never mentioned after the seating list and rewrites helpers/puzzles/seating/unnamed_table.py
(seating.unnamed balances the options by it).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from helpers import puzzles  # noqa: E402
from helpers.puzzles import blind, catalogue, variety  # noqa: E402
from helpers.puzzles.kinship import key_shares  # noqa: E402
from helpers.puzzles.seating import unnamed  # noqa: E402


def run(n: int = 200, seed: int = 26, kinds: tuple[str, ...] = puzzles.KINDS, levels: tuple[int, ...] = (3,),
        workers: int | None = None) -> list[dict]:
    """variety.measure for every family x level, with the seconds each took."""
    rows = []
    for kind in kinds:
        for level in levels:
            t0 = time.perf_counter()
            rows.append({**variety.measure(kind, level, n, seed, workers), "secs": time.perf_counter() - t0})
    return rows


def _ranks(shares: list[float]) -> str:
    """Rank shares as "25/25/25/25", or "-" when none."""
    return "/".join(f"{s:.0f}" for s in shares) if shares else "-"


def _forms(forms: dict[str, float]) -> str:
    """Question-form shares, largest first ("who 60, statement 40")."""
    return ", ".join(f"{f} {p:.0f}" for f, p in forms.items())


def _numeric(row: dict) -> str:
    """How many questions had four numeric options, when any did (" (n=40)")."""
    return f" (n={row['numeric']})" if row["numeric"] else ""


def markdown(rows: list[dict]) -> str:
    """One table row per family and level."""
    lines = ["| family | level | n | openings | templates | wordings per clue kind (fewest / median) | "
             "question forms (%) | hardest of 4: top form / top question sentence (%) | letter names (%) | key rank by length (%) | "
             "key rank by value (%) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| `{r['kind']}` | {r['level']} | {r['n']} | {r['openings']} | {r['templates']} | "
                     f"{r['min_clue_wordings']} / {r['median_clue_wordings']:g} | {_forms(r['forms'])} | "
                     f"{_forms(dict(list(r['hardest_forms'].items())[:1]))} / "
                     f"{next(iter(r['hardest_questions'].values()), 0):.0f} | "
                     f"{r['letter_names']:.0f} | {_ranks(r['rank_by_length'])} | "
                     f"{_ranks(r['rank_by_value'])}{_numeric(r)} |")
    return "\n".join(lines)


def examples(seed: int, kinds: tuple[str, ...], level: int) -> str:
    """Each family's first puzzle at `level`, verbatim, with its choices and key."""
    out = []
    for kind in kinds:
        rec = puzzles.generate(1, seed=seed, kinds=(kind,), levels=(level,), workers=1)[0]
        choices = " ".join(f"{'ABCD'[i]}) {c}" for i, c in enumerate(rec["choices"]))
        out.append(f"- `{kind}`: {rec['question']} {choices} -> {'ABCD'[rec['answer']]}")
    return "\n".join(out)


def blind_rates(n: int, seed: int, kinds: tuple[str, ...], workers: int | None = None) -> str:
    """Each option strategy's hit rate (%) per family, and the usual-key strategy's (fitted on the even-numbered
    questions, played on the odd), as docs/results.md tabulates them; the which-expression and which-statement
    questions apart too."""
    names = list(blind.PLAYED_STRATEGIES)
    lines = ["| family | " + " | ".join(names) + " | usual_key |", "|---|" + "---|" * (len(names) + 1)]
    for kind in kinds:
        recs = puzzles.generate(n, seed=seed, kinds=(kind,), workers=workers)
        groups = [(f"`{kind}`", recs)]
        forms = (("which", "which-expression"), ("statement", "which-statement"), ("true", "which-statement"))
        for form, label in forms:
            asked = [r for r in recs if r["puzzle"]["question"][0] == form]
            if asked:
                groups.append((f"`{kind}` ({len(asked)} {label})", asked))
        for label, group in groups:
            rates = blind.play(group, random.Random(f"blind:{kind}"))
            usual = blind.play_usual_key(group, random.Random(f"usual:{kind}"))
            lines.append(f"| {label} | " + " | ".join(f"{100 * rates[k]:.0f}" for k in names) + f" | {100 * usual:.0f} |")
    return "\n".join(lines)


TABLE = ROOT / "helpers" / "puzzles" / "kinship" / "key_share_table.py"


KEY_SHARE_N = 1500  # builds per family and level for the raw shares and for each offer round
OFFER_ROUNDS = 4  # fitting rounds of the offer factors
OFFER_STEP = 0.8  # each round multiplies a word's factor by (its keyed / offered rate over 1/4) ** OFFER_STEP
OFFER_RANGE = (0.1, 10.0)  # the factors are kept inside this range
MIN_OFFERED = 20  # a word offered fewer times in a round keeps its factor


def fit_offers(shares: dict, n: int, rounds: int = OFFER_ROUNDS) -> dict:
    """The offer factors, fitted over `rounds` rounds of n builds per family and level: a word keyed more than 1 time in
    4 that it is offered is offered more next round, and the other way round."""
    offer: dict = {kind: {level: {} for level in puzzles.LEVELS} for kind in shares}
    for r in range(rounds):
        key_shares.use(shares, offer)
        gap, offers = 0.0, 0
        for kind in shares:
            for level in puzzles.LEVELS:
                for w, (k, o) in variety.key_offers(kind, level, n, seed=28 + r).items():
                    if o < MIN_OFFERED:
                        continue
                    rate = (k + 1) / (o + 4)  # smoothed towards 1/4
                    gap, offers = gap + o * abs(rate - 0.25), offers + o
                    f = offer[kind][level].get(w, 1.0) * (rate / 0.25) ** OFFER_STEP
                    offer[kind][level][w] = round(min(max(f, OFFER_RANGE[0]), OFFER_RANGE[1]), 3)
        print(f"[key-shares] round {r + 1}: a word's keyed / offered rate is {gap / max(1, offers):.1%} from 1 in 4 "
              "(mean over offers)", flush=True)
    return offer


def _table_lines(name: str, tables: dict) -> list[str]:
    """A {kind: {level: {word: value}}} dict as Python source lines, at most 118 characters each."""
    lines = [f"{name}: dict[str, dict[int, dict[str, float]]] = {{"]
    for kind, by_level in tables.items():
        lines.append(f"    {kind!r}: {{")
        for level, table in by_level.items():
            lines.append(f"        {level}: {{")
            line = "           "
            for item in (f" {w!r}: {s}," for w, s in table.items()):
                if len(line) + len(item) > 118:
                    lines.append(line)
                    line = "           "
                line += item
            if line.strip():
                lines.append(line)
            lines.append("        },")
        lines.append("    },")
    lines.append("}")
    return lines


def write_key_shares(n: int) -> str:
    """Measure every word-keyed family's raw key shares per level (variety.key_shares), fit the offer factors
    (fit_offers) and rewrite key_share_table.py."""
    shares = {kind: {level: variety.key_shares(kind, level, n) for level in puzzles.LEVELS}
              for kind in variety.WORD_KEYED}
    offer = fit_offers(shares, n)
    head = ['"""Generated by `python bench/bench_variety.py --key-shares`: do not edit by hand (see key_shares.py)."""',
            ""]
    TABLE.write_text("\n".join(head + _table_lines("SHARES", shares) + _table_lines("OFFER", offer)) + "\n")
    return f"wrote {TABLE.relative_to(ROOT)}: {n} relation questions per family and level, {OFFER_ROUNDS} offer rounds"


UNNAMED_TABLE = ROOT / "helpers" / "puzzles" / "seating" / "unnamed_table.py"
UNNAMED_N = 80  # builds per seating family, level and name form


def unnamed_table_text(rates: dict) -> str:
    """unnamed_table.py's source for the measured rates."""
    head = ['"""Generated by `python bench/bench_variety.py --unnamed`: do not edit by hand (see unnamed.py)."""', "",
            "# kind -> level -> question form -> (share of name questions whose key is unmentioned after the opening,",
            "# share of the others with an unmentioned wrong candidate)"]
    lines = _table_lines("RATES", rates)
    lines[0] = "RATES: dict[str, dict[int, dict[str, tuple[float, float]]]] = {"
    return "\n".join(head + lines) + "\n"


def write_unnamed(n: int, kinds: tuple[str, ...]) -> str:
    """Measure the raw rates seating.unnamed balances (variety.unnamed_rates, its table unused) for every seating
    family, level and form whose options are names, and rewrite unnamed_table.py (the families not measured keep
    their rows)."""
    from helpers.puzzles.seating import unnamed_table
    rates: dict = {k: v for k, v in unnamed_table.RATES.items() if k not in kinds}
    unnamed.use({})
    for kind in (k for k in kinds if k.startswith("seating_")):
        for level in puzzles.LEVELS:
            for form in catalogue.question_forms(kind, level):
                if form in variety.SEATING_NAME_FORMS:
                    measured = variety.unnamed_rates(kind, level, form, n)
                    print(f"[unnamed] {kind} {level} {form}: {measured}", flush=True)
                    if measured:
                        rates.setdefault(kind, {}).setdefault(level, {})[form] = measured
    rates = {k: rates[k] for k in puzzles.KINDS if k in rates}  # the catalogue's order, whichever were measured
    UNNAMED_TABLE.write_text(unnamed_table_text(rates))
    return f"wrote {UNNAMED_TABLE.relative_to(ROOT)}: {n} builds per seating family, level and name form"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--levels", type=int, nargs="+", default=[3], choices=puzzles.LEVELS)
    ap.add_argument("--kinds", nargs="+", default=list(puzzles.KINDS), choices=puzzles.KINDS)
    ap.add_argument("--workers", type=int, default=None, help="build processes (default: one per 500 puzzles)")
    ap.add_argument("--markdown", action="store_true", help="the table only, as docs/data.md shows it")
    ap.add_argument("--examples", action="store_true")
    ap.add_argument("--blind", action="store_true", help="blind strategies' hit rates instead (levels cycling)")
    ap.add_argument("--key-shares", action="store_true",
                    help=f"measure how often each relation word is a kinship key, fit the offer factors "
                         f"({KEY_SHARE_N} builds per family and level, --n is not used) and rewrite "
                         "helpers/puzzles/kinship/key_share_table.py")
    ap.add_argument("--unnamed", action="store_true",
                    help=f"measure how often a seating key is never mentioned after the opening ({UNNAMED_N} builds "
                         "per family, level and name form) and rewrite helpers/puzzles/seating/unnamed_table.py")
    args = ap.parse_args(argv)
    if args.unnamed:
        print(write_unnamed(UNNAMED_N, tuple(args.kinds)))
        return 0
    if args.key_shares:
        print(write_key_shares(KEY_SHARE_N))
        return 0
    if args.blind:
        print(blind_rates(args.n, args.seed, tuple(args.kinds), args.workers))
        return 0
    rows = run(args.n, args.seed, tuple(args.kinds), tuple(args.levels), args.workers)
    print(markdown(rows))
    if not args.markdown:
        print("\nseconds: " + ", ".join(f"{r['kind']}/{r['level']} {r['secs']:.1f}" for r in rows))
    if args.examples:
        print("\n" + examples(args.seed, tuple(args.kinds), args.levels[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
