"""An HTTP API's OpenAPI (3.x) or Swagger (2.0) description, JSON or YAML, read as its reference: the
API's title and description; each operation a section "GET /pets/{petId}" under its tag (else at the
top), with its summary and description, a table of its parameters, its request body and a table of
its responses; then each schema under "Schemas" with a table of its properties. A ``$ref`` reads as
the name it points to ("Pet")."""

from __future__ import annotations

import re

from rag_assets.core.parsing.structure import markdown_table

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_TYPE_DEPTH = 4  # how deep a type is spelled out ("array of array of Pet")
_YAML_SPEC = re.compile(r"^(?:openapi|swagger)\s*:\s*[\"']?[23]\.", re.M)


def is_openapi_yaml(text: str) -> bool:
    """Whether ``text`` opens an OpenAPI or Swagger description written in YAML (a top-level
    ``openapi: 3...`` or ``swagger: "2.0"`` line)."""
    return _YAML_SPEC.search(text[:65536]) is not None


def openapi_items(spec) -> tuple[list[tuple], str] | None:
    """Items (``join_elements``' tuples) of an OpenAPI or Swagger description and its title, or None
    for a value that is none (no ``openapi: 3.x`` or ``swagger: 2.0``, or no ``paths``)."""
    if not isinstance(spec, dict) or not isinstance(spec.get("paths"), dict) \
            or not (str(spec.get("openapi", "")).startswith("3") or str(spec.get("swagger", "")).startswith("2")):
        return None
    info = spec.get("info") if isinstance(spec.get("info"), dict) else {}
    title = " ".join(str(info.get("title") or "").split())
    items: list[tuple] = []
    if title:
        items.append(("Title", title + (f" {info['version']}" if info.get("version") else ""), None, 1))
    items += _prose(info.get("description"))
    operations = [(path, method, op) for path, entry in spec["paths"].items() if isinstance(entry, dict)
                  for method, op in entry.items() if method in METHODS and isinstance(op, dict)]
    tags = [t.get("name") for t in spec.get("tags") or () if isinstance(t, dict) and t.get("name")]
    for _, _, op in operations:
        tags += [tag for tag in op.get("tags") or () if isinstance(tag, str) and tag not in tags]
    described = {t.get("name"): t.get("description") for t in spec.get("tags") or () if isinstance(t, dict)}
    for tag in [*tags, None]:  # an operation under each of its tags; one without any at the top
        under = [(p, m, op) for p, m, op in operations
                 if (tag in (op.get("tags") or ()) if tag is not None else not (op.get("tags") or ()))]
        if not under:
            continue
        if tag is not None:
            items += [("Title", str(tag), None, 2), *_prose(described.get(tag))]
        for path, method, op in under:
            items += _operation(spec, path, method, op, 3 if tag is not None else 2)
    schemas = (spec.get("components") or {}).get("schemas") if isinstance(spec.get("components"), dict) else None
    schemas = schemas if isinstance(schemas, dict) else spec.get("definitions")
    if isinstance(schemas, dict) and schemas:
        items.append(("Title", "Schemas", None, 2))
        for name, schema in schemas.items():
            items += _schema(str(name), schema)
    return items, title


def _operation(spec: dict, path: str, method: str, op: dict, level: int) -> list[tuple]:
    name = f"{method.upper()} {path}"
    items = [("Title", name, None, level)]
    items += _prose(op.get("summary"))
    items += _prose(op.get("description"))
    if op.get("deprecated"):
        items.append(("NarrativeText", "Deprecated.", None))
    shared = spec["paths"][path].get("parameters") or []
    parameters = [p for p in [*shared, *(op.get("parameters") or [])] if isinstance(p, dict)]
    rows = [["Parameter", "In", "Required", "Type", "Description"]]
    for parameter in parameters:
        parameter = _resolved(spec, parameter)
        if parameter.get("in") == "body":  # Swagger 2.0's request body
            items.append(("NarrativeText", f"Request body: {_type(parameter.get('schema'))}"
                          + _after(parameter.get("description")), None))
            continue
        rows.append([str(parameter.get("name", "")), str(parameter.get("in", "")),
                     "yes" if parameter.get("required") else "no",
                     _type(parameter.get("schema") or parameter), _line(parameter.get("description"))])
    if len(rows) > 1:
        items.append(("Table", markdown_table(rows), None))
    body = _resolved(spec, op.get("requestBody")) if isinstance(op.get("requestBody"), dict) else None
    if body:
        media = body.get("content") if isinstance(body.get("content"), dict) else {}
        kinds = _media(media)
        items.append(("NarrativeText", f"Request body{' (required)' if body.get('required') else ''}: {kinds}"
                      + _after(body.get("description")), None))
    responses = op.get("responses") if isinstance(op.get("responses"), dict) else {}
    rows = [["Response", "Description", "Body"]]
    for status, response in responses.items():
        response = _resolved(spec, response) if isinstance(response, dict) else {}
        media = response.get("content") if isinstance(response.get("content"), dict) else {}
        shape = _media(media) or (_type(response["schema"]) if "schema" in response else "")
        rows.append([str(status), _line(response.get("description")), shape])
    if len(rows) > 1:
        items.append(("Table", markdown_table(rows), None))
    return items


def _media(content: dict) -> str:
    """A request's or response's body by media type: "application/json: Pet"."""
    return "; ".join(f"{kind}: {_type(media.get('schema') if isinstance(media, dict) else None)}"
                     for kind, media in content.items())


def _schema(name: str, schema) -> list[tuple]:
    items = [("Title", name, None, 3)]
    if not isinstance(schema, dict):
        return items
    items += _prose(schema.get("description"))
    parts = [f"{word}: {', '.join(_type(s) for s in schema[key])}" for key, word in
             (("allOf", "All of"), ("oneOf", "One of"), ("anyOf", "Any of")) if isinstance(schema.get(key), list)]
    if parts or schema.get("type") not in (None, "object"):
        items.append(("NarrativeText", "; ".join(parts) or f"Type: {_type(schema)}", None))
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    required = set(schema.get("required") or ()) if isinstance(schema.get("required"), list) else set()
    rows = [["Property", "Type", "Required", "Description"]]
    rows += [[str(prop), _type(value), "yes" if prop in required else "no",
              _line(value.get("description") if isinstance(value, dict) else "")] for prop, value in properties.items()]
    if len(rows) > 1:
        items.append(("Table", markdown_table(rows), None))
    return items


def _type(schema, depth: int = 0) -> str:
    """A schema spelled as a type: a ``$ref`` as its name, "array of Pet", "string (date-time)",
    "string (one of: available, sold)", "one of Cat, Dog"."""
    if not isinstance(schema, dict) or depth > MAX_TYPE_DEPTH:
        return ""
    if isinstance(schema.get("$ref"), str):
        return schema["$ref"].rsplit("/", 1)[-1]
    for key, word in (("oneOf", "one of"), ("anyOf", "any of"), ("allOf", "all of")):
        if isinstance(schema.get(key), list):
            return f"{word} {', '.join(_type(s, depth + 1) for s in schema[key])}"
    kind = schema.get("type") or ("object" if "properties" in schema else "")
    kind = " or ".join(map(str, kind)) if isinstance(kind, list) else str(kind)
    if kind == "array":
        return f"array of {_type(schema.get('items'), depth + 1) or 'values'}"
    notes = [str(schema["format"])] if schema.get("format") else []
    if isinstance(schema.get("enum"), list):
        notes.append("one of: " + ", ".join(map(str, schema["enum"][:20])))
    return kind + (f" ({'; '.join(notes)})" if notes else "")


def _resolved(spec: dict, value):
    """``value``, or what its local ``$ref`` ("#/components/parameters/limit") points to."""
    ref = value.get("$ref") if isinstance(value, dict) else None
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return value
    target = spec
    for part in ref[2:].split("/"):
        target = target.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(target, dict) else None
    return target if isinstance(target, dict) else value


def _prose(text) -> list[tuple]:
    return [("NarrativeText", str(text).strip(), None)] if isinstance(text, str) and text.strip() else []


def _line(text) -> str:
    return " ".join(str(text).split()) if text else ""


def _after(text) -> str:
    return f" — {_line(text)}" if text else ""
