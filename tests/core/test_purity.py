import subprocess
import sys


def test_core_and_config_never_import_dagster():
    code = (
        "import sys, rag_assets.core.chunking, rag_assets.core.parsing, rag_assets.core.index, "
        "rag_assets.core.embedding, rag_assets.core.retrieval, rag_assets.core.sources, rag_assets.core.pipeline, "
        "rag_assets.core.planning, rag_assets.core.locking, rag_assets.core.errors, rag_assets.core.promotion, "
        "rag_assets.config; "
        "print('dagster' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
