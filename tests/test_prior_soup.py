"""A soup of perf priors: several seeds' students averaged before the cut
(``scripts/build_perf_prior.py --seed A --seed B``), and the shared head initialisation
that lets their classifiers be averaged (``TrainConfig.init_seed``)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file

from engines.labelers.student.data import Example
from engines.labelers.student.infer import _thread_budget
from engines.labelers.student.train import TrainConfig, train_student

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "build_perf_prior.py"
ROWS = [
    ("Avoid a copy in the parser loop", 1),
    ("Fix typo in the README", 0),
    ("Cache the compiled regex", 1),
    ("Add a test for empty input", 0),
]


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("build_perf_prior", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_average_weights_is_the_mean_of_each_float_tensor_and_keeps_the_rest() -> None:
    a = {"w": torch.tensor([1.0, 2.0]), "ids": torch.tensor([0, 1])}
    b = {"w": torch.tensor([3.0, 6.0]), "ids": torch.tensor([5, 5])}
    soup = _script().average_weights([a, b])
    assert torch.equal(soup["w"], torch.tensor([2.0, 4.0]))
    assert torch.equal(soup["ids"], torch.tensor([0, 1]))


def test_omp_num_threads_caps_the_threads_a_student_takes() -> None:
    assert _thread_budget("4", 16) == 4
    assert _thread_budget(None, 16) == 16
    assert _thread_budget("0", 16) == 16 and _thread_budget("many", 16) == 16
    assert _thread_budget(None, None) == 1


def _head(seed: int, init_seed: int | None, out: Path) -> torch.Tensor:
    examples = [Example(text, y, float(y), "t") for text, y in ROWS]
    config = TrainConfig(
        epochs=1,
        batch_size=4,
        max_length=16,
        max_steps=1,
        lr=1e-12,
        seed=seed,
        init_seed=init_seed,
        prior="none",
        holdout=0,
    )
    train_student(config, examples, [], out)
    return load_file(str(out / "model.safetensors"))["classifier.weight"]


def test_members_of_a_soup_start_from_one_head(tmp_path: Path) -> None:
    """At a step too small to move it, the head a student saves is its initial one: the
    same for two seeds sharing ``init_seed``, another for a seed of its own."""
    shared_a = _head(1, 0, tmp_path / "a")
    shared_b = _head(2, 0, tmp_path / "b")
    own = _head(2, None, tmp_path / "c")
    assert torch.allclose(shared_a, shared_b)
    assert not torch.allclose(shared_a, own)


def test_the_build_script_writes_a_soup_and_its_members(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    text = "".join(json.dumps({"commit_message": m, "target": t}) + "\n" for m, t in ROWS)
    (shared / "train.jsonl").write_text(text, encoding="utf-8")
    (shared / "extra.jsonl").write_text("", encoding="utf-8")
    out, members = tmp_path / "soup", tmp_path / "members"
    args = [sys.executable, str(SCRIPT), "--shared", str(shared), "--epochs", "1"]
    args += ["--seed", "0", "--seed", "1", "--members", str(members), "--out", str(out)]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "seed 1: epoch, epoch 1/1" in done.stderr

    meta = json.loads((out / "perf_prior.json").read_text(encoding="utf-8"))
    assert [m["seed"] for m in meta["training"]["members"]] == [0, 1]
    assert meta["learned_from"] == {"shared_messages": 4}
    soup = load_file(str(out / "perf_prior.safetensors"))
    heads = [
        load_file(str(members / f"seed{s}" / "perf_prior.safetensors"))["classifier.weight.value"]
        for s in (0, 1)
    ]
    # The head is new to the base, so each prior keeps it whole: the soup's is the mean.
    assert not torch.allclose(heads[0].float(), heads[1].float())
    mean = (heads[0].float() + heads[1].float()) / 2
    assert torch.allclose(soup["classifier.weight.value"].float(), mean, rtol=0, atol=5e-5)
    for seed in (0, 1):
        member = json.loads((members / f"seed{seed}" / "perf_prior.json").read_text())
        assert member["training"]["seed"] == seed
