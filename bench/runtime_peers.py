"""The inference runtimes as peers of bench/python_bench.py: OpenVINO's CPU plugin (Tile, Broadcast,
ReduceSum: the kernels the OpenVINO seed describes) and ONNX Runtime's CPU provider (Tile, Expand,
ReduceSum). PyPI `openvino` and `onnxruntime` (+ `onnx` to build the graph), pinned in
bench/requirements-peers.txt; where they are not importable (Debian's stack) the columns are absent
and a line says why.

Each case gets one model, built in code (openvino's opset13 API; onnx.helper, opset 17: no model
files), compiled once: the same small graph for both runtimes, as a framework exporter writes the op:
  tile           Reshape to the promoted rank (numpy's rule: leading 1s), then Tile(reps)
  broadcast_to   Broadcast (OpenVINO, NUMPY) / Expand (ONNX) to the target
  expand         Broadcast BIDIRECTIONAL / Expand (ONNX's Expand is bidirectional)
  repeat         a scalar count only: Reshape (a 1 after the axis), Broadcast / Expand of that 1 to
                 the count, Reshape to the output (what torch's ONNX export of repeat_interleave
                 emits); per-element counts: no graph, no column
  tile_backward, sum_to_shape
                 Reshape to (r0, s0, r1, s1, ...), ReduceSum over the replica axes, Reshape
  repeat_backward  a scalar count: Reshape (..., s, r, ...), ReduceSum over r; counts: no column
Each call runs the compiled model with a fresh output: OpenVINO writes into a new numpy array given
as the request's output tensor (ov.Tensor sharing its memory, so no copy after the run); ONNX Runtime
allocates the output it returns (InferenceSession.run). The input is passed as is (both copy a
non-contiguous one first, as a user's call would). OpenVINO is told INFERENCE_PRECISION_HINT f32
(otherwise its CPU plugin computes float32 in bf16 on a CPU with AVX512_BF16, and the sums differ).
Both use their default thread pools (all cores). Every result is compared with numpy's before timing
by the caller (python_bench.py), like the other columns: a wrong peer stops the run. A dtype a
runtime does not compute in its own width has no column for that case, and a line on stderr says
so: OpenVINO's CPU plugin runs float64 (and int64) graphs in float32 (int32), so its tile of a
float64 array is not the array's copy.
"""
import math
import sys

PEERS = ("openvino", "onnxruntime")
# dtypes a runtime's CPU kernels compute in a narrower type (np.dtype names): no column there.
NARROWED = {"openvino": {"float64": "float32", "int64": "int32", "uint64": "int32"}}
LABELS = {"openvino": "OpenVINO", "onnxruntime": "ONNX Runtime"}


class RuntimePeers:
    def __init__(self, np):
        self.np = np
        self.versions, self.missing = {}, {}
        self.ov = self.ort = None
        try:
            import openvino as ov
            import openvino.opset13 as ops
            self.ov, self.ops, self.core = ov, ops, ov.Core()
            self.versions["openvino"] = ov.__version__.split("-")[0]
        except Exception as e:  # noqa: BLE001 -- ImportError, or a wheel that does not load here
            self.missing["openvino"] = f"{type(e).__name__}: {e}"
        try:
            import onnx
            import onnxruntime as ort
            from onnx import helper
            self.onnx, self.helper, self.ort = onnx, helper, ort
            self.versions["onnxruntime"] = ort.__version__
        except Exception as e:  # noqa: BLE001
            self.missing["onnxruntime"] = f"{type(e).__name__}: {e}"

    def available(self):
        return [p for p in PEERS if p in self.versions]

    # -- the graph: a list of steps, each ("reshape", shape), ("tile", reps), ("broadcast", (shape,
    # bidirectional)) or ("sum", axes), from the input to the output --------------------------------

    @staticmethod
    def forward_steps(op, A):
        """op: python_bench's Op (its out_shape set). None where no graph computes it."""
        if op.name == "tile":
            d = max(A.ndim, len(op.reps))
            reps = (1,) * (d - len(op.reps)) + tuple(op.reps)
            steps = [("reshape", (1,) * (d - A.ndim) + A.shape)] if d > A.ndim else []
            return steps + [("tile", reps)]
        if op.name in ("broadcast_to", "expand"):
            return [("broadcast", (tuple(op.target), op.name == "expand"))]
        if op.name == "repeat":
            if not isinstance(op.repeats, int):
                return None
            shape = (A.size,) if op.axis is None else A.shape
            a = 0 if op.axis is None else op.axis % A.ndim
            return [("reshape", shape[:a + 1] + (1,) + shape[a + 1:]),
                    ("broadcast", (shape[:a + 1] + (op.repeats,) + shape[a + 1:], False)),
                    ("reshape", tuple(op.out_shape))]
        return None

    @staticmethod
    def backward_steps(op):
        """op: python_bench's Backward. None where no graph computes it."""
        if op.name in ("tile_backward", "sum_to_shape"):
            return [("reshape", op.split), ("sum", op.sum_axes), ("reshape", tuple(op.out_shape))]
        if op.name == "repeat_backward" and isinstance(op.repeats, int):
            return [("reshape", op.split), ("sum", (op.seg_axis + 1,)), ("reshape", tuple(op.out_shape))]
        return None

    # -- the runtimes ------------------------------------------------------------------------------

    def calls(self, steps, A, out_shape):
        """{peer: callable returning a new output} for the graph `steps` applied to A."""
        if steps is None:
            return {}
        calls = {}
        for p in self.available():
            narrowed = NARROWED.get(p, {}).get(A.dtype.name)
            if narrowed:
                print(f"runtime_peers: no {LABELS[p]} column for {A.dtype.name} (its CPU plugin computes "
                      f"{A.dtype.name} in {narrowed})", file=sys.stderr)
                continue
            calls[p] = self._openvino(steps, A, tuple(out_shape)) if p == "openvino" else self._onnxruntime(steps, A)
        return calls

    def _openvino(self, steps, A, out_shape):
        np, ov, ops = self.np, self.ov, self.ops
        i64 = lambda v: ops.constant(np.array(v, dtype=np.int64))  # noqa: E731
        param = ops.parameter(list(A.shape), dtype=A.dtype)
        node = param
        for kind, arg in steps:
            if kind == "reshape":
                node = ops.reshape(node, i64(list(arg)), special_zero=False)
            elif kind == "tile":
                node = ops.tile(node, i64(list(arg)))
            elif kind == "broadcast":
                shape, bidirectional = arg
                node = ops.broadcast(node, i64(list(shape)), broadcast_spec="BIDIRECTIONAL" if bidirectional else "NUMPY")
            elif kind == "sum":
                node = ops.reduce_sum(node, i64(list(arg)), keep_dims=False)
        model = ov.Model([node], [param], "tessera_bench")
        compiled = self.core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        request = compiled.create_infer_request()
        Tensor, dtype = ov.Tensor, A.dtype
        inputs = {0: A}

        def call():
            out = np.empty(out_shape, dtype=dtype)
            request.set_output_tensor(Tensor(out, shared_memory=True))
            request.infer(inputs, share_inputs=True)
            return out
        return call

    def _onnxruntime(self, steps, A):
        np, helper, onnx, ort = self.np, self.helper, self.onnx, self.ort
        elem = helper.np_dtype_to_tensor_dtype(A.dtype)
        nodes, inits, name = [], [], "X"
        for k, (kind, arg) in enumerate(steps):
            out = f"t{k}"
            if kind == "reshape":
                inits.append(helper.make_tensor(f"c{k}", onnx.TensorProto.INT64, [len(arg)], list(arg)))
                nodes.append(helper.make_node("Reshape", [name, f"c{k}"], [out]))
            elif kind == "tile":
                inits.append(helper.make_tensor(f"c{k}", onnx.TensorProto.INT64, [len(arg)], list(arg)))
                nodes.append(helper.make_node("Tile", [name, f"c{k}"], [out]))
            elif kind == "broadcast":
                shape = list(arg[0])
                inits.append(helper.make_tensor(f"c{k}", onnx.TensorProto.INT64, [len(shape)], shape))
                nodes.append(helper.make_node("Expand", [name, f"c{k}"], [out]))
            elif kind == "sum":
                inits.append(helper.make_tensor(f"c{k}", onnx.TensorProto.INT64, [len(arg)], list(arg)))
                nodes.append(helper.make_node("ReduceSum", [name, f"c{k}"], [out], keepdims=0))
            name = out
        graph = helper.make_graph(nodes, "tessera_bench", [helper.make_tensor_value_info("X", elem, list(A.shape))],
                                  [helper.make_tensor_value_info(name, elem, None)], initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = min(model.ir_version, 9)  # what this onnxruntime reads
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        feed, run = {"X": A}, session.run
        return lambda: run(None, feed)[0]


def print_peer_table(results, print_table, fmt_time, fmt_gbps, fmt_size, peers, large_min_bytes):
    """The runtime peers' table: each case's OpenVINO and ONNX Runtime times beside tessera's (a new
    output: tessera.tile ..., the reductions' tessera call), and tessera's speed-up over each."""
    rows, behind = [], []
    for r in results:
        m = r["methods"]
        present = [p for p in PEERS if p in m]
        if not present:
            continue
        t = m.get("tessera", {}).get("median_s")
        size = r.get("in_bytes", r["out_bytes"])
        cell = lambda k: f"{fmt_time(m[k]['median_s'])} {fmt_gbps(m[k]['gbps'])}" if k in m else "-"  # noqa: E731
        ratios = []
        for p in PEERS:
            if p in m and t:
                ratio = m[p]["median_s"] / t
                ratios.append(f"{ratio:.2f}x")
                if ratio <= 1 and size >= large_min_bytes:
                    behind.append(f"{r['name']} {ratio:.2f}x {LABELS[p]}")
            else:
                ratios.append("-")
        rows.append([r["name"], r.get("op", "tile"), fmt_size(size)] + [cell(p) for p in PEERS] + [cell("tessera")]
                    + ratios)
    if not rows:
        return
    print("runtime peers: time per call and GB/s (of output; of gradient read for the reductions), a new output each "
          "call; " + ", ".join(f"{LABELS[p]} {v}" for p, v in peers.versions.items()))
    print_table(["case", "op", "bytes"] + [LABELS[p] for p in PEERS] + ["tessera"]
                + [f"vs {LABELS[p]}" for p in PEERS], rows)
    print("vs X: tessera's speed-up over X. Target: tessera ahead of each on every case of >= "
          f"{large_min_bytes // 2**20} MiB: " + ("met" if not behind else "missed: " + "; ".join(behind)))
    print()
