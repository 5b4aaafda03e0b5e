"""A formula's structure rebuilt from where its glyphs and rules sit on a born-digital page.

A PDF made by TeX keeps a stacked fraction as glyphs above a drawn rule and glyphs below it, a sum as a big
glyph with small glyphs over and under it, a matrix as rows of glyphs between two tall brackets. The plain
text (and a line-by-line reading) loses all of that. `build(atoms, rules)` takes the glyphs (each one's box,
baseline, size; read from the page by app.core.text.formula_page) and the rules among them and writes LaTeX:

- a rule with glyphs just above and just below it is `\\frac{…}{…}`; a rule starting at a radical sign's top
  is `\\sqrt{…}` over the glyphs under it; a short rule over one glyph is `\\bar{…}`;
- a big operator (∑ ∏ ⋃ …) takes the small glyphs centred over and under it as its limits;
- tall brackets around two rows or more make a matrix (`pmatrix`, `bmatrix`, `vmatrix`; a lone `{` is
  `cases`), columns where every row has a gap;
- an accent glyph above a letter is `\\hat`, `\\tilde`, `\\dot`…;
- a smaller glyph raised or lowered from its row's baseline is a super- or subscript, nested as deep as the
  sizes go;
- upright letters spelling an operator name are `\\lim`, `\\sin`… (`\\lim`, `\\max` take limits under them);
- rows one under the other are lines (`aligned` at their first relation when each has one).

What must never live here: reading the page (formula_page), symbol tables and the parse check (layer_math),
the pipeline, OCR.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from statistics import median

from app.core.text.layer_math import SCRIPT_SIZE, command

BIG_OPERATORS = {"∑": r"\sum", "∏": r"\prod", "∐": r"\coprod", "⋃": r"\bigcup", "⋂": r"\bigcap",
                 "⨁": r"\bigoplus", "⨂": r"\bigotimes", "⋁": r"\bigvee", "⋀": r"\bigwedge"}
ACCENTS = {"ˆ": r"\hat", "^": r"\hat", "̂": r"\hat", "˜": r"\tilde", "~": r"\tilde", "̃": r"\tilde",
           "¯": r"\bar", "̄": r"\bar", "˙": r"\dot", "̇": r"\dot", "¨": r"\ddot", "̈": r"\ddot",
           "´": r"\acute", "`": r"\grave", "ˇ": r"\check", "˘": r"\breve", "→": r"\vec", "⃗": r"\vec"}
# the pieces TeX builds a tall bracket from (CMEX's extensible delimiters), each with the bracket it makes
PIECES = {"⏐": "|", "‖": "‖", **dict.fromkeys("⎛⎜⎝", "("), **dict.fromkeys("⎞⎟⎠", ")"),
          **dict.fromkeys("⎡⎢⎣", "["), **dict.fromkeys("⎤⎥⎦", "]"), **dict.fromkeys("⎧⎨⎩⎪", "{"),
          **dict.fromkeys("⎫⎬⎭", "}")}
OPENERS = {"(": "pmatrix", "[": "bmatrix", "|": "vmatrix", "‖": "Vmatrix", "{": "cases"}
CLOSERS = {"(": ")", "[": "]", "|": "|", "‖": "‖", "{": "}"}
TALL = 1.6  # a bracket this many times its row's font size tall spans rows
RULE_MAX_THICK = 1.6  # points: a fraction rule or a radical's bar is a thin horizontal stroke
OPERATOR_NAMES = ("lim", "liminf", "limsup", "max", "min", "sup", "inf", "det", "arg", "sin", "cos", "tan",
                  "cot", "sec", "csc", "log", "ln", "exp", "sinh", "cosh", "tanh", "deg", "dim", "ker", "gcd",
                  "Pr", "hom", "lg", "arcsin", "arccos", "arctan")
LIMIT_NAMES = ("lim", "liminf", "limsup", "max", "min", "sup", "inf", "det", "Pr", "gcd")  # limits under them
RELATIONS = ("=", r"\leq", r"\geq", r"\neq", r"\approx", r"\equiv", "<", ">", r"\sim", r"\le", r"\ge")


@dataclass(frozen=True)
class Atom:
    """One glyph, or a piece already put together (a fraction, a matrix), with its box, baseline and size."""
    tex: str
    x0: float
    y0: float
    x1: float
    y1: float
    size: float
    base: float
    char: str = ""  # the glyph's own character (a single glyph only)
    upright: bool = False  # set in a roman (text) font, not math italic: letters of an operator name ("lim")
    whole: bool = False  # a fraction, root or matrix: on its row's baseline whatever its glyphs' size

    @property
    def cx(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def height(self) -> float:
        return self.y1 - self.y0


@dataclass(frozen=True)
class Rule:
    x0: float
    y: float
    x1: float

    @property
    def width(self) -> float:
        return self.x1 - self.x0


def _union(atoms, tex: str, size: float, base: float) -> Atom:
    return Atom(tex, min(a.x0 for a in atoms), min(a.y0 for a in atoms), max(a.x1 for a in atoms),
                max(a.y1 for a in atoms), size, base)


def _take_names(atoms: list[Atom]) -> list[Atom]:
    """Upright letters set side by side are a word: an operator name ("l" "i" "m") is that operator (`\\lim`),
    another word is `\\mathrm{…}` ("Var", "Tr", the "eff" of d_eff). A lone upright letter stays a letter."""
    rows: dict[float, list[Atom]] = {}
    for a in sorted(atoms, key=lambda a: a.x0):
        if a.upright and a.char.isalpha() and len(a.char) == 1:
            rows.setdefault(round(a.base), []).append(a)
    used, made = set(), []
    for letters in rows.values():
        runs: list[list[Atom]] = []
        for a in letters:
            last = runs[-1][-1] if runs else None
            if last is not None and a.x0 - last.x1 < 0.25 * max(a.size, 1) and abs(a.size - last.size) < 0.5:
                runs[-1].append(a)
            else:
                runs.append([a])
        for run in (r for r in runs if len(r) >= 2):
            word = "".join(a.char for a in run)
            tex = "\\" + word + " " if word in OPERATOR_NAMES else r"\mathrm{" + word + "}"
            made.append(replace(_union(run, tex, run[0].size, run[0].base), char=word, upright=True))
            used.update(map(id, run))
    return [a for a in atoms if id(a) not in used] + made


MAIN_SHARE = 0.2  # a larger size this share of the glyphs or more is the main one, however many scripts


def _main_size(atoms: list[Atom]) -> float:
    """The size the formula's row is set in: the most common size (the larger on a tie: "A²" is an A with a
    script, not a 2 with a big letter) — or a larger one that a fair share (MAIN_SHARE) of the glyphs have, up to
    1.6 times it: "ζ_n^{ψ(gs)}" twice and a sum's limits make the script size the most common, not the main one.
    Big operators do not vote."""
    sizes = [round(a.size, 1) for a in atoms if a.size > 0 and a.char not in BIG_OPERATORS and a.char not in "∫∮"]
    if not sizes:
        sizes = [round(a.size, 1) for a in atoms if a.size > 0]
    if not sizes:
        return 0.0
    common = max(set(sizes), key=lambda z: (sizes.count(z), z))
    larger = [z for z in set(sizes) if common < z <= 1.6 * common and sizes.count(z) >= MAIN_SHARE * len(sizes)]
    return max(larger) if larger else common


def _chain(rule: Rule, atoms: list[Atom], above: bool) -> list[Atom]:
    """The glyphs over (under) `rule` inside its width, from the rule outwards while no wide gap opens."""
    cand = [a for a in atoms if rule.x0 - 1 <= a.cx <= rule.x1 + 1 and ((a.y1 <= rule.y + 0.5) if above
                                                                          else (a.y0 >= rule.y - 0.5))]
    cand.sort(key=lambda a: -a.y1 if above else a.y0)
    out: list[Atom] = []
    edge = rule.y
    room = 0.6 * max([a.size for a in cand] + [1.0])  # a gap this wide ends the chain (by the largest glyph)
    for a in cand:
        gap = (edge - a.y1) if above else (a.y0 - edge)
        if gap > room:
            break
        out.append(a)
        edge = min(edge, a.y0) if above else max(edge, a.y1)
    return out


def _rules_among(rules: list[Rule], atoms: list[Atom]) -> list[Rule]:
    """The rules within the span of `atoms` (a numerator's or a radicand's own fractions and bars)."""
    if not atoms:
        return []
    x0, y0 = min(a.x0 for a in atoms) - 1, min(a.y0 for a in atoms) - 1
    x1, y1 = max(a.x1 for a in atoms) + 1, max(a.y1 for a in atoms) + 1
    return [r for r in rules if y0 <= r.y <= y1 and x0 <= r.x0 and r.x1 <= x1 + 0.2 * (r.x1 - r.x0)]


def _take_rules(atoms: list[Atom], rules: list[Rule]) -> list[Atom]:
    """Fractions, radicals and bars, widest rule first (an outer fraction holds the inner ones)."""
    rules = sorted(rules, key=lambda r: -r.width)
    while rules:
        rule = rules.pop(0)
        radical = next((a for a in atoms if a.char == "√" and abs(a.x1 - rule.x0) < 2.5
                        and abs(a.y0 - rule.y) < 2.5), None)
        below = _chain(rule, [a for a in atoms if a is not radical], above=False)
        inner = _rules_among(rules, below)
        if radical is not None and below:
            radicand = [a for a in below if a.y0 < radical.y1]
            index = [a for a in atoms if a.cx <= radical.cx and a.y1 <= radical.y0 + radical.height / 2
                     and a.size <= SCRIPT_SIZE * radical.size and a.x0 >= radical.x0 - radical.size]
            used = set(map(id, radicand + index + [radical]))
            rules = [r for r in rules if r not in inner or not any(id(a) in used for a in below)]
            tex = (rf"\sqrt[{build(index, [])}]" if index else r"\sqrt") + "{" + build(radicand, inner) + "}"
            size = _main_size(radicand) or radical.size
            root = _union(radicand + [radical], tex, size, median(a.base for a in radicand))
            atoms = [a for a in atoms if id(a) not in used] + [replace(root, whole=True)]
            continue
        above = _chain(rule, atoms, above=True)
        if above and below:
            num_rules = _rules_among(rules, above)
            rules = [r for r in rules if r not in inner and r not in num_rules]
            size = max(_main_size(above), _main_size(below))
            tex = r"\frac{" + build(above, num_rules) + "}{" + build(below, inner) + "}"
            used = set(map(id, above + below))
            atoms = [a for a in atoms if id(a) not in used] + [
                replace(_union(above + below, tex, size, rule.y + 0.25 * size), whole=True)]
        elif above and len(above) == 1 and rule.width < 1.5 * max(above[0].size, 1):
            bar = replace(above[0], tex=r"\bar{" + above[0].tex + "}", char="", y0=min(above[0].y0, rule.y))
            atoms = [a for a in atoms if a is not above[0]] + [bar]
    return atoms


def _take_accents(atoms: list[Atom]) -> list[Atom]:
    for acc in [a for a in atoms if a.char in ACCENTS]:
        under = [a for a in atoms if a is not acc and a.x0 - 1 <= acc.cx <= a.x1 + 1
                 and acc.y1 <= a.y0 + 0.4 * a.height and a.y0 - acc.y1 < 0.4 * max(a.size, 1)
                 and a.char not in ACCENTS]
        if len(under) == 1:
            a = under[0]
            atoms = [b for b in atoms if b is not acc and b is not a] + [
                replace(a, tex=ACCENTS[acc.char] + "{" + a.tex + "}", char="", y0=acc.y0)]
    return atoms


def _take_operators(atoms: list[Atom]) -> list[Atom]:
    for op in [a for a in atoms if a.char in BIG_OPERATORS or a.char in ("∫", "∮") or a.char in LIMIT_NAMES]:
        top = _limit(op, atoms, above=True)
        bottom = _limit(op, atoms, above=False)
        if not top and not bottom:
            continue
        tex = op.tex.rstrip() + ("_{" + build(bottom, []) + "}" if bottom else "") + (
            "^{" + build(top, []) + "}" if top else "")
        used = set(map(id, top + bottom + [op]))
        whole = Atom(tex + " ", op.x0, min(a.y0 for a in top + [op]), op.x1, max(a.y1 for a in bottom + [op]),
                     max(op.size, 1), op.base)
        atoms = [a for a in atoms if id(a) not in used] + [whole]
    return atoms


def _limit(op: Atom, atoms: list[Atom], above: bool) -> list[Atom]:
    """The small glyphs centred over (under) a big operator, and those on their row that continue them
    (a limit wider than its operator: "n → ∞" under "lim")."""
    def near(a: Atom) -> bool:
        if a is op or a.size >= op.size * 0.95:
            return False
        return (op.y0 - a.y1 < 0.8 * max(a.size, 1) and a.y1 <= op.y0 + 1) if above else (
            a.y0 - op.y1 <= max(a.size, 1) and a.y0 >= op.y1 - 1)  # (a comma under it starts low)

    row = [a for a in atoms if near(a)]
    chain = [a for a in row if op.x0 - 1 <= a.cx <= op.x1 + 1]
    grown = True
    while chain and grown:
        grown = False
        lo, hi = min(a.x0 for a in chain), max(a.x1 for a in chain)
        for a in row:
            if a not in chain and (0 <= lo - a.x1 < 0.5 * a.size or 0 <= a.x0 - hi < 0.5 * a.size):
                chain.append(a)
                grown = True
    return chain


def _merge_pieces(atoms: list[Atom]) -> list[Atom]:
    """A tall bracket TeX built from pieces (⎛ ⎜ ⎝) is one glyph."""
    pieces = sorted((a for a in atoms if a.char in PIECES), key=lambda a: (a.x0, a.y0))
    rest = [a for a in atoms if a.char not in PIECES]
    groups: list[list[Atom]] = []
    for p in pieces:
        g = next((g for g in groups if PIECES[g[0].char] == PIECES[p.char] and abs(g[0].x0 - p.x0) < 2
                  and p.y0 - g[-1].y1 < 2), None)
        (g.append(p) if g is not None else groups.append([p]))
    for g in groups:
        c = PIECES[g[0].char]
        rest.append(replace(_union(g, command(c), g[0].size, g[-1].base), char=c))
    return rest


def _take_dots(atoms: list[Atom]) -> list[Atom]:
    """Three dots set evenly in a line (across, up, down, slanting) are TeX's one symbol: `\\ldots` ("." on
    the baseline), `\\cdots` ("·"), `\\vdots`, `\\ddots` (a matrix's rows are not to be split at them)."""
    dots = sorted((a for a in atoms if a.char in (".", "·", "⋅")), key=lambda a: (a.x0, a.y0))
    cy = {id(a): (a.y0 + a.y1) / 2 for a in dots}
    used: set[int] = set()
    made = []
    for a, b in ((a, b) for a in dots for b in dots):
        step = 0.1 * max(a.size, 1)
        dx, dy = b.cx - a.cx, cy[id(b)] - cy[id(a)]
        if {id(a), id(b)} & used or b.char != a.char or not 0 < dx * dx + dy * dy < (0.7 * a.size) ** 2 \
                or dx < -step or dy < -step:
            continue
        c = next((c for c in dots if c.char == a.char and id(c) not in used | {id(a), id(b)}
                  and abs(c.cx - b.cx - dx) < step and abs(cy[id(c)] - cy[id(b)] - dy) < step), None)
        if c is None:
            continue
        tex = r"\vdots" if abs(dx) <= step else r"\ddots" if abs(dy) > step else \
            r"\cdots" if a.char != "." else r"\ldots"
        made.append(_union([a, b, c], tex + " ", a.size, max(d.base for d in (a, b, c))))
        used.update((id(a), id(b), id(c)))
    return [a for a in atoms if id(a) not in used] + made


def _take_matrices(atoms: list[Atom]) -> list[Atom]:
    main = _main_size(atoms) or 1.0
    tall = [a for a in atoms if a.char in OPENERS and a.height > TALL * main]
    for left in sorted(tall, key=lambda a: -a.x0):
        if left not in atoms:
            continue
        close = CLOSERS[left.char]
        right = min((a for a in atoms if a.char == close and a.x0 > left.x1
                     and abs(a.y0 - left.y0) < 0.3 * left.height and abs(a.y1 - left.y1) < 0.3 * left.height),
                    key=lambda a: a.x0, default=None)
        end = right.x0 if right is not None else float("inf")
        inside = [a for a in atoms if left.x1 - 0.5 <= a.x0 and a.x1 <= end + 0.5 and a is not right
                  and left.y0 - 1 <= (a.y0 + a.y1) / 2 <= left.y1 + 1]
        rows = rows_of(inside, main)  # in the formula's size: a bracketed "ζ_n^{ψ(gs)}" is one row, not three
        if len(rows) < 2 or (right is None and left.char != "{"):
            continue
        env = OPENERS[left.char] if right is not None or left.char == "{" else "matrix"
        body = r" \\ ".join(" & ".join(build(cell, [], main) for cell in row) for row in _cells(rows, main))
        used = set(map(id, inside + [left] + ([right] if right else [])))
        whole = inside + [left] + ([right] if right else [])
        atoms = [a for a in atoms if id(a) not in used] + [
            replace(_union(whole, rf"\begin{{{env}}} {body} \end{{{env}}}", main,
                           (left.y0 + left.y1) / 2 + 0.25 * main), whole=True)]
    return atoms


def _cells(rows: list[list[Atom]], size: float) -> list[list[list[Atom]]]:
    """Rows split into columns at gaps (≥ a font size wide) that every row leaves open."""
    spans = sorted((a.x0, a.x1) for row in rows for a in row)
    cuts, reach = [], spans[0][1]
    for x0, x1 in spans[1:]:
        if x0 - reach >= 0.6 * size:  # TeX sets columns 2 \\arraycolsep (10 pt) apart, a cell's glyphs closer
            cuts.append((reach + x0) / 2)
        reach = max(reach, x1)
    bounds = list(zip([-1e9] + cuts, cuts + [1e9]))
    return [[[a for a in row if lo <= a.cx < hi] for lo, hi in bounds] for row in rows]


def _script(a: Atom, main: float) -> bool:
    """Is `a` a super- or subscript: a glyph smaller than its row's (a text-style fraction is not, whatever
    its glyphs' size)."""
    return not a.whole and a.size <= SCRIPT_SIZE * main


def rows_of(atoms: list[Atom], main: float | None = None) -> list[list[Atom]]:
    """Atoms in rows, top to bottom: full-size atoms by baseline, scripts with the row nearest them. `main`:
    the row's size when the caller knows it (an inline formula whose scripts outnumber its letters)."""
    main = main or _main_size(atoms) or 1.0
    full = sorted((a for a in atoms if not _script(a, main)), key=lambda a: a.base)
    rows: list[list[Atom]] = []
    for a in full:
        gap = a.base - median(b.base for b in rows[-1]) if rows else 0.0
        if rows and (gap < 0.15 * main or (gap < 0.6 * main and not _below_all(a, rows[-1]))):  # one baseline
            rows[-1].append(a)
        else:
            rows.append([a])
    if not rows:
        return [atoms] if atoms else []
    for a in atoms:
        if _script(a, main):
            cy = (a.y0 + a.y1) / 2
            nearest = min(rows, key=lambda r: min(abs(cy - b.y0), abs(cy - b.y1), abs(cy - b.base))
                          if (b := _span(r)) else 0)
            nearest.append(a)
    return rows


def _below_all(a: Atom, row: list[Atom]) -> bool:
    return a.y0 >= max(b.y1 for b in row) - 0.1 * a.size


def _span(row: list[Atom]) -> Atom:
    return _union(row, "", 0, median(b.base for b in row))


def row_latex(atoms: list[Atom], main: float | None = None) -> str:
    """One row: left to right, smaller atoms raised or lowered from the baseline as scripts, nested."""
    atoms = sorted(atoms, key=lambda a: a.x0)
    main = main or _main_size([a for a in atoms if a.char]) or _main_size(atoms)
    full = [a for a in atoms if not _script(a, main)]
    base = median(a.base for a in full) if full else 0.0
    out: list[str] = []
    i = 0
    while i < len(atoms):
        a = atoms[i]
        if not _script(a, main) or not full:
            prev = atoms[i - 1] if i else None
            if out and prev is not None and _number_goes_on(prev, a):
                out[-1] += a.tex  # "1" "2" is 12, not "1 2"
            else:
                out.append(a.tex)
            i += 1
            continue
        run = []
        while i < len(atoms) and _script(atoms[i], main):
            run.append(atoms[i])
            i += 1
        sub = [s for s in run if (s.y0 + s.y1) / 2 > base - 0.3 * main]
        sup = [s for s in run if s not in sub]
        out.append(("_{" + row_latex(sub) + "}" if sub else "")
                   + ("^{" + row_latex(sup) + "}" if sup else ""))
    return _tidy(" ".join(out))


def _number_goes_on(a: Atom, b: Atom) -> bool:
    """Does glyph `b` continue the number glyph `a` belongs to (digits and a decimal point set close)?"""
    return (a.char.isdigit() or a.char == ".") and (b.char.isdigit() or b.char == ".") and \
        b.x0 - a.x1 < 0.15 * max(a.size, 1) and not (a.char == b.char == ".")


def _tidy(tex: str) -> str:
    tex = " ".join(tex.split())
    return tex.replace(" _{", "_{").replace(" ^{", "^{").replace("{ ", "{").replace(" }", "}")


def build(atoms: list[Atom], rules: list[Rule], main: float | None = None) -> str:
    """LaTeX for a set of atoms and the rules among them; `main`: the size of the text the atoms are set in,
    when known (an inline formula's line: "D⁻¹" has more script glyphs than full-size ones)."""
    if not atoms:
        return ""
    atoms = _take_rules(_take_names(list(atoms)), rules)
    atoms = _take_accents(_take_operators(atoms))
    atoms = _take_matrices(_merge_pieces(_take_dots(atoms)))
    rows = [_equation_number(r) for r in rows_of(atoms, main)]
    lines = [row_latex(r, main) for r, _ in rows]
    if len(lines) == 1:
        tag = rows[0][1]
        return lines[0] + (rf" \tag{{{tag}}}" if tag else "")
    if all(_top_relation(f" {ln} ") >= 0 for ln in lines):
        aligned = [_align(ln) for ln in lines]
        return r"\begin{aligned} " + r" \\ ".join(aligned) + r" \end{aligned}"
    return r"\begin{gathered} " + r" \\ ".join(lines) + r" \end{gathered}"


def _equation_number(row: list[Atom]) -> tuple[list[Atom], str | None]:
    """A row without the equation number set far to its right ("(3)", "(2.1a)"), and that number."""
    row = sorted(row, key=lambda a: a.x0)
    if len(row) < 4 or row[-1].char != ")":
        return row, None
    start = max((i for i, a in enumerate(row) if a.char == "("), default=-1)
    inside = row[start + 1:-1]
    if start < 1 or not inside or not all(a.char.isalnum() or a.char == "." for a in inside):
        return row, None
    if row[start].x0 - row[start - 1].x1 < 2 * max(row[start].size, 1):  # "f(x)": a bracket, not a number
        return row, None
    return row[:start], "".join(a.char for a in inside)


def _top_relation(line: str) -> int:
    """Where the first relation outside every brace group starts (-1: none)."""
    depth, i = 0, 0
    while i < len(line):
        ch = line[i]
        depth += (ch == "{") - (ch == "}") if line[i - 1:i] != "\\" else 0
        if depth == 0 and ch == " ":
            for rel in RELATIONS:
                at_end = line.startswith(f" {rel}", i) and i + len(rel) + 1 == len(line)
                if line.startswith(f" {rel} ", i) or at_end:
                    return i
        i += 1
    return -1


def _align(line: str) -> str:
    cut = _top_relation(line)
    return line if cut < 0 else line[:cut] + " &" + line[cut:]
