"""One vocabulary: the public names, their symbols, the trainers' keys, and the loaders' tables."""

from __future__ import annotations

import inspect

import pytest

from grpodyn.empirical.logs import config, infer, sweep
from grpodyn.ground import InputError
from grpodyn.numerics import advise, mean_field_map, predict, stability
from grpodyn.theory import vocabulary
from grpodyn.theory.symbols import TABLE, vocabulary_latex

PUBLIC = ("momentum", "stiffness", "lr", "group_size", "batch", "kl", "refresh", "staleness",
          "plateau")
#: Names the public API must not use for a parameter (the vocabulary replaced them).
RETIRED = {"beta", "beta1", "eta", "learning_rate", "G", "num_generations", "K", "d", "k"}


def test_the_nine_names_and_their_symbols():
    assert tuple(vocabulary.VOCABULARY) == PUBLIC
    for term in vocabulary.VOCABULARY.values():
        assert term.symbol in TABLE, f"{term.name}: symbol {term.symbol!r} is not declared"
    latex = vocabulary_latex()
    assert latex["momentum"] == r"\beta" and latex["plateau"] == "r^{*}"
    assert latex["kl"] == r"\lambda" and latex["refresh"] == "K"


def test_trainer_keys():
    assert vocabulary.trainer_key("group_size", "trl") == "num_generations"
    assert vocabulary.trainer_key("group_size", "verl") == "actor_rollout_ref.rollout.n"
    assert vocabulary.trainer_key("group_size", "openrlhf") == "n_samples_per_prompt"
    assert vocabulary.trainer_key("kl", "trl") == "beta"
    assert vocabulary.trainer_key("stiffness", "trl") is None  # measured, never set
    with pytest.raises(KeyError, match="trainer"):
        vocabulary.trainer_key("kl", "deepspeed")
    with pytest.raises(KeyError, match="eta"):
        vocabulary.trainer_key("eta", "trl")


def test_loaders_read_the_one_table():
    assert config.CONFIG_KEYS == vocabulary.config_keys()
    assert infer.LOGGED_KEYS == vocabulary.logged_keys()
    # each trainer's own key for G is among the keys the config reader searches
    searched = config.CONFIG_KEYS["group_size"]
    assert {"num_generations", "rollout.n", "n_samples_per_prompt"} <= set(searched)


@pytest.mark.parametrize("module", [stability, predict, advise, mean_field_map, sweep],
                         ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_public_parameters_use_the_vocabulary(module):
    for name in module.__all__:
        obj = getattr(module, name)
        targets = [obj] if inspect.isfunction(obj) else (
            [m for n, m in inspect.getmembers(obj, inspect.isfunction) if not n.startswith("_")]
            if inspect.isclass(obj) else [])
        for function in targets:
            retired = set(inspect.signature(function).parameters) & RETIRED
            assert not retired, f"{module.__name__}.{function.__qualname__} takes {retired}"


def test_plateau_and_its_alias():
    kwargs = {"lr": 0.05, "momentum": 0.9, "kappa": 0.4, "r0": 0.2, "steps": 5}
    new = predict.predict(plateau=0.7, **kwargs).trajectory
    assert new == predict.predict(r_star=0.7, **kwargs).trajectory
    with pytest.raises(InputError, match="plateau"):
        predict.predict(plateau=0.7, r_star=0.8, **kwargs)
    system = mean_field_map.MeanFieldMap(lr=0.05, kappa=0.4, momentum=0.9)
    band = system.trajectory(r0=0.2, plateau=0.7, steps=5)
    assert band.mean[0] == pytest.approx(0.2) and list(band.mean) == pytest.approx(new)


def test_advice_says_lr_and_keeps_the_readme_key():
    out = advise.advise(kappa=0.5, momentum=0.9).to_dict()
    assert out["lr"] == out["learning_rate"] > 0
    assert "learning_rate" not in {f for f in advise.Advice.__dataclass_fields__}
