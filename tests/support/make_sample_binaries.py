"""Regenerate the binary sample documents (PDF, DOCX, a scanned PDF) from the text below.

Run: .venv/bin/python tests/support/make_sample_binaries.py  (writes into sample_docs/)
The PDF is written by hand (PDF 1.4, Helvetica, one text block per page) so no PDF library is needed.
"""

from __future__ import annotations

from pathlib import Path

from docx import Document

ROOT = Path(__file__).resolve().parents[2] / "sample_docs"

PDF_PAGES = [
    [
        "Robot Maintenance Guide",
        "",
        "This guide describes routine maintenance for Northwind R3 and R4 cleaning robots.",
        "Regular maintenance keeps suction strong and extends battery life.",
        "",
        "Weekly tasks",
        "Empty the dust bin after every cleaning run and wash it with water once a week.",
        "Let the bin dry for 24 hours before putting it back into the robot.",
        "Wipe the cliff sensors on the underside with a dry microfibre cloth.",
    ],
    [
        "Monthly tasks",
        "",
        "Remove the main brush and cut away hair wrapped around it.",
        "Check the drive wheels for trapped threads and clean the wheel axles.",
        "Replace the side brush when its bristles are bent or shorter than 2 cm.",
        "Calibrate the bumper by pressing it gently five times while the robot is on.",
    ],
    [
        "Battery care",
        "",
        "The lithium-ion battery lasts about 500 full charge cycles.",
        "Store a robot that is not used for months at 40 to 60 percent charge.",
        "Never leave the robot in a car or in direct sunlight above 40 degrees Celsius.",
        "If the battery health shown in the app drops below 70 percent, order part NW-BATT-5200.",
    ],
]

# A paper notice, scanned: the sample's document read by OCR.
SCANNED_PAGES = [
    [
        ("Fire Safety Notice", 20),
        "",
        "In a fire alarm, leave the building by the nearest stairway. Never use the lifts.",
        "The assembly point is the north car park, next to bay 12.",
        "",
        ("Fire wardens", 16),
        "",
        "Each floor has two fire wardens. They wear yellow vests and count everyone",
        "at the assembly point before the fire brigade arrives.",
        "Evacuation drills take place every March and September.",
    ],
]

# A German fire safety notice (write_pdf(..., latin1=True)): read by OCR, its umlauts and ß need
# the German model (ocr_languages: deu).
GERMAN_PAGES = [[
    ("Brandschutzordnung für das Bürogebäude", 16),
    "Bei Feueralarm verlassen alle Mitarbeiterinnen und Mitarbeiter",
    "das Gebäude über die gekennzeichneten Fluchtwege. Die Aufzüge",
    "dürfen nicht benutzt werden. Sammelplatz ist der Parkplatz an",
    "der Südseite, gegenüber der größeren Halle. Die Brandschutzhelfer",
    "prüfen, ob alle Räume geräumt sind, und melden dies der Feuerwehr.",
    "Schäden an Feuerlöschern sind sofort zu melden (Straße 14, Büro 3).",
]]

DOCX_SECTIONS = [
    ("Travel Policy", None),
    ("Booking Travel", "Book all business travel through the travel portal. Trains are preferred for trips under "
                       "six hours; flights need director approval when a train would take less than six hours."),
    ("Hotels", "Choose hotels from the preferred list where possible. The nightly limit is 180 EUR, or 240 EUR "
               "in London, Paris and Zurich."),
    ("Travel Insurance", "All employees are covered by the company travel insurance on business trips, including "
                         "medical emergencies abroad. Download the insurance card from the HR portal before you leave."),
    ("Per Diem", "Instead of meal receipts you may claim a per diem of 42 EUR for a full day and 28 EUR for a day "
                 "of arrival or departure."),
]


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def write_pdf(path: Path, pages: list[list[str | tuple[str, float]]], keywords: str | None = None,
              drawings: dict[int, list[str]] | None = None, outline: list[tuple[int, str, int]] | None = None,
              outline_cycle: bool = False, outline_names: bool = False, latin1: bool = False) -> None:
    """A PDF of one page per list of lines (Helvetica 12, or a ``(line, size)`` at that size; ``latin1``:
    in WinAnsiEncoding, so lines may hold Latin-1 letters such as ä and ß), with
    ``keywords`` in its document information when given, ``drawings`` (page index -> content
    stream operators, e.g. a table's text and ruling lines) drawn after a page's lines, and an
    ``outline`` (bookmarks: (depth from 1, title, page index) in order; ``outline_cycle``: the last
    top-level entry's /Next points back at the first, as a damaged file's may; ``outline_names``:
    each entry goes to a named destination through a GoTo action, as pdfTeX writes them)."""
    objects: list[bytes] = []
    page_ids = []
    font_id = 3
    next_id = 4
    page_objects = []
    for index, lines in enumerate(pages):
        ops = ["BT", "/F1 12 Tf", "14 TL", "72 740 Td"]
        for line in lines:
            if isinstance(line, str):
                ops.append(f"({_pdf_escape(line)}) Tj T*")
            else:
                text, size = line
                ops += [f"/F1 {size:g} Tf", f"{size * 1.4:g} TL", f"({_pdf_escape(text)}) Tj T*", "/F1 12 Tf", "14 TL"]
        ops.append("ET")
        ops += (drawings or {}).get(index, [])
        stream = "\n".join(ops).encode("latin-1")
        content_id, page_id = next_id, next_id + 1
        next_id += 2
        page_ids.append(page_id)
        page_objects.append((content_id, b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"))
        page_objects.append(
            (page_id, f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_id} 0 R "
                      f"/Resources << /Font << /F1 {font_id} 0 R >> >> >>".encode())
        )
    outline_objects, outline_ref = _pdf_outline(outline or [], page_ids, next_id + bool(keywords), outline_cycle,
                                                outline_names)
    objects = [
        (1, f"<< /Type /Catalog /Pages 2 0 R{outline_ref} >>".encode()),
        (2, f"<< /Type /Pages /Kids [{' '.join(f'{p} 0 R' for p in page_ids)}] /Count {len(page_ids)} >>".encode()),
        (font_id, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica%s >>"
                  % (b" /Encoding /WinAnsiEncoding" if latin1 else b"")),
        *page_objects,
        *([(next_id, f"<< /Keywords ({_pdf_escape(keywords)}) >>".encode("latin-1"))] if keywords else []),
        *outline_objects,
    ]
    path.write_bytes(_pdf_file(sorted(objects), f" /Info {next_id} 0 R" if keywords else ""))


def _pdf_file(objects: list[tuple[int, bytes]], info: str = "") -> bytes:
    """A PDF file of ``objects`` ((number, body), numbered 1, 2, ... in order; 1 the catalog),
    ``info`` added to its trailer."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for obj_id, body in objects:
        offsets[obj_id] = len(out)
        out += f"{obj_id} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for obj_id, _ in objects:
        out += f"{offsets[obj_id]:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _pdf_outline(entries: list[tuple[int, str, int]], page_ids: list[int], first_id: int, cycle: bool,
                 names: bool) -> tuple[list[tuple[int, bytes]], str]:
    """The objects of an outline of ``entries`` (see ``write_pdf``), numbered from ``first_id``
    (the root's), and the catalog's entries for it ("" when there is none)."""
    if not entries:
        return [], ""
    ids = [first_id + 1 + n for n in range(len(entries))]
    parent, children = {}, {first_id: []}
    stack = [(0, first_id)]
    for n, (depth, _, _) in enumerate(entries):
        while stack[-1][0] >= depth:
            stack.pop()
        parent[n] = stack[-1][1]
        children[stack[-1][1]].append(ids[n])
        children[ids[n]] = []
        stack.append((depth, ids[n]))
    links = {}
    for node, kids in children.items():
        for a, b in zip(kids, kids[1:]):
            links[a] = f" /Next {b} 0 R"
    if cycle:
        links[children[first_id][-1]] = f" /Next {children[first_id][0]} 0 R"
    def first_last(node):
        kids = children[node]
        return f" /First {kids[0]} 0 R /Last {kids[-1]} 0 R /Count {len(kids)}" if kids else ""
    objects = [(first_id, f"<< /Type /Outlines{first_last(first_id)} >>".encode())]
    dests = [f"[{page_ids[page]} 0 R /XYZ 0 792 0]" for _, _, page in entries]
    for n, (_, title, page) in enumerate(entries):
        target = f"/A << /S /GoTo /D (d{n:04d}) >>" if names else f"/Dest {dests[n]}"
        objects.append((ids[n], f"<< /Title ({_pdf_escape(title)}) /Parent {parent[n]} 0 R{links.get(ids[n], '')}"
                                f"{first_last(ids[n])} {target} >>".encode("latin-1")))
    named = " ".join(f"(d{n:04d}) {dest}" for n, dest in enumerate(dests))
    return objects, f" /Outlines {first_id} 0 R" + (f" /Names << /Dests << /Names [{named}] >> >>" if names else "")


def scanned(pdf: bytes, dpi: int = 200, stamp: str | None = None) -> bytes:
    """An image-only PDF of ``pdf``'s pages, as a scanner writes one: each page rendered at ``dpi``
    (pdfium), stored as a grayscale image covering a page of the same size; ``stamp`` (Helvetica
    8, with the page number) in each page's text layer at its foot, as some scanners write."""
    import zlib

    import pypdfium2

    objects: list[tuple[int, bytes]] = [(3, b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")]
    page_ids = []
    for index, page in enumerate(pypdfium2.PdfDocument(pdf), start=1):
        width, height = page.get_size()
        image = page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L")
        pixels = zlib.compress(image.tobytes())
        image_id, content_id, page_id = 1 + 3 * index, 2 + 3 * index, 3 + 3 * index
        ops = f"q {width:g} 0 0 {height:g} 0 0 cm /Im1 Do Q"
        if stamp:
            ops += f" BT /F1 8 Tf 36 12 Td ({_pdf_escape(stamp)} {index}) Tj ET"
        objects += [
            (image_id, b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                       b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n" % (*image.size, len(pixels))
                       + pixels + b"\nendstream"),
            (content_id, b"<< /Length %d >>\nstream\n%s\nendstream" % (len(ops), ops.encode("latin-1"))),
            (page_id, f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width:g} {height:g}] /Contents {content_id} 0 R "
                      f"/Resources << /XObject << /Im1 {image_id} 0 R >> /Font << /F1 3 0 R >> >> >>".encode()),
        ]
        page_ids.append(page_id)
    objects += [(1, b"<< /Type /Catalog /Pages 2 0 R >>"),
                (2, f"<< /Type /Pages /Kids [{' '.join(f'{p} 0 R' for p in page_ids)}] /Count {len(page_ids)} >>".encode())]
    return _pdf_file(sorted(objects))


def write_docx(path: Path) -> None:
    doc = Document()
    doc.core_properties.title = "Travel Policy"
    for heading, body in DOCX_SECTIONS:
        doc.add_heading(heading, level=1 if body is None else 2)
        if body:
            doc.add_paragraph(body)
    doc.save(path)


if __name__ == "__main__":
    write_pdf(ROOT / "handbook" / "robot_maintenance_guide.pdf", PDF_PAGES)
    write_docx(ROOT / "handbook" / "travel_policy.docx")
    notice = ROOT / "handbook" / "fire_safety_notice_scan.pdf"
    write_pdf(notice, SCANNED_PAGES)
    notice.write_bytes(scanned(notice.read_bytes(), stamp="Scanned at Northwind reception"))
