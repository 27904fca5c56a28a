"""API reference objects (a function, a class and its methods, a C macro, an HTTP endpoint, a
command-line option) headed by their signatures, as Sphinx shows them: each object's description is
a section under its name, one level below the section it is in, an object inside another's
description (a method in a class) one level further, and what follows the object belongs to the
section again. Chunks then break between objects and cite them ("Main Interfaces > from_bytes()").

Read from Sphinx's HTML (an object is a ``<dl>`` whose first ``<dt>`` holds a ``descname`` or
``sig-name``: Sphinx 2 to 9, every domain) and from the reStructuredText directives that make them
(``.. function::``, ``.. py:method::``, ``.. c:macro::``, ``.. http:get::``...)."""

from __future__ import annotations

import re

from rag_assets.core.parsing.items import CLOSED

# Object directives by domain: Sphinx's own (py, c, cpp, js, rst, std) and the common extensions'
# (sphinxcontrib-httpdomain's endpoints, CMake's commands and variables). Without a domain a
# directive is read in the one that defines it (Python's where several do, as Sphinx's default).
_OBJECTS = {
    "py": "function method classmethod staticmethod class exception attribute property data decorator "
          "decoratormethod type",
    "c": "function macro struct union enum enumerator type var member",
    "cpp": "class struct function member var type concept enum enum-struct enum-class enumerator union alias",
    "js": "function method class data attribute",
    "rst": "directive directive:option role",
    "std": "option cmdoption envvar describe object confval",
    "http": "get post put patch delete head options trace connect any",
    "cmake": "command variable envvar genex signature",
}
_DOMAIN_OF = {}  # a directive without its domain -> the domain that reads it
for _domain in ("cmake", "std", "cpp", "c", "js", "py"):  # later ones win a shared name
    _DOMAIN_OF.update(dict.fromkeys(_OBJECTS[_domain].split(), _domain))
for _name in ("role", "directive", "directive:option", "any", "get", "post", "put", "patch", "delete", "head",
              "options", "trace", "connect"):
    _DOMAIN_OF.pop(_name, None)  # docutils' own "role", and names too common to read without their domain
# What Sphinx's table of contents writes as "name()": objects that are called.
_CALLABLE = frozenset("function method classmethod staticmethod decorator decoratormethod".split())
# A Python or JavaScript signature's name: "acme.send" of "async acme.send(to) -> bool".
_PY_NAME = re.compile(r"\s*(?:(?:async|class|exception|abstract|final|static|property|type)\s+)*([\w.$]+)")
# A C or C++ (qualified) identifier.
_C_NAME = re.compile(r"~?[A-Za-z_]\w*(?:(?:::|\.)~?[A-Za-z_]\w*)*")
MAX_NAME = 120  # a heading longer than this (a describe:: of a long pattern) is cut at a word


def object_kind(directive: str) -> tuple[str, str] | None:
    """The (domain, object type) a reStructuredText directive describes (("py", "function") for
    ``py:function`` and ``function``), or None for a directive that describes no object."""
    domain, _, kind = directive.partition(":")
    if domain in _OBJECTS and kind:
        return (domain, kind) if kind in _OBJECTS[domain].split() else None
    return (_DOMAIN_OF[directive], directive) if directive in _DOMAIN_OF else None


def object_name(domain: str, kind: str, signature: str) -> str:
    """The heading an object is cited by, from its ``signature``: its (qualified) name, "()" after
    a callable's ("acme.send()"), an HTTP endpoint's method and path ("GET /users/(id)"), another
    object's signature as written (an option's "-v, --verbose"), cut at ``MAX_NAME``."""
    signature = " ".join(signature.split())
    head = signature.split("(", 1)[0]
    if domain == "http":
        name = f"{kind.upper()} {signature}"
    elif domain in ("py", "js") and (match := _PY_NAME.match(head)):
        name = match.group(1)
    elif domain in ("c", "cpp") and (names := _C_NAME.findall(head.split("=", 1)[0])):
        name = names[-1]
    else:
        name = signature
    return cut_name(name + ("()" if kind in _CALLABLE and "(" in signature else ""))


def cut_name(text: str) -> str:
    """``text`` as a heading: cut at a word after ``MAX_NAME`` characters."""
    return text if len(text) <= MAX_NAME else text[:MAX_NAME].rsplit(" ", 1)[0] + " …"


# Sphinx's HTML: what marks a <dt> as an object's signature, its name, and what is no part of its text.
SPHINX_OBJECTS = re.compile(r"""class\s*=\s*["'][^"']*\b(?:descname|sig-name|glossary)\b""")
_SIGNATURE_CLASSES = frozenset(("descname", "sig-name"))
_NAME_CLASSES = frozenset(("descname", "sig-name", "descclassname", "sig-prename"))
_NOT_SHOWN = frozenset(("headerlink", "viewcode-link", "viewcode-back"))
_OPEN = "\ue000api-object\ue001"  # a signature's paragraph: depth, name, signature (read by api_items)
_CLOSE = "\ue000api-end\ue001"  # the end of an object's description: its depth
_FIELD = "\ue001"


def _classes(element) -> set[str]:
    return set((element.get("class") or "").split()) if isinstance(element.tag, str) else set()


def _signature(dt) -> tuple[str, str]:
    """A signature ``<dt>``'s text without its permalink and source links, and its name parts'."""
    for hidden in [e for e in dt.iter() if _classes(e) & _NOT_SHOWN]:
        hidden.drop_tree()
    names = [e for e in dt.iter() if _classes(e) & _NAME_CLASSES
             and not any(_classes(a) & _NAME_CLASSES for a in e.iterancestors())]
    tail, dt.tail = dt.tail, None
    shown = " ".join(dt.text_content().split())
    dt.tail = tail
    return shown, " ".join("".join(e.text_content() for e in names).split())


def marked_api_objects(page: str) -> str:
    """``page`` with each Sphinx object (a ``<dl>`` whose first ``<dt>`` holds a ``descname`` or
    ``sig-name``) as blocks: its first signature a paragraph marked with the object's depth (1 for
    an object in no other) and name, its other signatures and its description as they were, then
    a paragraph marking its end; each term of a glossary (``<dl class="glossary">``) so too, named
    by itself, its synonyms and definition after it. ``api_items`` reads the marks. ``page``
    itself where it has neither."""
    if not SPHINX_OBJECTS.search(page):
        return page
    from lxml import etree
    from lxml import html

    root = html.document_fromstring(page.encode("utf-8"), parser=html.HTMLParser(encoding="utf-8", huge_tree=True))
    objects = [dl for dl in root.iter("dl") if (first := next((c for c in dl if c.tag == "dt"), None)) is not None
               and any(_classes(e) & _SIGNATURE_CLASSES for e in first.iter())]
    glossaries = [dl for dl in root.iter("dl") if "glossary" in _classes(dl) and dl not in objects]
    if not objects and not glossaries:
        return page
    marked = {*objects, *glossaries}
    depths = {dl: 1 + sum(ancestor in marked for ancestor in dl.iterancestors("dl")) for dl in marked}

    def paragraph(text: str):
        element = etree.Element("p")
        element.text = text
        return element

    def opening(depth: int, name: str, signature: str):
        return paragraph(f"{_OPEN}{depth}{_FIELD}{name}{_FIELD}{signature}")

    def end_after(element, depth: int) -> None:
        end = paragraph(f"{_CLOSE}{depth}")
        end.tail, element.tail = element.tail, None
        element.addnext(end)

    for dl in objects:
        for n, dt in enumerate([c for c in dl if c.tag == "dt"]):
            signature, name = _signature(dt)
            if n == 0:
                name = cut_name((name or signature) + ("()" if _classes(dl) & _CALLABLE and "(" in signature else ""))
            shown = opening(depths[dl], name, signature) if n == 0 else paragraph(signature)
            shown.tail = dt.tail
            dl.replace(dt, shown)
        for dd in dl:
            if dd.tag == "dd":
                dd.tag = "div"
        dl.tag = "div"
        end_after(dl, depths[dl])
    for dl in glossaries:
        term = None  # the open term's last block
        for child in list(dl):
            if child.tag == "dt":
                shown, _ = _signature(child)
                # a term opens its entry; one right after another term is its synonym, a line of the entry
                marked_term = opening(depths[dl], cut_name(shown), shown) if term is None else paragraph(shown)
                marked_term.tail = child.tail
                dl.replace(child, marked_term)
                term = marked_term
            elif child.tag == "dd":
                child.tag = "div"
                if term is not None:
                    end_after(child, depths[dl])
                term = None
        if term is not None:
            end_after(term, depths[dl])
        dl.tag = "div"
    return html.tostring(root, encoding="unicode")


def api_items(items: list[tuple]) -> list[tuple]:
    """Items (``join_elements``' tuples) with ``marked_api_objects``' marks read: a signature a
    Title at its depth below the last heading before it, cited by its name; an object's end a
    ``CLOSED`` item at that level (it ends the heading path there)."""
    out: list[tuple] = []
    base = 0  # the level of the last heading the page shows
    for item in items:
        category, text, page, *more = item
        fields = text[len(_OPEN):].split(_FIELD, 2) if text.startswith(_OPEN) else []
        if len(fields) == 3 and fields[0].isdigit():
            out.append(("Title", fields[2], page, base + int(fields[0]), False, fields[1]))
        elif text.startswith(_CLOSE) and text[len(_CLOSE):].isdigit():
            out.append((CLOSED, "", page, base + int(text[len(_CLOSE):])))
        else:
            if category == "Title":
                base = more[0] if more else 1
            out.append(item)
    return out
