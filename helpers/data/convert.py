"""Open-ended questions to multiple choice, with distractors chosen by the answer's type, no model needed.

The seeds converted 18,518 open-ended questions (37% of 50,000) this way in 20 s; this module does it
in a fraction of a second. Types: number (keeps decimals, units, separators), year (and decade / BC),
date (ISO, numeric with / . -, month-name forms; the distractor keeps the format), person, place and
phrase. Numbers, years and dates get near values; person, place and phrase answers get other answers
of the same type drawn from a pool built from every open-ended answer in the build, most alike first:
same question frame (first four words, "what is the opposite"), then same topic or source, then same
shape (capitalisation, word count), then any. The only bundled data is a small gazetteer (continents, countries,
US states, large cities) used to recognise places and, with a short list of famous people, to top up
a person or place pool that has fewer than `MIN_POOL` answers; a phrase pool is never topped up.
Every question draws from its own RNG seeded from (seed, question id), so its choices depend on
neither the input order nor the other questions, except through the pool.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import random
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterator

from helpers.records import RecordError, make_record, normalize_text

MAX_ANSWER_CHARS = 200  # a longer "answer" is a passage, not a choice; same-type distractors would give it away
MIN_POOL = 12           # below this many distinct person/place answers, the bundled lists top the pool up
PLACES = (
    "Africa|Antarctica|Asia|Australia|Europe|North America|South America|Oceania|Afghanistan|Albania|Algeria|"
    "Argentina|Austria|Bangladesh|Belgium|Bolivia|Brazil|Bulgaria|Cambodia|Canada|Chile|China|Colombia|Croatia|"
    "Cuba|Cyprus|Czech Republic|Denmark|Egypt|England|Ethiopia|Finland|France|Germany|Ghana|Greece|Hungary|"
    "Iceland|India|Indonesia|Iran|Iraq|Ireland|Israel|Italy|Jamaica|Japan|Jordan|Kenya|Lebanon|Libya|Malaysia|"
    "Malta|Mexico|Monaco|Mongolia|Morocco|Nepal|Netherlands|New Zealand|Nigeria|North Korea|Norway|Pakistan|Peru|"
    "Philippines|Poland|Portugal|Romania|Russia|Saudi Arabia|Scotland|Serbia|Singapore|South Africa|South Korea|"
    "Spain|Sri Lanka|Sudan|Sweden|Switzerland|Syria|Taiwan|Tanzania|Thailand|Tunisia|Turkey|Uganda|Ukraine|"
    "United Kingdom|United States|Uruguay|Venezuela|Vietnam|Wales|Zimbabwe|Alabama|Alaska|Arizona|California|"
    "Colorado|Florida|Georgia|Hawaii|Illinois|Kansas|Kentucky|Louisiana|Maine|Massachusetts|Michigan|Minnesota|"
    "Mississippi|Missouri|Montana|Nebraska|Nevada|New Jersey|New Mexico|New York|Ohio|Oklahoma|Oregon|"
    "Pennsylvania|Tennessee|Texas|Utah|Vermont|Virginia|Washington|Wisconsin|Wyoming|Amsterdam|Athens|Bangkok|"
    "Barcelona|Beijing|Berlin|Boston|Brussels|Budapest|Buenos Aires|Cairo|Chicago|Copenhagen|Delhi|Dublin|"
    "Edinburgh|Geneva|Hong Kong|Istanbul|Jerusalem|Lisbon|London|Los Angeles|Madrid|Manchester|Melbourne|"
    "Mexico City|Milan|Montreal|Moscow|Mumbai|Munich|Nairobi|Naples|Oslo|Ottawa|Paris|Prague|Rio de Janeiro|Rome|"
    "San Francisco|Seoul|Shanghai|Stockholm|Sydney|Tokyo|Toronto|Venice|Vienna|Warsaw|Liverpool|Glasgow|Florence"
).split("|")
PEOPLE = (
    "William Shakespeare|Charles Dickens|Jane Austen|Leo Tolstoy|Mark Twain|Albert Einstein|Isaac Newton|"
    "Charles Darwin|Marie Curie|Galileo Galilei|Leonardo da Vinci|Pablo Picasso|Vincent van Gogh|Claude Monet|"
    "Wolfgang Amadeus Mozart|Ludwig van Beethoven|Johann Sebastian Bach|Napoleon Bonaparte|Julius Caesar|"
    "Winston Churchill|Abraham Lincoln|George Washington|Queen Victoria|Elizabeth I|Henry VIII|Alexander the Great|"
    "Nelson Mandela|Mahatma Gandhi|Christopher Columbus|Ferdinand Magellan|James Cook|Thomas Edison|Nikola Tesla|"
    "Alfred Hitchcock|Charlie Chaplin|Elvis Presley|John Lennon|Paul McCartney|Agatha Christie|Ernest Hemingway"
).split("|")
_PLACE_KEYS = frozenset(normalize_text(p) for p in PLACES)
# English names spelled out: calendar.month_name follows the process locale, and answers are English
MONTH_NAMES = ("", "January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December")
MONTH_ABBR = ("",) + tuple(m[:3] for m in MONTH_NAMES[1:])
_FULL = frozenset(m.lower() for m in MONTH_NAMES[1:])
_MONTHS = {m.lower(): i for i, m in enumerate(MONTH_NAMES) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(MONTH_ABBR) if m})
_MONTHS["sept"] = 9
_MON = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ORD = r"(?P<ord>st|nd|rd|th)?"
_DATES = [re.compile(p, re.I) for p in (
    r"^(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})$",
    r"^(?P<a>\d{1,2})(?P<sep>[/.\-])(?P<b>\d{1,2})(?P=sep)(?P<y>\d{4}|\d{2})$",
    rf"^{_MON}\s+(?P<d>\d{{1,2}}){_ORD},?\s+(?P<y>\d{{4}})$",
    rf"^(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MON},?\s+(?P<y>\d{{4}})$",
    rf"^{_MON},?\s+(?P<y>\d{{4}})$",
    rf"^{_MON}\s+(?P<d>\d{{1,2}}){_ORD}$",
    rf"^(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MON}$",
)]
_YEAR = re.compile(r"^(?P<y>\d{1,4})(?P<era>\s?(?:BC|BCE|AD|CE|B\.C\.|A\.D\.))?$|^(?P<dec>\d{2,3}0)(?P<s>'?s)$", re.I)
_NUMBER = re.compile(r"^(?P<pre>[$£€¥]\s?)?(?P<sign>[-+−])?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?"
                     r"(?P<post>\s?%|\s?°[CF]?|\s[a-z][a-z./²³]*(?:\s[a-z]+)?|[a-z]{1,3})?$")
_YEAR_Q = re.compile(r"\b(what|which|in)\s+year\b|\bwhen\b", re.I)
_COUNT_Q = re.compile(r"\bhow (many|much|far|long|tall|high|old|deep)\b|\bnumber of\b|\bpopulation\b", re.I)
_PERSON_Q = re.compile(
    r"^\W*(who|whom|whose)\b|\bwho\b|\b(which|what|name the|this)\s+(?:\w+\s+){0,2}?(man|woman|person|actor|actress|"
    r"singer|author|writer|novelist|poet|composer|painter|artist|president|prime minister|king|queen|emperor|"
    r"scientist|inventor|player|footballer|cricketer|golfer|boxer|driver|explorer|philosopher|playwright|director|"
    r"architect|saint|pope|comedian|musician|presenter|politician|leader|general|astronaut|mathematician|"
    r"physicist|chemist|economist|designer|sculptor|dancer|athlete|chef|novelist|lyricist|manager|monarch)s?\b", re.I)
_PLACE_Q = re.compile(
    r"\bwhere\b|\bcapital of\b|\b(which|what|name the|this)\s+(?:\w+\s+){0,2}?(country|city|town|village|state|"
    r"county|province|capital|island|river|lake|sea|ocean|mountain|continent|region|nation|port|desert|volcano|"
    r"bay|canal|peninsula|kingdom|republic|street|district|airport|stadium|racecourse)s?\b", re.I)
_TITLE = re.compile(r"^(sir|dame|dr|lord|lady|saint|st|king|queen|prince|princess|president|pope|general)\.?\s", re.I)
_PARTICLES = frozenset("de da di del della van von der le la du bin al of the y upon on and in sur".split())


@dataclass
class Pool:
    """Distinct answers per bucket (type + question frame, topic or shape), sorted; O(1) per draw."""

    buckets: dict[tuple, list[tuple[str, str]]] = field(default_factory=dict)
    types: Counter = field(default_factory=Counter)  # answer type of every item seen


def _name_like(text: str) -> bool:
    words = text.replace(".", ". ").split()
    return 0 < len(words) <= 5 and words[0][0].isupper() and all(w[0].isupper() or w.lower() in _PARTICLES
                                                                  for w in words)


def classify(answer: str, question: str = "") -> str:
    """Answer type: 'number', 'year', 'date', 'person', 'place' or 'phrase' ('' for an empty answer)."""
    text = answer.strip()
    if not text:
        return ""
    if text[0].isdigit() or text[:3].lower() in _MONTHS or text[:4].lower() in _MONTHS:
        if any(p.match(text) for p in _DATES):
            return "date"
        y = _YEAR.match(text)
        four = y and len(y["y"] or "") == 4 and 1000 <= int(y["y"]) <= 2100 and not _COUNT_Q.search(question)
        if y and (y["dec"] or y["era"] or four or (len(y["y"] or "") == 3 and _YEAR_Q.search(question))):
            return "year"
    if _NUMBER.match(text):
        return "number"
    if normalize_text(text) in _PLACE_KEYS:
        return "place"
    name_like = _name_like(text)  # before the long question regexes: most phrase answers are not names
    if _TITLE.match(text) or (name_like and _PERSON_Q.search(question)):
        return "person"
    if name_like and _PLACE_Q.search(question):
        return "place"
    return "phrase"


def _shape(text: str) -> tuple[bool, int]:
    return text[:1].isupper(), min(len(text.split()), 4)


def _key(text: str) -> str:
    """normalize_text, then without a leading article, so 'The Beatles' and 'Beatles' count as equal."""
    return _strip_article(normalize_text(text))


def _strip_article(key: str) -> str:
    for art in ("the ", "a ", "an "):
        if key.startswith(art):
            return key[len(art):]
    return key


def classify_items(items: list[dict]) -> list[str]:
    """classify() of every open-ended item's answer, in order."""
    return [classify(_str(it.get("answer_text")), _str(it.get("question"))) for it in items]


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _frame(question: str) -> str:
    """The question's first four words: 'what is the opposite' answers stand in for each other."""
    return " ".join(normalize_text(question).split()[:4])


def _buckets(kind: str, answer: str, item: dict) -> tuple[tuple, ...]:
    """Pool buckets to draw from, most alike first: same question frame, same topic, same shape, any."""
    shape = _shape(answer)
    topic = str(item.get("topic") or item.get("source") or "")
    return ((kind, "frame", _frame(_str(item.get("question")))), (kind, "topic", topic), (kind, shape),
            (kind, shape[0]), (kind,))


def build_pool(items: list[dict], kinds: list[str] | None = None) -> Pool:
    """Pool of distinct answers per type and shape from every open-ended item (plus the documented top-ups)."""
    best: dict[tuple[str, str], str] = {}
    members: dict[tuple, set[str]] = defaultdict(set)
    types: Counter = Counter()
    for item, kind in zip(items, kinds or classify_items(items)):
        answer = _str(item.get("answer_text")).strip()
        types[kind or "empty"] += 1
        if kind in ("person", "place", "phrase") and len(answer) <= MAX_ANSWER_CHARS:
            k = (kind, _key(answer))
            if not k[1]:
                continue
            if k not in best or answer < best[k]:  # min display form: independent of order
                best[k] = answer
            for bucket in _buckets(kind, answer, item)[:2]:
                members[bucket].add(k[1])
    for kind, extra in (("person", PEOPLE), ("place", PLACES)):
        if sum(1 for t, _ in best if t == kind) < MIN_POOL:
            for name in extra:
                best.setdefault((kind, _key(name)), name)
    for (kind, key), display in best.items():
        shape = _shape(display)
        for bucket in ((kind, shape), (kind, shape[0]), (kind,)):
            members[bucket].add(key)
    pool = Pool(types=types)
    for bucket, keys in members.items():  # sorted: a draw never depends on the order items came in
        pool.buckets[bucket] = [(best[(bucket[0], key)], key) for key in sorted(keys)]
    return pool


def _rng(seed: int, qid: str) -> random.Random:
    digest = hashlib.blake2b(f"{seed}\x1f{qid}".encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _from_pool(pool: Pool, buckets: tuple[tuple, ...], forbidden: set[str], need: int,
               rng: random.Random) -> list[str]:
    """`need` distinct same-type answers from the first buckets that have them; [] if even all are too few."""
    out: list[str] = []
    taken = set(forbidden)
    padded = [f" {f} " for f in forbidden]  # whole-word containment either way, padded once per question

    def ok(key: str) -> bool:
        if key in taken:
            return False
        key = f" {key} "
        return not any(f in key or key in f for f in padded)

    for bucket_key in buckets:
        bucket = pool.buckets.get(bucket_key, [])
        if len(bucket) <= need:
            continue
        for _ in range(4 * need + 8):  # random draws: O(need) per question whatever the pool size
            display, key = bucket[rng.randrange(len(bucket))]
            if ok(key):
                out.append(display)
                taken.add(key)
                if len(out) == need:
                    return out
        start = rng.randrange(len(bucket))  # many rejections (tiny bucket): one bounded deterministic sweep
        for i in range(min(len(bucket), 4096)):
            display, key = bucket[(start + i) % len(bucket)]
            if ok(key):
                out.append(display)
                taken.add(key)
                if len(out) == need:
                    return out
    return []


def _offsets(rng: random.Random, span: int) -> Iterator[int]:
    """Non-zero offsets in -span..span in random order, drawn lazily: 3 distractors rarely need more than 4."""
    ks = [k for k in range(-span, span + 1) if k]
    first = rng.sample(ks, 4)
    yield from first
    rest = [k for k in ks if k not in first]
    rng.shuffle(rest)
    yield from rest


def _numbers(text: str, rng: random.Random) -> Iterator[str]:
    m = _NUMBER.match(text)
    frac = m["frac"] or ""
    units = int(m["int"].replace(",", "") + frac)  # value in units of the last decimal place
    if m["sign"] in ("-", "−"):
        units = -units
    # two significant digits move: 12 -> step 1 (9, 14, 17); 1500 -> 100 (1200, 1700); 3.14 -> 0.1 (3.04, 3.24)
    step = 10 ** max(len(str(abs(units))) - 2, 0)
    for k in itertools.chain(_offsets(rng, 5), _offsets(rng, 12)):
        v = units + k * step
        if (units > 0 and v <= 0) or (units >= 0 and v < 0) or (units < 0 and v >= 0):  # keep the sign
            continue
        whole, part = divmod(abs(v), 10 ** len(frac))
        num = f"{whole:,}" if "," in m["int"] else str(whole)
        num += f".{part:0{len(frac)}d}" if frac else ""
        sign = m["sign"] if v < 0 else ("+" if m["sign"] == "+" else "")
        yield f"{m['pre'] or ''}{sign}{num}{m['post'] or ''}"


def _years(text: str, rng: random.Random) -> Iterator[str]:
    m = _YEAR.match(text)
    if m["dec"]:  # 1960s -> 1950s, 1970s, 1980s
        base = int(m["dec"])
        yield from (f"{base + 10 * k}{m['s']}" for k in _offsets(rng, 5) if base + 10 * k > 0)
        return
    y = int(m["y"])  # 1969 -> 1966, 1971, 1974: within a decade either side
    yield from (f"{y + k}{m['era'] or ''}" for k in _offsets(rng, 10) if y + k > 0)


def _render_month(original: str, month: int) -> str:
    """A month written like the original: full or abbreviated name, same case."""
    name = MONTH_NAMES[month] if original.lower() in _FULL else MONTH_ABBR[month]
    return name.upper() if original.isupper() and len(original) > 1 else name.lower() if original.islower() else name


def _pad(value: int, original: str, padded: bool = False) -> str:
    """Zero-pad like the original: '07' (or any padded field of the date) -> two digits, '7' -> one."""
    return str(value).zfill(len(original)) if padded or original.startswith("0") else str(value)


def _ordinal(day: int) -> str:
    return "th" if day // 10 == 1 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def _dates(text: str, rng: random.Random) -> Iterator[str]:
    for pattern in _DATES:
        m = pattern.match(text)
        if m:
            break
    g = m.groupdict()
    if "a" in g and g["a"]:  # numeric: day-first if the first field cannot be a month, else month-first (US)
        day_first = int(g["a"]) > 12
        g["d"], g["m"] = (g["a"], g["b"]) if day_first else (g["b"], g["a"])
    month = int(g["m"]) if g.get("m") else _MONTHS[m["mon"].lower().rstrip(".")]
    year = int(g["y"]) + (1900 if len(g.get("y") or "0000") == 2 else 0) if g.get("y") else 2000
    padded = pattern is _DATES[0] or any((g.get(k) or "").startswith("0") for k in ("a", "b", "m", "d"))
    if not g.get("d"):  # month and year only: shift by months
        for k in _offsets(rng, 6):
            total = year * 12 + month - 1 + k
            yield _splice(text, m, {"mon": _render_month(m["mon"], total % 12 + 1), "y": str(total // 12)})
        return
    try:
        base = dt.date(year, month, int(g["d"]))
    except ValueError:
        return
    for k in _offsets(rng, 40):
        d = base + dt.timedelta(days=k)
        if g.get("y") is None and d.year != base.year:
            continue
        new = {"d": _pad(d.day, g["d"], padded), "y": str(d.year)[-len(g["y"]):] if g.get("y") else None,
               "ord": _ordinal(d.day) if g.get("ord") else None}
        if g.get("mon"):
            new["mon"] = _render_month(m["mon"], d.month)
        elif g.get("a"):
            dm, mm = _pad(d.day, g["d"], padded), _pad(d.month, g["m"], padded)
            new.update({"a": dm, "b": mm} if day_first else {"a": mm, "b": dm})
            new.pop("d")
        else:
            new["m"] = _pad(d.month, g["m"], padded)
        yield _splice(text, m, new)


def _splice(text: str, m: re.Match, values: dict) -> str:
    """Replace the named groups of a match with new values, keeping every other character as written."""
    spans = sorted((m.span(k), v) for k, v in values.items() if v is not None and m.groupdict().get(k) is not None)
    out, last = [], 0
    for (a, b), v in spans:
        out += [text[last:a], v]
        last = b
    return "".join(out) + text[last:]


def convert_item(item: dict, pool: Pool, *, seed: int, n_choices: int = 4, kind: str | None = None) -> dict:
    """One open-ended item to a 'converted' record; raise RecordError(reason) when it cannot be converted."""
    qid = str(item.get("id") or item.get("question") or "")
    for name in ("question", "answer_text"):
        if item.get(name) is not None and not isinstance(item[name], str):
            raise RecordError("non_text_field", f"expected text, got {type(item[name]).__name__}", None, qid, name)
    question = (item.get("question") or "").strip()
    answer = (item.get("answer_text") or "").strip()
    if not question:
        raise RecordError("empty_question", "is empty", None, qid, "question")
    if not answer:
        raise RecordError("empty_answer", "is empty: nothing to build choices around", None, qid, "answer_text")
    if len(answer) > MAX_ANSWER_CHARS:
        raise RecordError("answer_too_long", f"{len(answer)} characters (a choice is at most {MAX_ANSWER_CHARS})",
                          None, qid, "answer_text")
    kind = kind or classify(answer, question)
    rng = _rng(seed, qid)
    forbidden = set()
    for text in [answer, *(a for a in item.get("aliases") or [] if isinstance(a, str))]:
        norm = normalize_text(text)
        forbidden |= {norm, _strip_article(norm)}  # both spellings: the pool's keys drop the article
    forbidden.discard("")
    need = n_choices - 1
    if kind in ("person", "place", "phrase"):
        picked = _from_pool(pool, _buckets(kind, answer, item), forbidden, need, rng)
        if not picked:
            size = len(pool.buckets.get((kind,), []))
            raise RecordError("pool_too_small", f"{kind} answer '{answer[:40]}': the {kind} pool has {size} "
                              f"answers, {need} distinct others needed", None, qid, "answer_text")
    else:
        make = {"number": _numbers, "year": _years, "date": _dates}[kind]
        picked, seen = [], set(forbidden)
        for cand in make(answer, rng):
            key = normalize_text(cand)
            bare = _strip_article(key)  # _key(cand)
            if key not in seen and bare not in seen:
                seen |= {key, bare}
                picked.append(cand)
                if len(picked) == need:
                    break
        if len(picked) < need:
            raise RecordError("no_distractors", f"{kind} answer '{answer[:40]}': only {len(picked)} distinct "
                              f"near values", None, qid, "answer_text")
    pos = rng.randrange(n_choices)
    choices = picked[:pos] + [answer] + picked[pos:]
    return make_record(id=qid, source=str(item.get("source") or "unknown"), question=question, choices=choices,
                       answer=pos, explanation=str(item.get("explanation") or ""), topic=str(item.get("topic") or ""),
                       difficulty=None, origin="converted")


def convert_open_ended(items: list[dict], *, seed: int, n_choices: int = 4) -> tuple[list[dict], Counter]:
    """Convert open-ended items to 'converted' records; the Counter counts the unconvertible by reason."""
    if not 2 <= n_choices <= 10:
        raise ValueError(f"n_choices must be 2..10 (letters A-J), got {n_choices}")
    kinds = classify_items(items)
    pool = build_pool(items, kinds)
    records, failed = [], Counter()
    for item, kind in zip(items, kinds):
        try:
            records.append(convert_item(item, pool, seed=seed, n_choices=n_choices, kind=kind))
        except RecordError as exc:
            failed[exc.reason] += 1
    return records, failed
