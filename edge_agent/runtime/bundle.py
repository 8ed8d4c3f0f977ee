"""Model bundles: a directory with ``manifest.json``, the tokenizer and the model segments.

The manifest is checked (format version, every file's size and sha256) before anything is
mapped. See docs/bundle.md for the format. Signature checks (ed25519) hook in through
``verify_signature`` in ``edge_agent.runtime.signing`` when a trust store is configured.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from edge_agent.errors import BundleError

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "MANIFEST",
    "Bundle",
    "SegmentSpec",
    "default_bundle_path",
    "file_entry",
    "load_bundle",
]

FORMAT_NAME = "edge-agent-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
_HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class SegmentSpec:
    """One model segment (embedding, a block, a head): a .tflite file and its tensor specs."""

    name: str
    file: str
    inputs: tuple[dict[str, Any], ...]
    outputs: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Bundle:
    """A verified bundle. Paths are absolute; ``manifest`` is the parsed manifest.json."""

    path: Path
    manifest: dict[str, Any]

    @property
    def model_id(self) -> str:
        return f"{self.manifest['model']['id']}@{self.manifest['model']['version']}"

    @property
    def tokenizer_path(self) -> Path:
        return self.path / str(self.manifest["tokenizer"]["file"])

    def tokenizer_entry(self, task: str = "intents") -> dict[str, Any]:
        """The manifest's tokenizer for ``task``: its ``task_tokenizers`` entry when it has one
        (a bundle whose log graph reads other pieces than its intent graph), else ``tokenizer``."""
        entry = self.manifest.get("task_tokenizers", {}).get(task)
        return dict(entry if entry is not None else self.manifest["tokenizer"])

    def segments(self, variant: str = "default") -> dict[str, SegmentSpec]:
        """Segments by name for a variant (``default`` or e.g. ``edgetpu``)."""
        table = self.manifest["segments"] if variant == "default" else self._variant(variant)["segments"]
        return {
            s["name"]: SegmentSpec(s["name"], s["file"], tuple(s["inputs"]), tuple(s["outputs"]))
            for s in table
        }

    def fused(self, task: str, variant: str = "default") -> SegmentSpec | None:
        """The one-file form of ``task``'s graph (same operators and weights, outputs equal to
        the segment chain's), or None when the bundle has none for this variant."""
        source = self.manifest if variant == "default" else self._variant(variant)
        table = source.get("fused", {})
        entry = table.get(task)
        if entry is None:
            return None
        return SegmentSpec(entry["name"], entry["file"], tuple(entry["inputs"]), tuple(entry["outputs"]))

    def graph(self, task: str, variant: str = "default") -> list[str]:
        """Ordered segment names that compute ``task`` (``intents`` or ``logs``). A variant with
        a shape of its own (fewer blocks: ``small``) lists its graphs; others share the default's."""
        graphs = self.manifest["graphs"]
        if variant != "default":
            graphs = self._variant(variant).get("graphs", graphs)
        try:
            return list(graphs[task])
        except KeyError as exc:
            raise BundleError(f"{self.path}: manifest has no graph for task {task!r}") from exc

    def labels(self, head: str) -> list[str]:
        return list(self.manifest["labels"][head])

    def has_variant(self, variant: str) -> bool:
        return variant == "default" or variant in self.manifest.get("variants", {})

    def _variant(self, variant: str) -> dict[str, Any]:
        try:
            return dict(self.manifest["variants"][variant])
        except KeyError as exc:
            raise BundleError(f"{self.path}: bundle has no {variant!r} variant") from exc


def default_bundle_path() -> Path:
    """The trained default bundle shipped inside the package."""
    return Path(__file__).resolve().parent.parent / "models" / "default"


def file_entry(path: Path) -> dict[str, Any]:
    """The manifest ``files`` entry for ``path``: size and sha256."""
    return {"size": path.stat().st_size, "sha256": _sha256(path)}


def load_bundle(path: str | Path, *, verify_hashes: bool = True) -> Bundle:
    """Read and verify a bundle. Raises BundleError saying exactly what is wrong."""
    root = Path(path).resolve()
    manifest = _read_manifest(root)
    _check_format(root, manifest)
    _check_files(root, manifest, verify_hashes=verify_hashes)
    return Bundle(root, manifest)


def _read_manifest(root: Path) -> dict[str, Any]:
    mpath = root / MANIFEST
    if not root.is_dir():
        raise BundleError(f"bundle {root} is not a directory")
    try:
        data = json.loads(mpath.read_bytes())
    except FileNotFoundError as exc:
        raise BundleError(f"bundle {root} has no {MANIFEST}") from exc
    except (OSError, ValueError) as exc:
        raise BundleError(f"{mpath}: cannot read manifest: {exc}") from exc
    if not isinstance(data, dict):
        raise BundleError(f"{mpath}: manifest must be a JSON object")
    return data


def _check_format(root: Path, manifest: dict[str, Any]) -> None:
    if manifest.get("format") != FORMAT_NAME:
        raise BundleError(f"{root}: manifest format is {manifest.get('format')!r}, expected {FORMAT_NAME!r}")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise BundleError(
            f"{root}: unknown bundle format_version {version!r}; this agent reads version {FORMAT_VERSION}"
        )
    for key in ("model", "files", "segments", "graphs", "labels", "tokenizer"):
        if key not in manifest:
            raise BundleError(f"{root}: manifest lacks required key {key!r}")


def _check_files(root: Path, manifest: dict[str, Any], *, verify_hashes: bool) -> None:
    files = manifest["files"]
    referenced = {manifest["tokenizer"]["file"]} | {s["file"] for s in manifest["segments"]}
    for task, entry in manifest.get("task_tokenizers", {}).items():
        if not isinstance(entry, dict) or "file" not in entry or "max_len" not in entry:
            raise BundleError(f"{root}: task_tokenizers[{task!r}] needs a file and a max_len")
        referenced.add(entry["file"])
    for variant in manifest.get("variants", {}).values():
        referenced |= {s["file"] for s in variant.get("segments", [])}
    for task, entry in manifest.get("fused", {}).items():
        if entry.get("segments") != manifest["graphs"].get(task):
            raise BundleError(
                f"{root}: fused graph {task!r} joins {entry.get('segments')}, but graphs[{task!r}] is "
                f"{manifest['graphs'].get(task)}; rebuild it with edge-fw fuse-graphs"
            )
        referenced.add(entry["file"])
    missing = sorted(referenced - set(files))
    if missing:
        raise BundleError(f"{root}: files used but not listed in manifest: {', '.join(missing)}")
    for rel, entry in files.items():
        fpath = (root / rel).resolve()
        if root not in fpath.parents:
            raise BundleError(f"{root}: manifest file {rel!r} points outside the bundle")
        try:
            size = fpath.stat().st_size
        except FileNotFoundError as exc:
            raise BundleError(f"{root}: {rel} is listed in the manifest but missing") from exc
        if size != entry["size"]:
            raise BundleError(f"{root}: {rel} is {size} bytes, manifest says {entry['size']} (truncated?)")
        if verify_hashes and _sha256(fpath) != entry["sha256"]:
            raise BundleError(f"{root}: {rel} sha256 mismatch (file corrupt or modified)")


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
