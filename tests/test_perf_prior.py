"""The perf prior: cutting a tuned encoder's change to low rank, applying it to the
packaged base, the packaged prior's own calls, and ``curator train --prior``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch

from engines.labelers.student.prior import (
    ENV_FOLDER,
    apply_prior,
    base_version,
    fits_base,
    low_rank_prior,
    packaged_prior,
    start_from_prior,
    write_prior,
)
from engines.labelers.student.train import TrainConfig

ANSI = re.compile(r"\x1b\[[0-9;]*m")
TINY = ("--epochs", "1", "--max-length", "64", "--batch", "8", "--lr", "1e-4", "--max-steps", "2")


class _Classifier(torch.nn.Module):
    """A stand-in with a classifier's key names: ``bert.`` weights and a head."""

    def __init__(self, base: dict[str, torch.Tensor]) -> None:
        super().__init__()
        self.bert = torch.nn.Module()
        self.bert.dense = torch.nn.Linear(260, 300)
        self.classifier = torch.nn.Linear(300, 2)
        with torch.no_grad():
            self.bert.dense.weight.copy_(base["dense.weight"])
            self.bert.dense.bias.copy_(base["dense.bias"])


def _base_and_tuned() -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    gen = torch.Generator().manual_seed(0)
    base = {"dense.weight": torch.randn(300, 260, generator=gen), "dense.bias": torch.zeros(300)}
    low = torch.randn(300, 2, generator=gen) @ torch.randn(2, 260, generator=gen) * 0.1
    tuned = {
        "bert.dense.weight": base["dense.weight"] + low,
        "bert.dense.bias": base["dense.bias"] + 0.5,
        "classifier.weight": torch.randn(2, 300, generator=gen),
        "classifier.bias": torch.tensor([0.25, -0.25]),
    }
    return base, tuned


def test_a_low_rank_change_is_kept_as_factors_and_restored_by_applying_it() -> None:
    base, tuned = _base_and_tuned()
    prior = low_rank_prior(base, tuned, rank=2)
    assert set(prior) == {
        "bert.dense.weight.u",
        "bert.dense.weight.v",
        "bert.dense.bias.delta",
        "classifier.weight.value",
        "classifier.bias.value",
    }
    assert prior["bert.dense.weight.u"].shape == (300, 2)
    assert prior["bert.dense.weight.v"].shape == (2, 260)
    model = _Classifier(base)
    assert apply_prior(model, prior) == 4
    state = model.state_dict()
    for key, want in tuned.items():
        assert torch.allclose(state[key], want, atol=2e-2), key


def test_a_rank_below_the_change_keeps_its_largest_directions() -> None:
    base, tuned = _base_and_tuned()
    one = low_rank_prior(base, tuned, rank=1)
    model = _Classifier(base)
    apply_prior(model, one)
    change = tuned["bert.dense.weight"] - base["dense.weight"]
    left = model.state_dict()["bert.dense.weight"] - tuned["bert.dense.weight"]
    # the best rank-1 cut leaves the second singular direction, less than half the change
    assert 0 < float(left.norm()) < 0.75 * float(change.norm())


def test_a_prior_for_another_model_is_refused() -> None:
    base, tuned = _base_and_tuned()
    prior = low_rank_prior(base, tuned, rank=2)
    prior["bert.missing.weight.delta"] = torch.zeros(3)
    with pytest.raises(ValueError, match=r"bert\.missing\.weight, which this model lacks"):
        apply_prior(_Classifier(base), prior)
    wrong = {"classifier.bias.delta": torch.zeros(3)}
    with pytest.raises(ValueError, match=r"shape \(3,\), the model \(2,\)"):
        apply_prior(_Classifier(base), wrong)
    with pytest.raises(ValueError, match="rank must be at least 1"):
        low_rank_prior(base, tuned, rank=0)


def test_the_packaged_prior_fits_the_installed_base_and_calls_perf_commits_perf() -> None:
    from engines.labelers.student.infer import (
        default_base,
        load_encoder,
        pick_device,
        positive_probabilities,
    )

    info = packaged_prior()
    assert info is not None and fits_base(info)
    assert info.meta["rank"] >= 1 and sum(info.meta["learned_from"].values()) > 2000
    tokenizer, model = load_encoder(default_base())
    record = start_from_prior(model, TrainConfig())
    assert record is not None and record["name"] == f"perf-prior@{info.meta['version']}"
    texts = [
        "Avoid reallocating the token buffer on every call to the lexer",
        "Cache the compiled pattern instead of compiling it for each request",
        "Fix typo in the contributing guide",
        "Add a changelog entry for the 2.1 release",
    ]
    p = positive_probabilities(model, tokenizer, texts, 64, 8, pick_device("cpu"))
    assert min(p[:2]) > 0.5 > max(p[2:]), p


def test_the_prior_is_applied_only_to_the_packaged_base_when_asked() -> None:
    from engines.labelers.student.infer import default_base, load_encoder

    _, untouched = load_encoder(default_base())
    before = untouched.state_dict()["bert.encoder.layer.0.attention.self.query.weight"].clone()
    assert start_from_prior(untouched, TrainConfig(prior="none")) is None
    assert start_from_prior(untouched, TrainConfig(base=default_base())) is None
    after = untouched.state_dict()["bert.encoder.layer.0.attention.self.query.weight"]
    assert torch.equal(before, after)
    with pytest.raises(ValueError, match="use perf, none"):
        start_from_prior(untouched, TrainConfig(prior="team"))


def test_a_prior_of_ones_own_is_read_from_the_folder_the_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engines.labelers.student.infer import default_base, load_encoder

    _, model = load_encoder(default_base())
    head = {"classifier.bias.value": torch.tensor([2.0, -2.0])}
    write_prior(head, {"version": 7, "rank": 4, "base_package_version": "0.0.0-other"}, tmp_path)
    monkeypatch.setenv(ENV_FOLDER, str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match=r"nowhere: no perf_prior\.safetensors"):
        start_from_prior(model, TrainConfig())
    monkeypatch.setenv(ENV_FOLDER, str(tmp_path))
    assert start_from_prior(model, TrainConfig()) is None  # cut from another base version
    write_prior(head, {"version": 7, "rank": 4, "base_package_version": base_version()}, tmp_path)
    record = start_from_prior(model, TrainConfig())
    assert record is not None and record["name"] == "perf-prior@7"
    assert model.state_dict()["classifier.bias"].tolist() == [2.0, -2.0]
    assert not list(tmp_path.glob(".*.tmp"))


def test_curator_train_starts_from_the_prior_and_says_so(split, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    trained = split("train", "--votes", "tr", *TINY, "--json")
    assert trained.exit_code == 0, trained.output
    info = json.loads(trained.stdout)
    meta = json.loads((Path(info["path"]) / "curator_student.json").read_text())
    packaged = packaged_prior()
    assert packaged is not None
    name = f"perf-prior@{packaged.meta['version']}"
    assert meta["prior"]["name"] == name and meta["config"]["prior"] == "perf"
    shown = ANSI.sub("", split("models", "show", info["model"]).output)
    assert f"started from: {name} (rank 32; learned from" in shown
    assert meta["input"]["prior_examples_with_diff"] == packaged.meta["examples_with_diff"]
    diffs = f"{packaged.meta['examples_with_diff']:,}"
    assert f"its prior learned from {diffs} diffs" in " ".join(shown.split())

    plain = split("train", "--votes", "tr", *TINY, "--prior", "none", "--json")
    assert plain.exit_code == 0, plain.output
    name = json.loads(plain.stdout)["model"]
    shown = ANSI.sub("", split("models", "show", name).output)
    assert "started from: none (started from its base alone)" in shown

    bad = split("train", "--votes", "tr", "--prior", "team")
    assert bad.exit_code == 2 and "--prior must be one of perf, none" in ANSI.sub("", bad.output)


def test_a_broken_prior_fails_the_training_in_one_line_naming_its_file(
    split, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "prior"
    folder.mkdir()
    (folder / "perf_prior.safetensors").write_bytes(b"not tensors")
    (folder / "perf_prior.json").write_text("{broken", encoding="utf-8")
    monkeypatch.setenv(ENV_FOLDER, str(folder))
    sidecar = split("train", "--votes", "tr", *TINY)
    text = ANSI.sub("", sidecar.output)
    assert sidecar.exit_code == 1 and f"{folder / 'perf_prior.json'}: not a perf prior" in text
    assert "Traceback" not in text
    (folder / "perf_prior.json").write_text(
        json.dumps({"version": 1, "base_package_version": base_version()}), encoding="utf-8"
    )
    weights = split("train", "--votes", "tr", *TINY)
    text = ANSI.sub("", weights.output)
    assert weights.exit_code == 1
    assert f"{folder / 'perf_prior.safetensors'}: not a perf prior" in text
    assert "no models yet" in split("models", "list").output
