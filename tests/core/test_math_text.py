"""Equations as a line of text: MathML (web pages, OpenDocument formulas) read as Word's are."""

import pytest
from lxml import etree
from lxml import html as lxml_html

from rag_assets.core.parsing.math_text import mathml_text, omml_text

MATHML = "http://www.w3.org/1998/Math/MathML"


def _xml(body: str):
    return etree.fromstring(f'<math xmlns="{MATHML}">{body}</math>')


@pytest.mark.parametrize("body, text", [
    ("<mi>E</mi><mo>=</mo><mi>m</mi><msup><mi>c</mi><mn>2</mn></msup>", "E=mc^2"),
    # a part holding an operator is bracketed; a bracketed one is not bracketed again
    ("<mfrac><mrow><mi>a</mi><mo>+</mo><mi>b</mi></mrow><mn>2</mn></mfrac>", "(a+b)/2"),
    ("<mfrac><mrow><mo>(</mo><mi>a</mi><mo>+</mo><mi>b</mi><mo>)</mo></mrow><mn>2</mn></mfrac>", "(a+b)/2"),
    # a sum's limits, then its summand after a space; a script ends before the letter after it
    ("<munderover><mo>∑</mo><mrow><mi>i</mi><mo>=</mo><mn>1</mn></mrow><mi>n</mi></munderover>"
     "<msub><mi>x</mi><mi>i</mi></msub><mo>\u2062</mo><mi>y</mi>", "∑_(i=1)^n x_i y"),
    ("<msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup>", "x_i^2"),
    ("<msqrt><mi>x</mi><mo>+</mo><mn>1</mn></msqrt>", "√(x+1)"),
    ("<mroot><mi>x</mi><mn>3</mn></mroot>", "3√x"),
    ("<mi>sin</mi><mo>\u2061</mo><mi>θ</mi>", "sin θ"),  # function application reads as a space
    ('<mover accent="true"><mi>x</mi><mo>¯</mo></mover>', "x\u0304"),  # an accent is no power: its combining mark
    ("<mover><mi>β</mi><mo>^</mo></mover><mo>=</mo><mfrac><mn>1</mn><mi>n</mi></mfrac><mo>∑</mo><mi>y</mi>",
     "β\u0302=1/n ∑y"),
    ('<mfenced open="[" close="]"><mi>a</mi><mi>b</mi></mfenced>', "[a,b]"),
    ('<mfenced separators=""><mi>a</mi><mi>b</mi></mfenced>', "(ab)"),
    ("<mtable><mtr><mtd><mn>1</mn></mtd><mtd><mn>0</mn></mtd></mtr><mtr><mtd><mn>0</mn></mtd><mtd><mn>1</mn></mtd>"
     "</mtr></mtable>", "1, 0; 0, 1"),
    ('<mrow><mo>(</mo><mtable><mtr><mtd><mi>a</mi></mtd></mtr><mtr><mtd><mi>b</mi></mtd></mtr></mtable><mo>)</mo></mrow>',
     "(a; b)"),
    # the rendering, not its TeX or StarMath source
    ('<semantics><mrow><mi>x</mi><mo>≤</mo><mn>1</mn></mrow><annotation encoding="StarMath 5.0">x &lt;= 1</annotation>'
     "</semantics>", "x≤1"),
    ("<mtext>rate</mtext><mspace/><mo>=</mo><mspace/><mtext>cost over time</mtext>", "rate = cost over time"),
    ('<mi>x</mi><mspace width="-0.167em"/><mi>y</mi>', "xy"),
])
def test_mathml_reads_as_a_line_of_text(body, text):
    assert mathml_text(_xml(body)) == text


def test_mathml_as_an_html_parser_leaves_it_reads_alike():
    """A web page's <math>: no namespace, and a MathML entity HTML does not know left as written."""
    page = ("<math><mrow><mn>2</mn><mo>&InvisibleTimes;</mo><msub><mi>x</mi><mn>0</mn></msub><mo>&PlusMinus;</mo>"
            "<mn>1</mn></mrow></math>")
    assert mathml_text(lxml_html.fragment_fromstring(page)) == "2x_0±1"
    prefixed = etree.fromstring(f'<mml:math xmlns:mml="{MATHML}"><mml:msup><mml:mi>e</mml:mi><mml:mrow><mml:mi>i</mml:mi>'
                                "<mml:mi>π</mml:mi></mml:mrow></mml:msup></mml:math>")
    assert mathml_text(prefixed) == "e^iπ"


def test_a_word_equation_s_script_ends_before_the_letter_after_it():
    """Word's linear format ends a script with a space: "x_i y" ("x_iy" read as x sub iy)."""
    m = "http://schemas.openxmlformats.org/officeDocument/2006/math"
    equation = etree.fromstring(f'<m:oMath xmlns:m="{m}"><m:sSub><m:e><m:r><m:t>x</m:t></m:r></m:e><m:sub><m:r><m:t>i</m:t>'
                                "</m:r></m:sub></m:sSub><m:r><m:t>y+</m:t></m:r><m:sSup><m:e><m:r><m:t>z</m:t></m:r></m:e>"
                                "<m:sup><m:r><m:t>2</m:t></m:r></m:sup></m:sSup><m:r><m:t>+1</m:t></m:r></m:oMath>")
    assert omml_text(equation) == "x_i y+z^2+1"
