"""The things a Chinese brief asks for: noun groups of jieba's tokens, what each one is by the verb near it,
mechanics, counts (Chinese numerals too), win and lose conditions and the tone."""

from __future__ import annotations

import re
from collections.abc import Mapping

from tier2.design.reader.common import _LIVING, _frames, _inside, _patterns
from tier2.design.reader.types import CONTENT_KINDS, ContentItem
from tier2.lexis import Token, category, understood_zh, zh_words


def _zh_items(text: str, toks: list[Token], skip_spans: list[tuple[int, int]], descriptors: frozenset[str],
              ) -> tuple[list[ContentItem], list[str]]:
    f = _frames()["zh"]
    zw = zh_words()
    toks = [t for t in toks if not _inside(skip_spans, t.start)]
    items: list[ContentItem] = []
    names: list[str] = []
    fw = set(map(str, zw["function_words"])) | set(descriptors)
    customers = set(map(str, f["customer"]))
    verbs = {k: set(map(str, f[k])) for k in ("hostile", "launch", "gather", "make", "mechanic", "reach", "tiles")}
    all_verbs = set().union(*verbs.values())

    def add(kind: str, a: int, b: int, term: str, value: int | None = None) -> bool:
        if any(i.kind == kind and i.term == term for i in items):
            return False
        items.append(ContentItem(kind, text[a:b], term, (a, b), value))
        return True

    def is_noun(t: Token) -> bool:
        return t.text not in fw and t.text not in all_verbs and understood_zh(t)

    # noun groups: consecutive understood nouns ("折纸" + "鸟" → 折纸鸟); a customer word stands alone
    groups: list[tuple[int, int]] = []
    i = 0
    while i < len(toks):
        if toks[i].text in customers:
            groups.append((i, i + 1))
            i += 1
            continue
        if is_noun(toks[i]) or (category(toks[i].text, "zh") and toks[i].text not in all_verbs):
            j = i
            while j + 1 < len(toks) and (is_noun(toks[j + 1]) or category(toks[j + 1].text, "zh")) and \
                    toks[j + 1].start == toks[j].end and toks[j + 1].text not in customers and \
                    toks[j + 1].text not in all_verbs:
                j += 1
            groups.append((i, j + 1))
            i = j + 1
        else:
            i += 1
    breaks = [m.start() for m in re.finditer(r"[，。,.;；:：!！?？、]", text)]

    def clause_of(at: int) -> int:
        return sum(1 for b in breaks if b < at)

    def verb_of(k: int) -> str | None:
        return next((v for v, ws in verbs.items() if toks[k].text in ws), None)

    first_verb = next((t.start for k, t in enumerate(toks) if verb_of(k)), len(text))
    player_done = False
    last: tuple[int, str] | None = None
    for s, e in groups:
        a, b = toks[s].start, toks[e - 1].end
        name = text[a:b]
        if name in fw or name in descriptors or any(name.endswith(d) for d in descriptors if len(d) >= 2):
            continue
        names.append(name)
        head = toks[e - 1].text
        cats = category(name, "zh") or category(head, "zh")
        living = any(c in _LIVING for c in cats) or not cats
        prev = toks[s - 1].text if s > 0 else ""
        nxt = toks[e].text if e < len(toks) else ""
        c = clause_of(a)
        verb = None
        k = s - 1
        while k >= 0 and clause_of(toks[k].start) == c:
            verb = verb_of(k)
            if verb:
                break
            k -= 1
        later = None  # "向蝙蝠发射火球": the verb after a target marked by 向/朝/对
        if prev in ("向", "朝", "对", "朝着"):
            later = next((verb_of(q) for q in range(e, len(toks)) if clause_of(toks[q].start) == c and verb_of(q)),
                         None)
        kind: str | None = None
        if last is not None and prev in ("和", "与", "及", "、", "或") and last[0] == s - 1 and "place" not in cats:
            if add(last[1], a, b, name):
                last = (e, last[1])
            continue
        if name in customers or head in customers:
            add("customer", a, b, name)
            continue
        if prev == "给" and living and verb in ("make", None, "mechanic"):
            add("customer", a, b, name)
            continue
        if verb == "reach" and k == s - 1 and name not in ("出口",):
            add("win", a, b, name)
            continue
        if later in ("launch", "hostile"):
            add("enemy", a, b, name)
            continue
        if "place" in cats and verb not in ("reach", "gather", "tiles"):
            add("setting", a, b, name)
            continue
        if not player_done and a < first_verb and prev not in ("用", "给", "把", "向", "对", "在") and \
                (living or "vehicle" in cats or "thing" in cats):
            add("player", a, b, name)
            player_done = True
            continue
        if prev == "用":
            if verb is None and "thing" in cats:
                kind = "goods"
            if kind and add(kind, a, b, name):
                last = (e, kind)
            continue
        if verb == "launch" and nxt in ("攻击", "打", "射"):
            continue
        if verb == "hostile":
            kind = "obstacle" if "hazard" in cats else "enemy"
        elif verb == "tiles":
            kind = "pickup"
        elif verb == "make":
            if "place" not in cats and not any(x in _LIVING for x in cats):
                kind = "goods"
        elif verb == "gather":
            kind = "obstacle" if "hazard" in cats else ("pickup" if "place" not in cats else "setting")
        elif "hazard" in cats:
            kind = "obstacle"
        if kind is not None and add(kind, a, b, name):
            last = (e, kind)
    # mechanics: the longest mechanic verb found at each place of the text (跳过 before 跳)
    mech = sorted(verbs["mechanic"], key=len, reverse=True)
    taken: list[tuple[int, int]] = []
    for v in mech:
        for m in re.finditer(re.escape(v), text):
            a, b = m.start(), m.end()
            inside_noun = any(toks[g0].start <= a and b <= toks[g1 - 1].end
                              and (toks[g0].start, toks[g1 - 1].end) != (a, b) for g0, g1 in groups)
            if _inside(skip_spans, a) or inside_noun or any(x < b and a < y for x, y in taken):
                continue
            taken.append((a, b))
            add("mechanic", a, b, v)
    numbers = "".join(map(str, zw["number_chars"]))
    measure = "|".join(sorted(map(re.escape, map(str, zw["measure_words"])), key=len, reverse=True))
    counted = {str(k): str(v) for k, v in zw["counted"].items()}
    count_pat = re.compile(rf"([\d{numbers}]+)\s*({measure})?\s*(命|生命|心|关卡|关|波|轮|秒|分钟|天|层|圈|回合|步|次)")
    for m in count_pat.finditer(text):
        if _inside(skip_spans, m.start()):
            continue
        raw = m.group(1)
        value = int(raw) if raw.isdigit() else _zh_number(raw, zw["number_chars"])
        what = counted.get(m.group(3)) or counted.get((m.group(2) or "") + m.group(3)) or m.group(3)
        add("count", m.start(), m.end(), what, value)
    for kind in ("win", "lose"):
        for pat in _patterns("zh", kind):
            for m in pat.finditer(text):
                if not _inside(skip_spans, m.start()):
                    add(kind, m.start(), m.end(), m.group("term"))
    for w in map(str, zw["tone"]):
        at = text.find(w)
        if at >= 0 and not _inside(skip_spans, at):
            add("tone", at, at + len(w), w)
    items.sort(key=lambda i: (i.span[0], CONTENT_KINDS.index(i.kind)))
    return items, names


def _zh_number(raw: str, chars: Mapping[str, int]) -> int | None:
    if raw == "十":
        return 10
    if raw.startswith("十"):
        return 10 + int(chars.get(raw[1:], 0))
    if "十" in raw:
        hi, _, lo = raw.partition("十")
        return int(chars.get(hi, 1)) * 10 + int(chars.get(lo, 0) if lo else 0)
    value = chars.get(raw)
    return int(value) if value is not None else None
