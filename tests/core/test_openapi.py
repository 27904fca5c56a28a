"""OpenAPI and Swagger descriptions (YAML or JSON) read as an API reference: each operation a
section under its tag with tables of its parameters and responses, each schema with its
properties; other YAML and JSON read as before."""

import json

from rag_assets.core.hashing import content_hash
from rag_assets.core.models import RawDocument
from rag_assets.core.parsing import parse_document


def parsed(doc_id: str, data: bytes):
    return parse_document(RawDocument(doc_id, f"file:///{doc_id}", content_hash(data), len(data), "v1", data))


def blocks(doc) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {doc.text[e.start : e.end]: (e.category, e.heading_path) for e in doc.elements}


OPENAPI = b"""openapi: 3.0.3
info:
  title: Dock API
  version: "2.4"
  description: Control charging docks.
tags:
  - name: docks
    description: Dock operations
paths:
  /docks/{dockId}/firmware:
    parameters:
      - $ref: '#/components/parameters/DockId'
    post:
      tags: [docks]
      summary: Start a firmware update
      parameters:
        - name: force
          in: query
          schema: {type: boolean}
          description: Update even when charging.
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Update'}
      responses:
        '202': {description: Update started}
        '409':
          description: An update is running
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Error'}
  /health:
    get:
      summary: Liveness probe
      responses:
        '200': {description: OK}
components:
  parameters:
    DockId: {name: dockId, in: path, required: true, schema: {type: string, format: uuid}, description: The dock.}
  schemas:
    Update:
      type: object
      required: [version]
      properties:
        version: {type: string, description: Firmware version to install.}
        channels: {type: array, items: {type: string, enum: [stable, beta]}}
    Error:
      type: object
      properties:
        message: {type: string}
"""


def test_an_openapi_description_reads_as_its_reference():
    doc = parsed("api/docks.yaml", OPENAPI)
    found = blocks(doc)
    top, operation = ("Dock API 2.4",), ("Dock API 2.4", "docks", "POST /docks/{dockId}/firmware")
    assert doc.title == "Dock API"
    assert found["Start a firmware update"] == ("NarrativeText", operation)
    assert found["| Parameter | In | Required | Type | Description |\n| --- | --- | --- | --- | --- |\n"
                 "| dockId | path | yes | string (uuid) | The dock. |\n"
                 "| force | query | no | boolean | Update even when charging. |"] == ("Table", operation)
    assert found["Request body (required): application/json: Update"] == ("NarrativeText", operation)
    assert "| 409 | An update is running | application/json: Error |" in doc.text
    assert found["Liveness probe"] == ("NarrativeText", (*top, "GET /health"))  # untagged: at the top
    assert "| channels | array of string (one of: stable, beta) | no |  |" in doc.text
    assert found["| Property | Type | Required | Description |\n| --- | --- | --- | --- |\n"
                 "| version | string | yes | Firmware version to install. |\n"
                 "| channels | array of string (one of: stable, beta) | no |  |"] == ("Table", (*top, "Schemas", "Update"))
    assert "$ref" not in doc.text and "openapi:" not in doc.text


def test_a_swagger_2_description_in_json_reads_alike():
    spec = {"swagger": "2.0", "info": {"title": "Legacy Docks", "version": "1"},
            "paths": {"/docks": {"put": {"summary": "Replace the docks", "parameters": [
                {"name": "body", "in": "body", "required": True, "schema": {"type": "array", "items": {"$ref": "#/definitions/Dock"}},
                 "description": "Every dock"}], "responses": {"200": {"description": "Replaced", "schema": {"$ref": "#/definitions/Dock"}}}}}},
            "definitions": {"Dock": {"type": "object", "properties": {"site": {"type": "string"}}}}}
    doc = parsed("api/legacy.json", json.dumps(spec).encode())
    found = blocks(doc)
    assert found["Request body: array of Dock — Every dock"] == ("NarrativeText", ("Legacy Docks 1", "PUT /docks"))
    assert "| 200 | Replaced | Dock |" in doc.text and found["Dock"][0] == "Title"


def test_other_yaml_and_json_read_as_before():
    config = b"services:\n  web:\n    image: nginx\n    ports: ['80:80']\n"
    assert parsed("compose.yaml", config).text == config.decode()
    text = b"openapi: 3.0.0\ninfo: {title: Draft}\n"  # no paths: no API to read
    assert parsed("draft.yaml", text).text == text.decode()
