"""API reference objects (Sphinx's HTML, the reStructuredText directives that make them) are
sections under their names, one level below the section they are in."""

from hypothesis import given, settings
from hypothesis import strategies as st

from rag_assets.config.profiles import profile_from_config
from rag_assets.config.schema import ChunkingProfileConfig
from rag_assets.core.chunking import chunk_document
from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import parse_document
from rag_assets.core.parsing.api_objects import object_kind, object_name
from rag_assets.core.tokens import get_token_counter


def parsed(doc_id: str, text: str):
    data = text.encode()
    return parse_document(RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data))


def paths(doc) -> dict[str, tuple[str, ...]]:
    """Each element's text and heading path."""
    return {doc.text[e.start : e.end]: e.heading_path for e in doc.elements}


def titles(doc) -> list[str]:
    return [doc.text[e.start : e.end] for e in doc.elements if e.category == "Title"]


# Sphinx 9's markup (autodoc of a class with a method and a property), trimmed.
SPHINX_PAGE = """<html><head><title>json — JSON encoder and decoder</title></head><body>
<div class="sphinxsidebar" role="navigation"><ul><li><a href="#json.dump">json.dump</a></li></ul></div>
<div class="body" role="main"><section id="module-json">
<h1>json — JSON encoder and decoder<a class="headerlink" href="#module-json" title="Link to this heading">¶</a></h1>
<section id="basic-usage"><h2>Basic Usage<a class="headerlink" href="#basic-usage">¶</a></h2>
<p>The module's functions read and write JSON.</p>
<dl class="py function">
<dt class="sig sig-object py" id="json.dump">
<span class="sig-prename descclassname"><span class="pre">json.</span></span><span class="sig-name descname"><span class="pre">dump</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">obj</span></span></em>, <em class="sig-param"><span class="n"><span class="pre">fp</span></span></em><span class="sig-paren">)</span><a class="reference internal" href="_modules/json.html#dump"><span class="viewcode-link"><span class="pre">[source]</span></span></a><a class="headerlink" href="#json.dump" title="Link to this definition">¶</a></dt>
<dd><p>Serialize <em>obj</em> as a JSON formatted stream to <em>fp</em>.</p>
<dl class="field-list simple">
<dt class="field-odd">Parameters<span class="colon">:</span></dt>
<dd class="field-odd"><p><strong>fp</strong> – A file-like object.</p></dd>
</dl>
</dd></dl>
<p>Both functions accept the same keyword arguments.</p>
<dl class="py class">
<dt class="sig sig-object py" id="json.JSONDecoder">
<em class="property"><span class="pre">class</span><span class="w"> </span></em><span class="sig-prename descclassname"><span class="pre">json.</span></span><span class="sig-name descname"><span class="pre">JSONDecoder</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">strict</span></span><span class="o"><span class="pre">=</span></span><span class="default_value"><span class="pre">True</span></span></em><span class="sig-paren">)</span><a class="headerlink" href="#json.JSONDecoder" title="Link to this definition">¶</a></dt>
<dd><p>Simple JSON decoder.</p>
<dl class="py method">
<dt class="sig sig-object py" id="json.JSONDecoder.decode">
<span class="sig-name descname"><span class="pre">decode</span></span><span class="sig-paren">(</span><em class="sig-param"><span class="n"><span class="pre">s</span></span></em><span class="sig-paren">)</span><a class="headerlink" href="#json.JSONDecoder.decode" title="Link to this definition">¶</a></dt>
<dd><p>Return the Python representation of <em>s</em>.</p></dd></dl>
<dl class="py property">
<dt class="sig sig-object py" id="json.JSONDecoder.strict">
<em class="property"><span class="pre">property</span><span class="w"> </span></em><span class="sig-name descname"><span class="pre">strict</span></span><a class="headerlink" href="#json.JSONDecoder.strict" title="Link to this definition">¶</a></dt>
<dd><p>Whether control characters are refused.</p></dd></dl>
<p>A decoder is reusable.</p>
</dd></dl>
</section>
<section id="command-line"><h2>Command line<a class="headerlink" href="#command-line">¶</a></h2>
<p>Run it as a module.</p>
</section></section></div></body></html>"""


def test_sphinx_objects_are_sections_under_their_names():
    doc = parsed("library/json.html", SPHINX_PAGE)
    found = paths(doc)
    page, usage = "json — JSON encoder and decoder", ("json — JSON encoder and decoder", "Basic Usage")
    assert found["The module's functions read and write JSON."] == usage
    assert found["json.dump(obj, fp)"] == (*usage, "json.dump()")  # no permalink, no [source] link
    assert found["Serialize obj as a JSON formatted stream to fp."] == (*usage, "json.dump()")
    assert found["fp – A file-like object."] == (*usage, "json.dump()")  # a field list is no object
    assert found["Both functions accept the same keyword arguments."] == usage  # after the object: the section's
    assert found["class json.JSONDecoder(strict=True)"] == (*usage, "json.JSONDecoder")
    assert found["Simple JSON decoder."] == (*usage, "json.JSONDecoder")
    assert found["Return the Python representation of s."] == (*usage, "json.JSONDecoder", "decode()")
    assert found["property strict"] == (*usage, "json.JSONDecoder", "strict")
    assert found["A decoder is reusable."] == (*usage, "json.JSONDecoder")  # the class's again, after its members
    assert found["Run it as a module."] == (page, "Command line")
    assert titles(doc) == [page, "Basic Usage", "json.dump(obj, fp)", "class json.JSONDecoder(strict=True)",
                           "decode(s)", "property strict", "Command line"]
    assert not any("\ue000" <= ch <= "\ue001" for ch in doc.text)


def test_older_sphinx_markup_and_several_signatures_read_alike():
    """Sphinx 2's markup (``descname`` in <code>, no ``sig`` classes); an object of two signatures
    (``.. function:: next(it)`` and ``advance_iterator(it)``) is one section under the first."""
    page = ("<html><body><h1>six</h1><h2>Object model</h2>"
            '<dl class="function"><dt id="six.next"><code class="descclassname">six.</code><code class="descname">'
            'next</code><span class="sig-paren">(</span><em>it</em><span class="sig-paren">)</span>'
            '<a class="headerlink" href="#six.next" title="Permalink to this definition">¶</a></dt>'
            '<dt id="six.advance_iterator"><code class="descclassname">six.</code><code class="descname">'
            'advance_iterator</code><span class="sig-paren">(</span><em>it</em><span class="sig-paren">)</span></dt>'
            "<dd><p>Get the next item of iterator <em>it</em>.</p></dd></dl>"
            '<dl class="data"><dt id="six.PY2"><code class="descclassname">six.</code><code class="descname">PY2'
            "</code></dt><dd><p>True on Python 2.</p></dd></dl></body></html>")
    found = paths(parsed("six.html", page))
    assert found["six.next(it)"] == ("six", "Object model", "six.next()")
    assert found["six.advance_iterator(it)"] == ("six", "Object model", "six.next()")
    assert found["Get the next item of iterator it."] == ("six", "Object model", "six.next()")
    assert found["True on Python 2."] == ("six", "Object model", "six.PY2")


def test_a_definition_list_of_terms_is_no_object():
    page = "<html><body><h1>Glossary</h1><dl><dt>Chunk</dt><dd><p>A piece of a document.</p></dd></dl></body></html>"
    doc = parsed("glossary.html", page)
    assert paths(doc)["A piece of a document."] == ("Glossary",)
    assert titles(doc) == ["Glossary"]


RST_PAGE = """\
Package contents
================

.. moduleauthor:: Ada Lovelace <ada@example.org>

.. data:: PY2

   True on Python 2.

Object model
------------

.. function:: get_method_self(meth)

   Get the ``self`` of bound method *meth*.

   .. code-block:: python

      get_method_self(obj.method)

These accessors work on both versions.

.. class:: Stack(size)

   A bounded stack.

   .. method:: Stack.push(item) -> None

      Put *item* on top.

   .. attribute:: size

      How many items it holds.

   A stack is not thread-safe.

.. c:function:: int PyArg_ParseTuple(PyObject *args, const char *format, ...)

   Parse the parameters of a function.

.. http:get:: /users/(int:user_id)

   The user's profile.

.. option:: -v, --verbose

   Say more.

.. class:: special

This paragraph only has a class.
"""


def test_rst_object_directives_are_sections_under_their_names():
    doc = parsed("docs/api.rst", RST_PAGE)
    found = paths(doc)
    top, model = ("Package contents",), ("Package contents", "Object model")
    assert found["True on Python 2."] == (*top, "PY2")
    assert found["Get the ``self`` of bound method *meth*."] == (*model, "get_method_self()")
    assert found["get_method_self(obj.method)"] == (*model, "get_method_self()")  # its code too
    assert found["These accessors work on both versions."] == model  # after the description: the section's
    assert found["Stack(size)"] == (*model, "Stack")
    assert found["A bounded stack."] == (*model, "Stack")
    assert found["Put *item* on top."] == (*model, "Stack", "Stack.push()")
    assert found["How many items it holds."] == (*model, "Stack", "size")
    assert found["A stack is not thread-safe."] == (*model, "Stack")
    assert found["Parse the parameters of a function."] == (*model, "PyArg_ParseTuple()")
    assert found["The user's profile."] == (*model, "GET /users/(int:user_id)")
    assert found["Say more."] == (*model, "-v, --verbose")
    assert found["This paragraph only has a class."] == model  # docutils' class:: shows nothing, heads nothing
    assert "Ada Lovelace" not in doc.text and "special" not in doc.text  # Sphinx shows neither


GLOSSARY_RST = """\
Glossary
========

.. glossary::
   :sorted:

   API key
      A secret that identifies a caller.

   Chunk
   Piece
      A part of a document that is embedded.

      It is cut at sentences.

See also the index.
"""

GLOSSARY_HTML = """<html><body><h1>Glossary</h1><dl class="simple glossary">
<dt id="term-API-key">API key<a class="headerlink" href="#term-API-key">¶</a></dt>
<dd><p>A secret that identifies a caller.</p></dd>
<dt id="term-Chunk">Chunk<a class="headerlink" href="#term-Chunk">¶</a></dt><dt id="term-Piece">Piece</dt>
<dd><p>A part of a document that is embedded.</p><p>It is cut at sentences.</p></dd>
</dl><p>See also the index.</p></body></html>"""


def test_glossary_terms_are_sections_under_their_names():
    """A glossary's term heads its definition (its synonyms after it); the page's text after the
    glossary is its section's again."""
    for doc_id, text in (("docs/glossary.rst", GLOSSARY_RST), ("docs/glossary.html", GLOSSARY_HTML)):
        doc = parsed(doc_id, text)
        found = {text.strip().split("\n")[-1].strip(): path for text, path in paths(doc).items()}
        assert found["A secret that identifies a caller."] == ("Glossary", "API key"), doc_id
        assert found["A part of a document that is embedded."] == ("Glossary", "Chunk"), doc_id
        assert found["It is cut at sentences."] == ("Glossary", "Chunk"), doc_id
        assert found["See also the index."] == ("Glossary",), doc_id
        assert titles(doc) == ["Glossary", "API key", "Chunk"], doc_id


def test_object_names_as_sphinx_cites_them():
    cases = {("function", "acme.send(to, body) -> bool"): "acme.send()",
             ("py:class", "Stack[T](size)"): "Stack",
             ("py:method", "async Stack.pop()"): "Stack.pop()",
             ("c:function", "int PyArg_ParseTuple(PyObject *args, const char *format, ...)"): "PyArg_ParseTuple()",
             ("c:member", "PyObject* PyTypeObject.tp_dict"): "PyTypeObject.tp_dict",
             ("cpp:function", "template<typename T> void std::swap(T &a, T &b) noexcept"): "std::swap()",
             ("cpp:class", "template<class T> std::vector"): "std::vector",
             ("js:function", "$.getJSON(href, callback[, errback])"): "$.getJSON()",
             ("http:post", "/users/"): "POST /users/",
             ("envvar", "ACME_HOME"): "ACME_HOME",
             ("variable", "CMAKE_BUILD_TYPE"): "CMAKE_BUILD_TYPE"}
    for (directive, signature), name in cases.items():
        assert object_name(*object_kind(directive), signature) == name, directive
    for not_an_object in ("note", "role", "code-block", "py:module", "rst:note", "http:nothing", "toctree"):
        assert object_kind(not_an_object) is None, not_an_object


def test_chunks_break_between_objects_and_cite_them():
    """A page of functions whose descriptions are a few sentences each: every chunk holding a
    function's description cites that function (it was cited under the page's section, a
    description often cut from its signature)."""
    functions = [f"frobnicate_{n}" for n in range(12)]
    body = "".join(
        f".. function:: {name}(value, *, strict=False)\n\n"
        + "".join(f"   Sentence {k} about how {name} turns a value into another one, step {k} of the work.\n"
                  for k in range(6)) + "\n" for name in functions)
    doc = parsed("api.rst", "Reference\n=========\n\n" + body)
    profile = profile_from_config(ChunkingProfileConfig(name="p", strategy="markdown", max_tokens=200, min_tokens=50))
    chunks = chunk_document(doc, profile, get_token_counter("cl100k_base"), 8191).chunks
    for name in functions:
        holding = [c for c in chunks if f"how {name} turns" in c.text]
        assert holding and all(c.heading_path[-1] == f"{name}()" for c in holding), name


RST_LINES = [".. function:: f(x)", ".. class:: C", "   .. method:: C.m()", "      Body.", "   Text.", "Text.",
             "", "Title", "=====", ".. c:macro:: M", ".. class:: special", "   :noindex:", ".. note::", "Sub", "---",
             "   ", ".. option:: -v", "      .. data:: D", ".. glossary::", "   Term", "   Synonym", "      Def."]


@given(st.lists(st.sampled_from(RST_LINES), max_size=16))
@settings(max_examples=300, deadline=None)
def test_restructuredtext_objects_have_ordered_elements_and_nested_paths(lines):
    """Every element lies in the text, in order; an object's title ends its own heading path."""
    from rag_assets.core.parsing.rst import rst_as_shown

    shown, elements = rst_as_shown("\n".join(lines) + "\n")
    ends = 0
    for element in elements:
        body = shown[element.start : element.end]
        assert ends <= element.start < element.end <= len(shown) and body.strip() == body
        if element.category == "Title":
            assert element.heading_path and element.heading_path[-1]
        ends = element.end
