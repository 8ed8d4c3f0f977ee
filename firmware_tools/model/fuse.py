"""Fused graphs: a task's segments joined into one .tflite file for resident use.

A graph of five segments costs five interpreter invokes, five sets of input copies and five
sets of output copies per request; at the default model's size that overhead is a tenth of
the intent graph's time. The fused file holds the very same operators and weights, wired
segment to segment inside one subgraph: each segment's output tensor becomes the next
segment's input tensor (the float boundary keeps its DEQUANTIZE / QUANTIZE pair), so its
outputs equal the segment chain's bit for bit (tests/test_fuse.py checks both backends).

Segments stay in the bundle: streaming and ``auto`` residency map them one at a time. The
manifest's ``fused`` table names, per task, the file, its ports and the segments it joins;
the loader refuses a table that does not match the graph (docs/bundle.md).

Works on the flatbuffer with the schema classes that ai-edge-litert (or TensorFlow) ships.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge_agent.runtime.bundle import file_entry, load_bundle
from firmware_tools.staging import rewrite_manifest

__all__ = ["FusedGraph", "add_fused_graphs", "fuse_bundle", "fuse_graph", "fused_file_name"]


def _flatbuffer_utils() -> Any:
    try:
        from ai_edge_litert.tools import flatbuffer_utils
    except ImportError:  # a build host with TensorFlow only
        from tensorflow.lite.tools import flatbuffer_utils  # type: ignore[no-redef]
    return flatbuffer_utils


@dataclass
class FusedGraph:
    """The manifest entry of one fused graph."""

    task: str
    file: str
    segments: list[str]
    inputs: list[dict[str, Any]]
    outputs: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": f"{self.task}_fused",
            "file": self.file,
            "segments": self.segments,
            "inputs": self.inputs,
            "outputs": self.outputs,
        }


def fused_file_name(task: str) -> str:
    return f"{task}.fused.tflite"


def fuse_graph(root: Path, manifest: dict[str, Any], task: str) -> FusedGraph:
    """Write ``root/<task>.fused.tflite`` from the default variant's segments of ``task``."""
    fb = _flatbuffer_utils()
    specs = {s["name"]: s for s in manifest["segments"]}
    names = list(manifest["graphs"][task])
    joiner = _Joiner(fb, task)
    for name in names:
        joiner.add(name, fb.read_model(str(root / specs[name]["file"])), specs[name])
    last = specs[names[-1]]
    fused = joiner.finish(last["outputs"])
    file = fused_file_name(task)
    fb.write_model(fused, str(root / file))
    inputs = [dict(port, tensor=port["name"]) for port in joiner.graph_inputs]
    outputs = [dict(port, tensor=port["name"]) for port in last["outputs"]]
    return FusedGraph(task, file, names, inputs, outputs)


class _Joiner:
    """Appends segment models to one subgraph, connecting ports by manifest value name."""

    def __init__(self, fb: Any, task: str) -> None:
        schema = fb.schema_fb
        self.model = schema.ModelT()
        self.model.version = 3
        self.model.description = f"edge-agent fused {task} graph".encode()
        self.model.buffers = [schema.BufferT()]  # buffer 0: the empty sentinel
        self.model.operatorCodes = []
        self.model.metadata = []
        self.model.signatureDefs = []
        self.sub = schema.SubGraphT()
        self.sub.name = task.encode()
        self.sub.tensors, self.sub.operators, self.sub.inputs, self.sub.outputs = [], [], [], []
        self.model.subgraphs = [self.sub]
        self.values: dict[str, int] = {}  # manifest value name -> fused tensor index
        self.graph_inputs: list[dict[str, Any]] = []

    def add(self, segment: str, model: Any, spec: dict[str, Any]) -> None:
        if len(model.subgraphs) != 1:
            raise ValueError(f"segment {segment}: expected one subgraph, found {len(model.subgraphs)}")
        sub = model.subgraphs[0]
        in_by_name = {sub.tensors[i].name.decode(): int(i) for i in sub.inputs}
        out_by_name = {sub.tensors[i].name.decode(): int(i) for i in sub.outputs}
        known = [p for p in spec["inputs"] if p["name"] in self.values]  # made by an earlier segment
        joined = {in_by_name[p["tensor"]]: self.values[p["name"]] for p in known}
        base = len(self.model.buffers) - 1
        self.model.buffers.extend(model.buffers[1:])
        index: dict[int, int] = dict(joined)
        for i, tensor in enumerate(sub.tensors):
            if i in joined:
                continue
            tensor.buffer = 0 if tensor.buffer == 0 else tensor.buffer + base
            tensor.name = f"{segment}/{tensor.name.decode()}".encode()
            index[i] = len(self.sub.tensors)
            self.sub.tensors.append(tensor)
        for port in spec["inputs"]:
            if port["name"] not in self.values:  # a graph input (token ids)
                tid = index[in_by_name[port["tensor"]]]
                self.sub.tensors[tid].name = port["name"].encode()
                self.sub.inputs.append(tid)
                self.values[port["name"]] = tid
                self.graph_inputs.append(dict(port))
        for port in spec["outputs"]:
            self.values[port["name"]] = index[out_by_name[port["tensor"]]]
        for op in sub.operators:
            op.opcodeIndex = self._opcode(model.operatorCodes[op.opcodeIndex])
            op.inputs = [index[int(i)] if i >= 0 else int(i) for i in op.inputs]  # -1: optional input
            op.outputs = [index[int(i)] for i in op.outputs]
            if op.intermediates is not None and len(op.intermediates):
                op.intermediates = [index[int(i)] for i in op.intermediates]
            self.sub.operators.append(op)

    def finish(self, outputs: list[dict[str, Any]]) -> Any:
        for port in outputs:
            tid = self.values[port["name"]]
            self.sub.tensors[tid].name = port["name"].encode()
            self.sub.outputs.append(tid)
        return self.model

    def _opcode(self, code: Any) -> int:
        key = (code.builtinCode, code.deprecatedBuiltinCode, code.customCode, code.version)
        for i, have in enumerate(self.model.operatorCodes):
            if (have.builtinCode, have.deprecatedBuiltinCode, have.customCode, have.version) == key:
                return i
        self.model.operatorCodes.append(code)
        return len(self.model.operatorCodes) - 1


def add_fused_graphs(root: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Fuse every task graph of the bundle staged in ``root`` into ``manifest["fused"]``."""
    manifest["fused"] = {task: fuse_graph(root, manifest, task).to_dict() for task in manifest["graphs"]}
    return manifest


def fuse_bundle(root: Path) -> dict[str, Any]:
    """Add fused graphs to an existing bundle in place (manifest ``files`` rewritten), then
    verify it. Returns the new manifest."""
    manifest = load_bundle(root).manifest
    add_fused_graphs(root, manifest)
    for entry in manifest["fused"].values():
        manifest["files"][entry["file"]] = file_entry(root / entry["file"])
    manifest["files"] = dict(sorted(manifest["files"].items()))
    rewrite_manifest(root, manifest)
    return manifest
