"""Visio drawings (.vsdx) as Visio writes them, for tests: pages of shapes and connectors, a
master, a background page, document properties."""

from __future__ import annotations

from tests.support.opendocument import saved_zip

_NS = ("xmlns='http://schemas.microsoft.com/office/visio/2012/main' "
       "xmlns:r='http://schemas.openxmlformats.org/officeDocument/2006/relationships'")
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_BACKGROUND = " Background='1'"


def shape(shape_id: int, text: str = "", x: float = 0, y: float = 0, height: float = 0.5, inner: str = "",
          master: int | None = None, master_shape: int | None = None, data: str = "") -> str:
    """A shape at (``x``, ``y``) inches (its centre; y counts up) showing ``text`` ("": none of its
    own), holding the shapes ``inner`` (a group), an instance of ``master``'s, with the shape data
    rows ``data`` (``field``'s)."""
    attributes = (f" Master='{master}'" if master is not None else "") + \
        (f" MasterShape='{master_shape}'" if master_shape is not None else "")
    cells = f"<Cell N='PinX' V='{x}'/><Cell N='PinY' V='{y}'/><Cell N='Height' V='{height}'/>" + \
        (f"<Section N='Property'>{data}</Section>" if data else "")
    return (f"<Shape ID='{shape_id}' Type='{'Group' if inner else 'Shape'}'{attributes}>{cells}"
            + (f"<Text><cp IX='0'/>{text}</Text>" if text else "") + (f"<Shapes>{inner}</Shapes>" if inner else "")
            + "</Shape>")


def field(name: str, value: str = "", label: str = "", hidden: bool = False) -> str:
    """A shape data row ``name`` holding ``value`` ("": none, as Visio writes an empty field),
    labelled ``label`` where given."""
    stored = f"<Cell N='Value' V='{value}' U='STR'/>" if value else "<Cell N='Value' V='0' F='No Formula'/>"
    return (f"<Row N='{name}'>{stored}" + (f"<Cell N='Label' V='{label}'/>" if label else "")
            + f"<Cell N='Invisible' V='{int(hidden)}'/></Row>")


def connect(connector: int, begin: int | None, end: int | None) -> str:
    """Connector ``connector`` glued at its begin to shape ``begin``, at its end to ``end``."""
    return "".join(f"<Connect FromSheet='{connector}' FromCell='{cell}' FromPart='9' ToSheet='{to}' ToCell='PinX'/>"
                   for cell, to in (("BeginX", begin), ("EndX", end)) if to is not None)


def drawing(pages: list[tuple[str, str, str]], background: str = "", master: str = "", title: str = "",
            keywords: str = "") -> bytes:
    """A drawing of foreground ``pages`` (name, shapes, connects), a background page of shapes
    ``background`` and master 2 of shapes ``master`` where given, titled ``title``."""
    listed = [(name, shapes, connects, False) for name, shapes, connects in pages]
    listed += [("Background-1", background, "", True)] if background else []
    members = {
        "[Content_Types].xml": "<Types xmlns='http://schemas.openxmlformats.org/package/2006/content-types'/>",
        "visio/pages/pages.xml": f"<Pages {_NS}>" + "".join(
            f"<Page ID='{n}' Name='{name}'{_BACKGROUND if back else ''}><Rel r:id='rId{n}'/></Page>"
            for n, (name, _, _, back) in enumerate(listed, start=1)) + "</Pages>",
        "visio/pages/_rels/pages.xml.rels": f"<Relationships xmlns='{_RELS}'>" + "".join(
            f"<Relationship Id='rId{n}' Type='http://schemas.microsoft.com/visio/2010/relationships/page' "
            f"Target='page{n}.xml'/>" for n in range(1, len(listed) + 1)) + "</Relationships>",
        **{f"visio/pages/page{n}.xml": f"<PageContents {_NS}><Shapes>{shapes}</Shapes><Connects>{connects}</Connects>"
           "</PageContents>" for n, (_, shapes, connects, _) in enumerate(listed, start=1)},
        "docProps/core.xml": "<cp:coreProperties xmlns:cp='http://schemas.openxmlformats.org/package/2006/metadata/"
                             f"core-properties' xmlns:dc='http://purl.org/dc/elements/1.1/'><dc:title>{title}</dc:title>"
                             f"<cp:keywords>{keywords}</cp:keywords></cp:coreProperties>"}
    if master:
        members["visio/masters/masters.xml"] = f"<Masters {_NS}><Master ID='2' NameU='Process'><Rel r:id='rId1'/></Master></Masters>"
        members["visio/masters/_rels/masters.xml.rels"] = (
            f"<Relationships xmlns='{_RELS}'><Relationship Id='rId1' "
            "Type='http://schemas.microsoft.com/visio/2010/relationships/master' Target='master1.xml'/></Relationships>")
        members["visio/masters/master1.xml"] = f"<MasterContents {_NS}><Shapes>{master}</Shapes></MasterContents>"
    return saved_zip(members)
