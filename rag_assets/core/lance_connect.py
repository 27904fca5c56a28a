"""The one way to open a LanceDB database, for the Dagster resource and the query path alike.

``import lancedb`` pulls in ``lance_namespace``, which re-exports the namespace request and response
models of ``lance_namespace_urllib3_client``, whose package ``__init__`` also imports its whole
REST client (about 1.4 s on a small machine). A local or S3 database never talks to a REST
namespace, so the package is registered without running that ``__init__``: its submodules import
as usual, and the first use of a name from the package itself (the REST client) runs the
``__init__`` then, so a REST namespace still works, paying its price only when used.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
import types

REST_CLIENT = "lance_namespace_urllib3_client"


def _defer_rest_client() -> None:
    if REST_CLIENT in sys.modules:
        return
    spec = importlib.util.find_spec(REST_CLIENT)
    if spec is None or spec.origin is None or not spec.submodule_search_locations:
        return  # not installed, or not a plain package: let lancedb import it its own way
    package = types.ModuleType(REST_CLIENT)
    package.__file__, package.__path__, package.__spec__ = spec.origin, list(spec.submodule_search_locations), spec

    def __getattr__(name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        del package.__getattr__  # runs once: the package's own __init__ defines its names
        with open(spec.origin, encoding="utf-8") as source:
            exec(compile(source.read(), spec.origin, "exec"), package.__dict__)
        return getattr(package, name)

    package.__getattr__ = __getattr__
    sys.modules[REST_CLIENT] = package


def storage_options(uri: str, endpoint_url: str | None = None, region: str | None = None,
                    access_key_id: str | None = None, secret_access_key: str | None = None, *,
                    connect_timeout_seconds: float, read_timeout_seconds: float,
                    max_attempts: int) -> dict[str, str] | None:
    """Object-store options for ``uri``: only s3:// URIs take the endpoint, region, keys and the
    limits, which bound how long an endpoint that never answers can hold a call (the object store's
    own defaults retry each request for up to 3 minutes)."""
    if not uri.startswith("s3://"):
        return None
    options = {"connect_timeout": f"{round(connect_timeout_seconds * 1000)}ms",
               "timeout": f"{round(read_timeout_seconds * 1000)}ms",
               "client_max_retries": str(max_attempts - 1),
               "client_retry_timeout": str(math.ceil(max_attempts * (connect_timeout_seconds + read_timeout_seconds)))}
    if endpoint_url:
        options["aws_endpoint"] = endpoint_url
        options["allow_http"] = str(endpoint_url.startswith("http://")).lower()
    if region:
        options["aws_region"] = region
    if access_key_id and secret_access_key:
        options["aws_access_key_id"] = access_key_id
        options["aws_secret_access_key"] = secret_access_key
    return options


class IndexUnavailable(RuntimeError):
    """The LanceDB database at an s3:// URI could not be opened (names the URI and the fix)."""


def connect(uri: str, options: dict[str, str] | None = None):
    """A LanceDB connection to ``uri`` (a folder or s3://bucket/path) with ``options``
    (see ``storage_options``); an s3:// database that cannot be reached raises IndexUnavailable.
    Connecting creates nothing: a folder that does not exist yet is made by the first table written
    (lancedb.connect makes it at once, so `rag query` before any ingest left an empty one behind)."""
    _defer_rest_client()
    import lancedb

    missing = _missing_folders(uri)
    try:
        db = lancedb.connect(uri, storage_options=options)
    except (OSError, ValueError) as exc:
        if not uri.startswith("s3://"):
            raise
        endpoint = (options or {}).get("aws_endpoint", "AWS")
        cause = str(exc).splitlines()[0][:400] if str(exc) else type(exc).__name__
        raise IndexUnavailable(
            f"LanceDB index {uri} at {endpoint}: cannot open it: {cause}. Check the index's endpoint_url, "
            "region and keys in profiles/indexes.yml (or the environment variables it reads), or raise its "
            "read_timeout_seconds or max_attempts there for a slow server") from exc
    for folder in missing:  # deepest first; one written meanwhile (another process' table) stays
        try:
            os.rmdir(folder)
        except OSError:
            break
    return db


def _missing_folders(uri: str) -> list[str]:
    """The folders of a local ``uri`` that do not exist, deepest first (none for an object store)."""
    if "://" in uri and not uri.startswith("file://"):
        return []
    folder = os.path.abspath(os.path.expanduser(uri.removeprefix("file://")))
    missing = []
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        missing.append(folder)
        folder = os.path.dirname(folder)
    return missing
