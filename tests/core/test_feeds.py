"""RSS and Atom feeds (Jira's XML export among them) read as a feed reader shows them: each item
under its title, its content's HTML read as a page's; other XML stays text."""

from tests.support.documents import parsed


def paths(doc) -> dict[str, tuple[str, ...]]:
    return {doc.text[e.start : e.end]: e.heading_path for e in doc.elements}


RSS = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"
     xmlns:wfw="http://wellformedweb.org/CommentAPI/" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel><title>Acme Engineering</title><description>Notes from the dock team.</description>
<item><title>Firmware 2.4 is out</title><link>https://acme.example/2-4</link>
<pubDate>Mon, 01 Mar 2021 10:00:00 +0000</pubDate><dc:creator>Alice Smith</dc:creator>
<description>Short summary.</description>
<content:encoded><![CDATA[<p>The dock now charges <b>twice</b> as fast.</p><main>Reset it after the update.</main>
<script>track()</script><ul><li>Battery check</li><li>New LED codes</li></ul>]]></content:encoded>
<wfw:commentRss>https://acme.example/2-4/feed</wfw:commentRss></item>
<item><title>Second post</title><description>&lt;p&gt;Plain &amp;amp; simple.&lt;/p&gt;</description></item>
</channel></rss>"""


def test_an_rss_feed_reads_as_its_items():
    doc = parsed("feeds/engineering.xml", RSS)
    found = paths(doc)
    first = ("Acme Engineering", "Firmware 2.4 is out")
    assert doc.title == "Acme Engineering"
    assert found["Mon, 01 Mar 2021 10:00:00 +0000 · Alice Smith"] == first
    assert found["The dock now charges twice as fast."] == first  # the full content, not the summary
    assert found["Reset it after the update."] == first  # a <main> in a post is no page's main
    assert found["Battery check"] == first and found["Plain & simple."] == ("Acme Engineering", "Second post")
    assert parsed("feeds/bom.xml", b"\xef\xbb\xbf" + RSS).text == doc.text  # behind UTF-8's byte order mark too
    for unshown in ("Short summary", "track()", "commentRss", "<p>", "&amp;"):
        assert unshown not in doc.text, unshown


JIRA = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="0.92"><channel><title>Acme JIRA</title>
<item><title>[OPS-12] Dock firmware update fails on 2.3</title>
<link>https://jira.acme.example/browse/OPS-12</link><key id="10012">OPS-12</key>
<summary>Dock firmware update fails on 2.3</summary>
<description>&lt;p&gt;Updating stops at 80%.&lt;/p&gt;</description>
<status id="5">Resolved</status><assignee username="bob">Bob Jones</assignee>
<comments><comment id="1" author="alice" created="Mon, 1 Mar 2021 10:00:00 +0000">&lt;p&gt;Fixed in 2.4.1.&lt;/p&gt;</comment></comments>
</item></channel></rss>"""


def test_a_jira_export_reads_as_its_issues_with_their_fields_and_comments():
    doc = parsed("jira/ops.xml", JIRA)
    issue = ("Acme JIRA", "[OPS-12] Dock firmware update fails on 2.3")
    found = paths(doc)
    assert found["Updating stops at 80%."] == issue
    assert found["status: Resolved"] == found["assignee (bob): Bob Jones"] == found["key: OPS-12"] == issue
    assert "comment (alice, Mon, 1 Mar 2021 10:00:00 +0000):" in doc.text and found["Fixed in 2.4.1."] == issue


def test_an_atom_feed_and_a_legacy_encoding_read_whole():
    atom = b"""<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">
<title>Status</title><entry><title>Outage resolved</title><updated>2024-05-01T09:00:00Z</updated>
<author><name>Ops</name></author><link href="https://status.example/1"/>
<content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>All docks are back.</p></div></content>
</entry></feed>"""
    found = paths(parsed("status.atom.xml", atom))
    assert found["All docks are back."] == ("Status", "Outage resolved")
    assert found["2024-05-01T09:00:00Z · Ops"] == ("Status", "Outage resolved")
    # TIS-620 declared, a windows-874 quote used (as browsers read it): libxml2 stopped there, losing every item after
    thai = ('<?xml version="1.0" encoding="tis-620"?><rss version="2.0"><channel><title>ข่าว</title>'
            '<item><title>\u201cหนึ่ง\u201d</title><description>แรก</description></item>'
            '<item><title>สอง</title><description>ที่สอง</description></item></channel></rss>').encode("cp874")
    doc = parsed("news.xml", thai)
    assert paths(doc)["ที่สอง"] == ("ข่าว", "สอง") and "\u201cหนึ่ง\u201d" in doc.text


def test_other_xml_stays_text():
    config = b'<?xml version="1.0"?>\n<project><modelVersion>4.0.0</modelVersion><artifactId>acme</artifactId></project>\n'
    assert parsed("pom.xml", config).text == config.decode()  # a build file, as it is written
