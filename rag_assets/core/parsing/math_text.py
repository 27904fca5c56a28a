"""Equations as one line of text, as Word's linear format types them: a fraction "a/b", powers and
indices after "^" and "_" (as a PDF's or web page's scripts are read), a root "√x", a sum
"∑_(i=1)^n x_i"; a part holding an operator outside brackets is put in parentheses ("(a+b)/2").
``omml_text`` reads Word's equations (OMML), ``mathml_text`` MathML (web pages, OpenDocument
formulas); each takes an lxml element."""

from __future__ import annotations

import html
import re
import unicodedata

OMML = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
#: OMML structures read as a linear text: what joins their parts (a fraction "a/b", a power "x^2")
_OMML_JOINS = {"f": ("num", "/", "den"), "sSup": ("e", "^", "sup"), "sSub": ("e", "_", "sub"),
               "sSubSup": ("e", "_", "sub", "^", "sup"), "limLow": ("e", "_", "lim"), "limUpp": ("e", "^", "lim")}
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}")  # innermost brackets
_OPERATOR = re.compile(r"[\s+\-−=<>≤≥≠≈≡,/±×·→←↔⇒⇔↦∈∉⊂⊆∪∩]")


def _part(text: str) -> str:
    """``text`` as a part of a fraction, power, index or root: in parentheses where it holds an
    operator outside brackets."""
    text = outside = text.strip()
    while (inner := _BRACKETED.sub("", outside)) != outside:
        outside = inner
    return f"({text})" if _OPERATOR.search(outside) else text


def omml_text(element) -> str:
    """An OMML equation (``m:oMath`` or any part of one) as a line of text; a sum or integral
    "∑_(i=1)^n x_i", delimiters as written."""
    tag = element.tag[len(OMML):] if isinstance(element.tag, str) and element.tag.startswith(OMML) else ""
    if tag == "t":
        return element.text or ""
    if tag.endswith("Pr"):  # properties: read below where they matter (a sum's sign, a delimiter's characters)
        return ""

    def whole(name: str) -> str:
        found = element.find(f"{OMML}{name}")
        return "" if found is None else omml_text(found).strip()

    def setting(props: str, name: str, default: str) -> str:
        found = element.find(f"{OMML}{props}/{OMML}{name}")
        return default if found is None else found.get(f"{OMML}val", "")

    if tag in _OMML_JOINS:
        joins = _OMML_JOINS[tag]
        return "".join(_part(whole(piece)) if n % 2 == 0 else piece for n, piece in enumerate(joins))
    if tag == "rad":
        degree = _part(whole("deg"))
        return f"{degree}√{_part(whole('e'))}"
    if tag == "nary":
        sub, sup = _part(whole("sub")), _part(whole("sup"))
        return (setting("naryPr", "chr", "∫") + (f"_{sub}" if sub else "") + (f"^{sup}" if sup else "")
                + " " + whole("e"))
    if tag == "d":
        parts = [omml_text(e).strip() for e in element.findall(f"{OMML}e")]
        return setting("dPr", "begChr", "(") + setting("dPr", "sepChr", "|").join(parts) + setting("dPr", "endChr", ")")
    return _joined((omml_text(child), child.tag in _OMML_SCRIPTS) for child in element)


_OMML_SCRIPTS = {f"{OMML}{tag}" for tag in ("sSup", "sSub", "sSubSup", "limLow", "limUpp")}


def _joined(parts) -> str:
    """(text, whether it ends in a script or a function's name) parts as one text: a space after
    one that a letter or digit follows, as Word's linear format ends a script ("x_i y", not
    "x_iy"; "sin x", not "sinx"), and before a sum or integral after a letter or digit ("1/n ∑")."""
    text, scripted = "", False
    for part, script in parts:
        spaced = (scripted and part[:1].isalnum()) or (part[:1] in _LARGE_OPERATORS and text[-1:].isalnum())
        text += (" " if spaced else "") + part
        scripted = script if part else scripted
    return text


#: MathML's scripts read as a linear text: what joins their children in order
_MATHML_JOINS = {"mfrac": ("", "/", ""), "msup": ("", "^", ""), "msub": ("", "_", ""), "msubsup": ("", "_", "^", ""),
                 "munder": ("", "_", ""), "mover": ("", "^", ""), "munderover": ("", "_", "^", "")}
_LARGE_OPERATORS = set("∑∏∐∫∬∭∮∯∰⋃⋂⋁⋀⨁⨂⨀") | {"lim", "max", "min", "sup", "inf"}
# What reads as nothing: invisible times, separator and plus; function application reads as a space ("sin x").
_INVISIBLE = str.maketrans({"\u2061": " ", "\u2062": "", "\u2063": "", "\u2064": ""})
_ENTITY = re.compile(r"&[A-Za-z][A-Za-z0-9]*;")  # one an HTML parser left as written (&InvisibleTimes;)
# An accent over or under a letter, as the combining mark Word's linear format writes ("x̄", "β̂")
_ACCENTS = {"^": "\u0302", "ˆ": "\u0302", "¯": "\u0304", "‾": "\u0305", "_": "\u0332", "~": "\u0303", "˜": "\u0303",
            "˙": "\u0307", "¨": "\u0308", "→": "\u20d7", "⃗": "\u20d7", "ˇ": "\u030c", "˘": "\u0306"}
_UNREAD = {"annotation", "annotation-xml", "mprescripts", "none", "malignmark", "maligngroup"}


def _name(element) -> str:
    """A MathML element's name without namespace or prefix ("mml:mi" and "{...MathML}mi": "mi")."""
    tag = element.tag if isinstance(element.tag, str) else ""
    return tag.rpartition("}")[2].rpartition(":")[2].lower()


def mathml_text(element) -> str:
    """A MathML equation (``math`` or any part of one, namespaced or as an HTML parser leaves it)
    as a line of text, its whitespace collapsed; its annotations (a TeX or StarMath source) left
    out; an accent over or under a letter as its combining mark ("x̄", "β̂"); a table (a matrix, a
    case analysis) as its rows ("a, b; c, d") within the brackets written around it."""
    return " ".join(_mathml(element).split())


def _mathml(element) -> str:
    name = _name(element)
    children = [child for child in element if isinstance(child.tag, str) and _name(child) not in _UNREAD]
    if name in _UNREAD:
        return ""
    if name in ("mi", "mn", "mo", "mtext", "ms"):
        return _ENTITY.sub(lambda m: html.unescape(m.group(0)), "".join(element.itertext())).translate(_INVISIBLE)
    if name == "mspace":  # a space the author typed; a negative one takes space away
        return "" if (element.get("width") or "").strip().startswith("-") else " "
    if name == "semantics":  # its first child shows it; the rest are other encodings of it
        return _mathml(children[0]) if children else ""
    if name in ("mover", "munder") and len(children) == 2 and \
            ((mark := _mathml(children[1]).strip()) in _ACCENTS or len(mark) == 1 and unicodedata.combining(mark)):
        return _mathml(children[0]) + _ACCENTS.get(mark, mark)
    if name in _MATHML_JOINS and len(children) == len(_MATHML_JOINS[name]) - 1:
        joins = _MATHML_JOINS[name]
        parts = [_part(_mathml(child)) for child in children]
        if name == "mfrac":
            return f"{parts[0]}/{parts[1]}"
        text = parts[0] + "".join(join + part for join, part in zip(joins[1:], parts[1:]) if part)
        return text + " " if parts[0] in _LARGE_OPERATORS else text  # the summand after a space, as Word has it
    if name == "msqrt":
        return "√" + _part("".join(map(_mathml, children)))
    if name == "mroot" and len(children) == 2:
        return _part(_mathml(children[1])) + "√" + _part(_mathml(children[0]))
    if name == "mfenced":
        separators = "".join(element.get("separators", ",").split())  # the last one repeats
        inner = "".join((separators[min(n - 1, len(separators) - 1)] if n and separators else "") + _mathml(child)
                        for n, child in enumerate(children))
        return (element.get("open") or "(") + inner + (element.get("close") or ")")
    if name == "mtable":  # its brackets, if any, are the operators around it
        return "; ".join(", ".join(_mathml(cell).strip() for cell in row if isinstance(cell.tag, str)) for row in children)
    if name == "maction":  # shows its first child
        return _mathml(children[0]) if children else ""
    return _joined((_mathml(child), (_name(child) in _MATHML_JOINS and _name(child) != "mfrac")
                    or (_name(child) == "mi" and len((child.text or "").strip()) > 1)) for child in children)
