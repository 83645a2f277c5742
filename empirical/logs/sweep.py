"""Sweeps: runs of one model and task, each with its own hyperparameters, fitted jointly.

Every run follows the mean-field map of its own hyperparameters (THEORY.md sections 1, 3, 7 and
9, :class:`~grpodyn.numerics.mean_field_map.MeanFieldMap`) with constants shared by the sweep:

    r_i(n) = r* + e_i(n),   e_i(0) = r0_s(i) - r*,
    e_{n+1} = e_n - s_n M_n,   M_n = beta M_{n-1} + w f_i(e_n) e_n,
    SGD:  k_i = lr_i kappa D(G_i, p)          (derivation ``sgd_stiffness_finite_group``)
    Adam: k_i = lr_i (1 - beta1) kappa_A sqrt(D / (D + rho_A / (B_i G_i)))
                                              (derivation ``adam_stiffness_finite_group``)

with D(G, p) = 1 - p^G - (1-p)^G the share of groups with an advantage at the mean-field reward
p = r* + e (``finite_group_drift_factor``; ``fit_sweep(finite_group=False)`` sets D = 1, the
large-G map). Runs of one seed start from the same weights and share an r0 (one r0 per seed when
the runs name their seeds, one for all otherwise).

Revision 3 (issue 15) adds the sampling noise to the mean path: the step variance is split into
a between-prompt part sigma_p^2 / B and a within-group part sigma_c^2 / (B G)
(``sampling_variance_split``); the noise costs expected reward at second order, a drag
e_{n+1} = ... - drag_i per step (``sgd_noise_drag``: lr^2 h (sigma_p^2/B + sigma_c^2/(B G)) /
(2 (1 - beta^2)); ``adam_noise_drag``) that lowers the plateau like lr / B; and Adam's v_hat
carries both parts (``adam_stiffness_split``: rho_p / B + rho_A / (B G)). ``fit_sweep``'s
``noise_drag``, ``prompt_noise`` and ``plateau="per_seed"`` (an r* per seed) switch them on.

The shared constants (r0 per seed, r* per optimizer, kappa for SGD, kappa_A and rho_A for Adam)
are fitted by least squares over every point of every run that did not collapse; their covariance
is the cluster-robust sandwich with one cluster per run (points of a run are correlated, runs are
not). A per-setting fit (k free for each hyperparameter setting, r0 and r* held at the joint
values) gives the measured tau-lr exponent and the test of G-invariance against B G dependence.
:func:`transfer` predicts a setting not yet run: the mean path of its map with the fitted
constants, and a band that carries the constants' uncertainty, the seed-to-seed spread of the
source runs (and of r0 when the target's seed is not among the sources') and the per-step
sampling noise of the target's B and G.

Revision 4 (issue 15) adds the error of the map itself when it carries the fit to a setting away
from the sources: a variance s d^2 (m(n) - m(0))^2 with d = :func:`setting_distance` (target,
nearest source setting) in log-hyperparameter space and s calibrated by leave-one-setting-out on
the sources (:func:`transfer_error`); with a single source setting it cannot be calibrated and
the band is revision 3's, with a warning.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import norm

from grpodyn.empirical.logs.loaders import load_run
from grpodyn.ground import InputError, check_fraction, check_int, check_momentum
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.executor import run_tasks
from grpodyn.numerics.mean_field_map import (
    OPTIMIZERS,
    SCHEDULES,
    MeanFieldMap,
    drift_factor,
    iterate_map,
    lr_schedule,
)

__all__ = ["HPARAM_KEYS", "SweepRun", "SweepFit", "parse_hparams", "load_sweep_run",
           "fit_sweep", "transfer", "transfer_error", "setting_distance", "collapsed"]

#: keys of ``--hparams`` and ``--to`` and their types
HPARAM_KEYS: dict[str, type] = {"lr": float, "group_size": int, "batch": int, "momentum": float,
                                "kl": float, "num_iterations": int, "schedule": str,
                                "warmup": int, "steps": int, "optimizer": str, "seed": int}
_META_NAMES = {"lr": "lr", "group_size": "group_size", "batch": "batch", "momentum": "momentum",
               "kl": "kl", "num_iterations": "num_iterations", "schedule": "schedule",
               "warmup": "warmup_steps", "optimizer": "optimizer"}
_LOG_RHO = (np.log(1e-2), np.log(1e5))
_LOG_DRAG = (np.log(1e-5), np.log(1e3))  # drag constants relative to 1e-3 reward/step at the ref
PLATEAUS = ("shared", "per_seed")
_SMOOTH = 15  # steps of the moving average that separates a run's path from its sampling noise
_DISTANCE_KEYS = ("lr", "group_size", "batch", "num_iterations", "momentum")


def parse_hparams(text: str, *, name: str = "--hparams") -> dict[str, Any]:
    """``"lr=1e-3,group_size=8,schedule=cosine"`` as a checked dict (empty text: empty dict)."""
    out: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in HPARAM_KEYS:
            raise InputError(f"{name}: {item!r} is not key=value with a key among "
                             f"{', '.join(HPARAM_KEYS)}")
        try:
            parsed = HPARAM_KEYS[key](value.strip())
        except ValueError:
            raise InputError(f"{name}: {key} must be a {HPARAM_KEYS[key].__name__}, "
                             f"got {value!r}") from None
        if isinstance(parsed, float) and not np.isfinite(parsed):
            raise InputError(f"{name}: {key} must be finite, got {value!r}")
        out[key] = parsed
    return _checked(out, name)


def _checked(hp: dict[str, Any], name: str) -> dict[str, Any]:
    if "optimizer" in hp:
        optimizer = str(hp["optimizer"]).lower()
        hp["optimizer"] = "adam" if optimizer.startswith("adam") else optimizer
        if hp["optimizer"] not in OPTIMIZERS:
            raise InputError(f"{name}: optimizer must be sgd or adam, got {hp['optimizer']!r}")
    if "schedule" in hp:
        schedule = str(hp["schedule"]).lower().removesuffix("_with_warmup")
        hp["schedule"] = schedule
        if schedule not in SCHEDULES:
            raise InputError(f"{name}: schedule must be one of {', '.join(SCHEDULES)}, got "
                             f"{hp['schedule']!r}")
    if "lr" in hp and not hp["lr"] > 0:
        raise InputError(f"{name}: lr must be positive, got {hp['lr']!r}")
    if "momentum" in hp:
        check_momentum(hp["momentum"], f"{name}: momentum")
    for key, minimum in (("group_size", 2), ("batch", 1), ("num_iterations", 1), ("steps", 1),
                         ("warmup", 0), ("seed", 0)):
        if key in hp:
            check_int(f"{name}: {key}", hp[key], minimum=minimum)
    if "kl" in hp and hp["kl"] < 0:
        raise InputError(f"{name}: kl must be non-negative, got {hp['kl']!r}")
    return hp


@dataclass(eq=False)
class SweepRun:
    """One run of a sweep: its reward path (steps from 0 at its first point) and settings."""

    name: str
    steps: np.ndarray
    reward: np.ndarray
    hparams: dict[str, Any]
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def setting(self) -> tuple:
        """The hyperparameters that set the dynamics (the seed left out)."""
        h = self.hparams
        return (h["optimizer"], h["lr"], h.get("group_size"), h.get("batch"),
                h.get("momentum"), h.get("kl"), h.get("schedule", "constant"), h.get("warmup", 0))


_REQUIRED = ("optimizer", "lr", "momentum")


def load_sweep_run(path: str | Path, overrides: dict[str, Any] | None = None) -> SweepRun:
    """Return a log and its hyperparameters.

    ``overrides`` (``--hparams``) first, then the settings grpodyn wrote into the log
    (``grpodyn_hparams``), then what the loader found (RunMeta).
    """
    run = load_run(path)
    found: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key, meta_name in _META_NAMES.items():
        value = run.meta.value(meta_name)
        if value is not None:
            origin = getattr(run.meta, meta_name).source
            found[key], sources[key] = value, f"log metadata ({origin})"
    if str(path).endswith(".json"):
        try:
            own = json.loads(Path(path).read_text()).get("grpodyn_hparams")
        except (OSError, ValueError, AttributeError):
            own = None
        if isinstance(own, dict):
            for key in HPARAM_KEYS:
                if key in own and own[key] is not None:
                    found[key], sources[key] = own[key], "log (grpodyn_hparams)"
    for key, value in (overrides or {}).items():
        found[key], sources[key] = value, "--hparams"
    found = _checked({k: v for k, v in found.items() if k in HPARAM_KEYS}, str(path))
    missing = [k for k in _REQUIRED if k not in found]
    if missing:
        raise InputError(f"{path}: hyperparameters {', '.join(missing)} not found in the log; "
                         f"give them with --hparams")
    if found["optimizer"] == "adam" and ("group_size" not in found or "batch" not in found):
        raise InputError(f"{path}: Adam runs need group_size and batch (Adam's v_hat depends on "
                         f"B G); give them with --hparams")
    # the loader keeps only points with a finite reward
    return SweepRun(str(path), run.steps - run.steps[0], run.reward, found, sources)


def collapsed(run: SweepRun) -> bool:
    """Tell whether ``run`` collapsed.

    A collapse: the last fifth of the run averages under half of its first tenth (and the reward
    started above 0.05), i.e. the run lost what it had instead of converging.
    """
    n = run.reward.size
    early = float(np.mean(run.reward[: max(n // 10, 3)]))
    late = float(np.mean(run.reward[-max(n // 5, 3):]))
    return early > 0.05 and late < 0.5 * early


# --- the joint model -------------------------------------------------------------------------
@dataclass(frozen=True)
class _Layout:
    """Which parameter is which, for the optimizers present."""

    names: tuple[str, ...]
    optimizers: tuple[str, ...]
    fit_rho: bool
    bg_ref: float = 1.0  # B G at which Adam's curvature is parametrised (geometric mean)
    starts: tuple[int, ...] = ()  # seeds with their own r0 (empty: one r0 for every run)
    finite_group: bool = True  # the drift factor 1 - p^G - (1-p)^G on the force
    reward_range: tuple[float, float] = (0.0, 1.0)  # where r0 and the plateau r* may lie
    b_ref: float = 1.0  # B at which Adam's curvature is parametrised (geometric mean)
    units: tuple[tuple[str, float], ...] = ()  # physical value of exp(parameter) = 1
    plateau: str = "shared"  # "per_seed": an r* per optimizer and seed

    def index(self, name: str) -> int:
        return self.names.index(name)

    def has(self, name: str) -> bool:
        """Tell whether the fit has the parameter ``name``."""
        return name in self.names

    def physical(self, theta: np.ndarray, name: str) -> float:
        """Return exp(theta[name]) times its unit (log parameters); 0 if not fitted."""
        if name not in self.names:
            return 0.0
        return float(np.exp(theta[self.index(name)]) * dict(self.units).get(name, 1.0))

    def star_index(self, hparams: dict[str, Any]) -> int | None:
        """Position of the plateau of a run with ``hparams``; None: an unseen seed's (mean)."""
        optimizer = hparams["optimizer"]
        if self.plateau == "shared" or not self.starts:
            return self.index(f"r_star_{optimizer}")
        seed = hparams.get("seed")
        return self.index(f"r_star_{optimizer}_seed{seed}") if seed in self.starts else None

    def star_indices(self, optimizer: str) -> list[int]:
        """Positions of the plateau parameters of ``optimizer`` (one, or one per seed)."""
        return [i for i, name in enumerate(self.names)
                if name == f"r_star_{optimizer}" or name.startswith(f"r_star_{optimizer}_seed")]

    @property
    def r0_indices(self) -> list[int]:
        """Positions of the r0 parameters (one, or one per seed)."""
        return [i for i, name in enumerate(self.names) if name == "r0" or
                name.startswith("r0_seed")]

    def r0_index(self, hparams: dict[str, Any]) -> int | None:
        """Position of the r0 of a run with ``hparams``; None: a seed the fit has not seen."""
        if not self.starts:
            return 0
        seed = hparams.get("seed")
        return self.index(f"r0_seed{seed}") if seed in self.starts else None


def _reward_range(runs: list[SweepRun]) -> tuple[float, float]:
    """Return where r0 and the plateau may lie: [0, 1] for a reward logged inside it.

    A reward that stays in [0, 1] is taken for an accuracy or a pass rate, whose mean cannot
    leave [0, 1]; any other reward gets a wide range (-10, 10) around it.
    """
    low = min(float(np.min(r.reward)) for r in runs)
    high = max(float(np.max(r.reward)) for r in runs)
    return (0.0, 1.0) if low >= 0.0 and high <= 1.0 else (-10.0, 10.0)


def _geometric_mean(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values))))


def _layout(runs: list[SweepRun], *, finite_group: bool = True, noise_drag: bool = False,
            prompt_noise: bool = False, plateau: str = "shared") -> _Layout:
    optimizers = tuple(sorted({r.hparams["optimizer"] for r in runs}))
    seeds = [r.hparams.get("seed") for r in runs]
    starts: tuple[int, ...] = ()
    if None not in seeds and len(set(seeds)) > 1:  # runs of one seed share the starting policy
        starts = tuple(sorted(set(seeds)))
    names = [f"r0_seed{s}" for s in starts] if starts else ["r0"]
    for o in optimizers:
        names += ([f"r_star_{o}_seed{s}" for s in starts] if plateau == "per_seed" and starts
                  else [f"r_star_{o}"])
    units: list[tuple[str, float]] = []

    def reference(o: str) -> tuple[float, float, float, float, bool]:
        """Geometric-mean lr, B, G and median momentum of the runs of o; B and G both vary."""
        members = [r.hparams for r in runs if r.hparams["optimizer"] == o]
        known = [h for h in members if h.get("group_size") and h.get("batch")]
        b = _geometric_mean([h["batch"] for h in known]) if known else 1.0
        g = _geometric_mean([h["group_size"] for h in known]) if known else 1.0
        split = len({h["batch"] for h in known}) > 1 and len({h["group_size"] for h in known}) > 1
        return (_geometric_mean([h["lr"] for h in members]), b, g,
                float(np.median([h["momentum"] for h in members])), split and len(known) == len(
                    members))

    if "sgd" in optimizers:
        names.append("log_kappa")
        lr, b, g, beta, split = reference("sgd")
        if noise_drag and split:  # h sigma^2 such that the part gives 1e-3 reward/step at the ref
            unit = 2 * (1 - beta**2) * b * 1e-3 / lr**2
            names += ["log_drag_prompt_sgd", "log_drag_completion_sgd"]
            units += [("log_drag_prompt_sgd", unit), ("log_drag_completion_sgd", unit * g)]
    fit_rho, bg_ref, b_ref = False, 1.0, 1.0
    if "adam" in optimizers:
        # kappa_A / sqrt(1 + rho_p / B_ref + rho_A / (B G)_ref): what Adam runs at the sweep's
        # typical B and B G fix
        names.append("log_kappa_A_ref")
        products = [r.hparams["group_size"] * r.hparams["batch"] for r in runs
                    if r.hparams["optimizer"] == "adam"]
        bg_ref = _geometric_mean(products)
        lr, b_ref, g, beta, split = reference("adam")
        if len(set(products)) > 1:  # rho_A is determined only by runs at different B G
            names.append("log_rho_A")
            fit_rho = True
            if prompt_noise and split:
                names.append("log_rho_p")
            if noise_drag:
                names.append("log_noise_curvature_adam")
                units.append(("log_noise_curvature_adam",
                              2 * (1 + beta) / (1 - beta) * 1e-3 / lr**2))
    return _Layout(tuple(names), optimizers, fit_rho, bg_ref, starts, finite_group,
                   _reward_range(runs), b_ref, tuple(units), plateau)


def _noise_constants(theta: np.ndarray, layout: _Layout, optimizer: str) -> dict[str, Any]:
    """Return the MeanFieldMap keywords of the noise: Adam's ratios, the drag's constants."""
    if optimizer == "sgd":
        drag = layout.has("log_drag_prompt_sgd")
        return {"noise_curvature": 1.0 if drag else 0.0,  # the fit determines h sigma^2 only
                "prompt_noise": layout.physical(theta, "log_drag_prompt_sgd"),
                "completion_noise": layout.physical(theta, "log_drag_completion_sgd")}
    if not layout.fit_rho:
        return {"noise_ratio": None}
    return {"noise_ratio": layout.physical(theta, "log_rho_A"),
            "prompt_noise_ratio": layout.physical(theta, "log_rho_p") or None,
            "noise_curvature": layout.physical(theta, "log_noise_curvature_adam")}


def _kappa_a(theta: np.ndarray, layout: _Layout) -> float:
    """kappa_A from the fitted reference curvature and rho_A."""
    reference = np.exp(theta[layout.index("log_kappa_A_ref")])
    if not layout.fit_rho:
        return float(reference)
    return float(reference * np.sqrt(1 + layout.physical(theta, "log_rho_A") / layout.bg_ref
                                     + layout.physical(theta, "log_rho_p") / layout.b_ref))


def _system(h: dict[str, Any], theta: np.ndarray, layout: _Layout) -> MeanFieldMap:
    kappa = np.exp(theta[layout.index("log_kappa")]) if h["optimizer"] == "sgd" else \
        _kappa_a(theta, layout)
    return MeanFieldMap(lr=h["lr"], kappa=float(kappa), optimizer=h["optimizer"],
                        momentum=h["momentum"], **_noise_constants(theta, layout, h["optimizer"]),
                        group_size=h.get("group_size"),
                        batch=h.get("batch"), kl=h.get("kl", 0.0) or 0.0,
                        num_iterations=h.get("num_iterations", 1) or 1,
                        schedule=h.get("schedule", "constant"), warmup=h.get("warmup", 0) or 0,
                        finite_group=layout.finite_group and (h.get("group_size") or 0) >= 2)


class _Evaluator:
    """Model curves of many runs at once.

    One vectorised pass of the map per (optimizer, momentum) group, the schedules' lr profiles
    computed once.
    """

    def __init__(self, hparams: list[dict[str, Any]], steps: list[np.ndarray],
                 layout: _Layout) -> None:
        self.hparams, self.steps, self.layout = hparams, steps, layout
        self.length = int(max(int(s[-1]) for s in steps)) if steps else 1
        self.length = max(self.length, 1)
        self.profiles = np.array([lr_schedule(1.0, self.length, schedule=h.get("schedule",
                                                                                "constant"),
                                              warmup=h.get("warmup", 0) or 0) for h in hparams])
        self.groups: dict[tuple[str, float], list[int]] = {}
        for i, h in enumerate(hparams):
            self.groups.setdefault((h["optimizer"], float(h["momentum"])), []).append(i)
        self.star = [layout.star_index(h) for h in hparams]
        self.r0 = [layout.r0_index(h) for h in hparams]
        self.group_size = np.array([h.get("group_size") or 0 for h in hparams], dtype=float)
        self.batch = np.array([h.get("batch") or 0 for h in hparams], dtype=float)
        self.lr = np.array([h["lr"] for h in hparams], dtype=float)

    def stiffness(self, theta: np.ndarray) -> np.ndarray:
        """Return k of every run at its peak lr, every group informative (D = 1)."""
        layout = self.layout
        k = np.empty(len(self.hparams))
        for i, h in enumerate(self.hparams):
            if h["optimizer"] == "sgd":
                k[i] = compiled("stiffness")(h["lr"], np.exp(theta[layout.index("log_kappa")]))
            elif layout.fit_rho:
                noise = _noise_constants(theta, layout, "adam")
                k[i] = compiled("adam_stiffness_split")(
                    h["lr"], h["momentum"], _kappa_a(theta, layout),
                    noise["prompt_noise_ratio"] or 0.0, noise["noise_ratio"], h["batch"],
                    h["group_size"])
            else:
                k[i] = compiled("adam_stiffness_signal_limit")(
                    h["lr"], h["momentum"], _kappa_a(theta, layout))
        return k

    def starts(self, theta: np.ndarray) -> np.ndarray:
        """Return r0 of every run (a seed not in the fit: the mean over the fitted seeds)."""
        mean = float(np.mean(theta[self.layout.r0_indices]))
        return np.array([mean if i is None else theta[i] for i in self.r0])

    def plateaus(self, theta: np.ndarray) -> np.ndarray:
        """Return r* of every run (a seed not in the fit: the mean over the fitted seeds)."""
        return np.array([float(np.mean(theta[self.layout.star_indices(h["optimizer"])]))
                         if i is None else theta[i] for i, h in zip(self.star, self.hparams,
                                                                    strict=True)])

    def drags(self, theta: np.ndarray) -> np.ndarray | None:
        """Return the noise drag of every run at every step (its lr profile), or None."""
        if not any(_noise_constants(theta, self.layout, o).get("noise_curvature")
                   for o in self.layout.optimizers):
            return None
        out = np.zeros_like(self.profiles)
        known = (self.group_size >= 2) & (self.batch >= 1)
        g, b = np.where(known, self.group_size, 2.0), np.where(known, self.batch, 1.0)
        lrs = self.lr[:, None] * self.profiles
        for (optimizer, beta), index in self.groups.items():
            noise = _noise_constants(theta, self.layout, optimizer)
            if not noise.get("noise_curvature"):
                continue
            rows = np.array(index)
            if optimizer == "sgd":
                drag = compiled("sgd_noise_drag")(lrs[rows], beta, noise["noise_curvature"],
                                                  noise["prompt_noise"],
                                                  noise["completion_noise"],
                                                  b[rows, None], g[rows, None])
            else:
                drag = compiled("adam_noise_drag")(lrs[rows], beta, noise["noise_curvature"],
                                                   noise["prompt_noise_ratio"] or 0.0,
                                                   noise["noise_ratio"], b[rows, None],
                                                   g[rows, None])
            out[rows] = np.where(known[rows, None], drag, 0.0)
        return out

    def _drift(self, theta: np.ndarray, index: list[int], optimizer: str, star: np.ndarray
               ) -> Any:
        """Return f(e): the finite-G factor on the force at p = r* + e, relative to D = 1."""
        g, b = self.group_size[index], self.batch[index]
        known = g >= 2
        if not self.layout.finite_group or not known.any():
            return None
        if optimizer == "adam" and not self.layout.fit_rho:
            return None  # signal-dominated Adam normalises the factor away
        noise = _noise_constants(theta, self.layout, optimizer)
        g_safe, b_safe = np.where(known, g, 2.0), np.where(known, b, 1.0)

        def factor(e: np.ndarray) -> np.ndarray:
            f = drift_factor(star + e, optimizer=optimizer, group_size=g_safe, batch=b_safe,
                             noise_ratio=noise.get("noise_ratio"),
                             prompt_noise_ratio=noise.get("prompt_noise_ratio"))
            return np.where(known, f, 1.0)

        return factor

    def paths(self, theta: np.ndarray, factors: np.ndarray | None = None) -> np.ndarray:
        """Return the displacements e_n = r_n - r* of every run, shape (runs, length + 1)."""
        k = self.stiffness(theta) * (1.0 if factors is None else factors)
        r0, star = self.starts(theta), self.plateaus(theta)
        drags = self.drags(theta)
        out = np.empty((len(self.hparams), self.length + 1))
        for (optimizer, beta), index in self.groups.items():
            adam = optimizer == "adam"
            scale = k[index, None] * self.profiles[index] / ((1.0 - beta) if adam else 1.0)
            out[index] = iterate_map(momentum=beta, scale=scale, e0=r0[index] - star[index],
                                     steps=self.length, weight=(1.0 - beta) if adam else 1.0,
                                     bias_correction=adam,
                                     force_factor=self._drift(theta, index, optimizer,
                                                              star[index]),
                                     drag=None if drags is None else drags[index])
        return out

    def curves(self, theta: np.ndarray, factors: np.ndarray | None = None) -> list[np.ndarray]:
        """Return the model reward of every run at its logged steps."""
        e = self.paths(theta, factors)
        star = self.plateaus(theta)
        return [star[i] + e[i, s.astype(int)] for i, s in enumerate(self.steps)]


def _evaluator(runs: list[SweepRun], layout: _Layout) -> _Evaluator:
    return _Evaluator([r.hparams for r in runs], [r.steps for r in runs], layout)


def _curve(run: SweepRun, theta: np.ndarray, layout: _Layout) -> np.ndarray:
    return _evaluator([run], layout).curves(theta)[0]


def _start(runs: list[SweepRun], layout: _Layout) -> list[np.ndarray]:
    early = float(np.mean([np.mean(r.reward[:10]) for r in runs]))
    seed_early = {s: float(np.mean([np.mean(r.reward[:10]) for r in runs
                                    if r.hparams.get("seed") == s])) for s in layout.starts}
    starts = []
    for tau in (100.0, 400.0, 1500.0):
        theta = np.zeros(len(layout.names))
        for i in layout.r0_indices:
            name = layout.names[i]
            theta[i] = seed_early[int(name.removeprefix("r0_seed"))] if name != "r0" else early
        for o in layout.optimizers:
            late = np.mean([np.mean(r.reward[-30:]) for r in runs if r.hparams["optimizer"] == o])
            theta[layout.star_indices(o)] = late + 0.3 * (late - early) + 0.05
        for o in layout.optimizers:
            lrs = [r.hparams["lr"] for r in runs if r.hparams["optimizer"] == o]
            lr = float(np.median(lrs))
            beta = float(np.median([r.hparams["momentum"] for r in runs
                                    if r.hparams["optimizer"] == o]))
            k = (1 - beta) / tau  # tau = c / k
            if o == "sgd":
                theta[layout.index("log_kappa")] = np.log(k / lr)
            else:
                theta[layout.index("log_kappa_A_ref")] = np.log(k / (lr * (1 - beta)))
        if layout.fit_rho:
            theta[layout.index("log_rho_A")] = np.log(30.0)
        for name in ("log_rho_p",):
            if layout.has(name):
                theta[layout.index(name)] = np.log(3.0)
        for name, _ in layout.units:  # a drag of 2e-4 reward/step at the reference setting
            theta[layout.index(name)] = np.log(0.2)
        starts.append(theta)
    return starts


def _bounds(layout: _Layout) -> tuple[np.ndarray, np.ndarray]:
    lower = np.full(len(layout.names), -np.inf)
    upper = np.full(len(layout.names), np.inf)
    for i, name in enumerate(layout.names):
        if name.startswith("log_kappa"):
            lower[i], upper[i] = np.log(1e-12), np.log(1e12)
        elif name in ("log_rho_A", "log_rho_p"):
            lower[i], upper[i] = _LOG_RHO
        elif name in dict(layout.units):
            lower[i], upper[i] = _LOG_DRAG
        else:  # r0 and the plateau: a mean reward
            lower[i], upper[i] = layout.reward_range
    return lower, upper


def _sandwich(jac: np.ndarray, residuals: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """Cluster-robust covariance (J'J)^-1 (sum_c J_c' e_c e_c' J_c) (J'J)^-1."""
    bread = np.linalg.pinv(jac.T @ jac)
    meat = np.zeros_like(bread)
    for c in np.unique(clusters):
        score = jac[clusters == c].T @ residuals[clusters == c]
        meat += np.outer(score, score)
    n_clusters = len(np.unique(clusters))
    correction = n_clusters / max(n_clusters - 1, 1)
    return correction * bread @ meat @ bread


def _joint_fit(runs: list[SweepRun], layout: _Layout
               ) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    clusters = np.concatenate([np.full(r.steps.size, i) for i, r in enumerate(runs)])
    observed = np.concatenate([r.reward for r in runs])

    evaluator = _evaluator(runs, layout)

    def residuals(theta: np.ndarray) -> np.ndarray:
        return np.concatenate(evaluator.curves(theta)) - observed

    lower, upper = _bounds(layout)
    best = None
    for start in _start(runs, layout):
        result = least_squares(residuals, np.clip(start, lower + 1e-9, upper - 1e-9),
                               bounds=(lower, upper), x_scale="jac")
        if best is None or result.cost < best.cost:
            best = result
    # a constant held at its bound is not determined by the data: the covariance is that of
    # the others with it fixed there (its row and column zero), not a Gaussian across the bound
    active = best.active_mask != 0
    cov = np.zeros((best.x.size, best.x.size))
    free = np.flatnonzero(~active)
    cov[np.ix_(free, free)] = _sandwich(best.jac[:, free], best.fun, clusters)
    return best.x, cov, float(best.cost), active


@dataclass(eq=False)
class SweepFit:
    """A joint fit of a sweep.

    Shared constants with errors, per-run residuals, the tau-lr exponent and the test of
    G-invariance against B G dependence (``to_dict`` for JSON).
    """

    runs: list[SweepRun]
    fitted: list[SweepRun]
    theta: np.ndarray
    cov: np.ndarray
    layout: _Layout
    per_setting: list[dict[str, Any]]
    warnings: list[str]
    at_bound: np.ndarray  # True where a constant ended at its bound (fixed there, no error)
    options: dict[str, Any] = field(default_factory=dict)  # fit_sweep's keywords of this fit
    calibrations: dict[tuple, dict[str, Any]] = field(default_factory=dict, repr=False)

    def constants(self) -> dict[str, dict[str, Any]]:
        """Shared constants in physical units with standard errors (delta method for logs)."""
        out = {}
        se = np.sqrt(np.clip(np.diag(self.cov), 0, None))
        lower, upper = _bounds(self.layout)
        for i, name in enumerate(self.layout.names):
            value, err = float(self.theta[i]), float(se[i])
            at_bound = bool(self.at_bound[i]) or np.isclose(value, lower[i], atol=1e-3) or \
                np.isclose(value, upper[i], atol=1e-3)
            entry: dict[str, Any]
            if name.startswith("log_"):
                phys = name.removeprefix("log_")
                scaled = self.layout.physical(self.theta, name)
                entry = {"value": scaled, "stderr": float(scaled * err), "log_stderr": err}
                if self.at_bound[i]:  # held at the bound: a bound, no error to quote
                    entry["stderr"] = entry["log_stderr"] = None
                entry["status"] = "at bound: not determined" if at_bound else (
                    "determined" if err < 1.0 else "weakly determined (log error > 1)")
                if name == "log_rho_A" and at_bound:
                    entry["status"] = (
                        "at the upper bound: noise-dominated over these B G (k ~ sqrt(B G)); "
                        "a lower bound only" if value > 0 else
                        "at the lower bound: signal-dominated (k independent of B G)")
                if name == "log_rho_p" and at_bound and value < 0:
                    entry["status"] = ("at the lower bound: no between-prompt part measured in "
                                       "Adam's second moment (the B G form)")
                if name in dict(self.layout.units) and at_bound:
                    entry["status"] = (
                        "at the lower bound: no noise drag resolved by these runs (an upper "
                        "bound only)" if value < 0 else "at the upper bound: not determined")
                out[phys] = entry
            elif at_bound:  # r0 or the plateau at the edge of the reward range
                edge = "upper" if value > np.mean(self.layout.reward_range) else "lower"
                out[name] = {"value": value, "stderr": None, "bound": edge,
                             "status": f"not determined: at the {edge} end of the reward range "
                                       f"{list(self.layout.reward_range)}, a bound and not a "
                                       "measurement (the runs have not bent over)"}
            else:
                out[name] = {"value": value, "stderr": err,
                             "status": "determined" if err < 0.5 else "weakly determined"}
        if self.layout.starts:
            values = self.theta[self.layout.r0_indices]
            out["r0"] = {"value": float(np.mean(values)),
                         "seed_spread": float(np.std(values, ddof=1)),
                         "status": f"derived: mean of the r0 of seeds "
                                   f"{', '.join(map(str, self.layout.starts))} (each seed starts "
                                   f"from its own weights)"}
        for o in self.layout.optimizers:
            stars = self.layout.star_indices(o)
            if len(stars) > 1:
                values = self.theta[stars]
                out[f"r_star_{o}"] = {"value": float(np.mean(values)),
                                      "seed_spread": float(np.std(values, ddof=1)),
                                      "status": "derived: mean of the plateaus of the seeds "
                                                "(one plateau per seed)"}
        if "adam" in self.layout.optimizers:
            out["kappa_A_ref"]["bg_ref"] = self.layout.bg_ref
            rho_status = out.get("rho_A", {}).get("status", "not fitted")
            out["kappa_A"] = {"value": _kappa_a(self.theta, self.layout),
                              "status": "derived: kappa_A_ref sqrt(1 + rho_p / B_ref + rho_A / "
                                        f"(B G)_ref); rho_A {rho_status}"}
        return out

    def system(self, hparams: dict[str, Any], theta: np.ndarray | None = None) -> MeanFieldMap:
        """Return the fitted mean-field map of a run with ``hparams`` at ``theta`` or the fit."""
        return _system(hparams, self.theta if theta is None else theta, self.layout)

    def curve(self, hparams: dict[str, Any], steps: int, theta: np.ndarray | None = None
              ) -> np.ndarray:
        """Return the predicted mean reward at steps 0 .. steps of a run with ``hparams``."""
        theta = self.theta if theta is None else theta
        return _Evaluator([hparams], [np.arange(steps + 1)], self.layout).curves(theta)[0]

    def run_report(self) -> list[dict[str, Any]]:
        """Return, per run, its settings, fitted stiffness and residuals (JSON-ready)."""
        out = []
        for run in self.runs:
            entry: dict[str, Any] = {"name": run.name, "hparams": run.hparams,
                                     "collapsed": collapsed(run)}
            if run in self.fitted:
                model = _curve(run, self.theta, self.layout)
                resid = run.reward - model
                total = float(np.sum((run.reward - run.reward.mean()) ** 2))
                entry["residual_rms"] = float(np.sqrt(np.mean(resid**2)))
                entry["r2"] = float(1 - np.sum(resid**2) / total) if total > 0 else None
            out.append(entry)
        return out

    def tau_lr_exponent(self) -> dict[str, Any]:
        """Slope of ln tau against ln lr over settings that differ only in lr (per optimizer).

        From the per-setting stiffnesses; expected -1 (derivations ``relaxation_time`` and
        ``adam_tau_lr_exponent``).
        """
        results = {}
        for o in self.layout.optimizers:
            groups: dict[tuple, list[dict[str, Any]]] = {}
            for s in self.per_setting:
                if s["hparams"]["optimizer"] == o and s["factor"] is not None:
                    key = tuple(s["hparams"].get(k) for k in ("group_size", "batch", "momentum",
                                                              "kl", "schedule"))
                    groups.setdefault(key, []).append(s)
            group = max(groups.values(), key=len, default=[])
            lrs = sorted({s["hparams"]["lr"] for s in group})
            if len(lrs) < 2:
                results[o] = {"value": None, "status": "not determined: fewer than two "
                              "learning rates with a determined stiffness at otherwise equal "
                              "settings"}
                continue
            x = np.log([s["hparams"]["lr"] for s in group])
            # tau = c / k; ln k = ln(lr) + ln(factor) + const, so ln tau = -ln lr - ln factor
            y = -(x + np.log([s["factor"] for s in group]))
            w = 1.0 / np.maximum([s["log_factor_stderr"] for s in group], 1e-3) ** 2
            design = np.column_stack([np.ones_like(x), x])
            cov = np.linalg.pinv(design.T @ (w[:, None] * design))
            coef = cov @ design.T @ (w * y)
            results[o] = {"value": float(coef[1]), "stderr": float(np.sqrt(cov[1, 1])),
                          "expected": -1.0, "learning_rates": lrs}
        return results

    def bg_test(self) -> dict[str, Any]:
        """Per-setting stiffness at the same lr against G and B G.

        Does the path depend on B G only (Adam's derivation), on neither (SGD, signal-dominated
        Adam), or on G apart from B G?
        """
        results = {}
        for o in self.layout.optimizers:
            rows = [s for s in self.per_setting if s["hparams"]["optimizer"] == o
                    and s["factor"] is not None and s["hparams"].get("group_size")
                    and s["hparams"].get("batch")]
            if not rows:
                continue
            lr = max({s["hparams"]["lr"] for s in rows},
                     key=lambda v: sum(s["hparams"]["lr"] == v for s in rows))
            rows = [s for s in rows if s["hparams"]["lr"] == lr]
            if len({(s["hparams"]["group_size"], s["hparams"]["batch"]) for s in rows}) < 2:
                results[o] = {"status": "not determined: one (G, B) setting only"}
                continue
            bg = np.array([s["hparams"]["group_size"] * s["hparams"]["batch"] for s in rows],
                          dtype=float)
            g = np.array([s["hparams"]["group_size"] for s in rows], dtype=float)
            y = np.log([s["stiffness"] for s in rows])  # measured k of each setting
            se = np.maximum([s["log_factor_stderr"] for s in rows], 1e-3)
            w = 1.0 / se**2
            design = np.column_stack([np.ones_like(y), np.log(bg), np.log(g)])
            rank = np.linalg.matrix_rank(design)
            entry: dict[str, Any] = {"lr": lr, "settings": [
                {"group_size": int(gg), "batch": int(b // gg), "stiffness": float(np.exp(v)),
                 "log_stderr": float(e)} for gg, b, v, e in zip(g, bg, y, se, strict=True)]}
            if rank == 3:
                cov = np.linalg.pinv(design.T @ (w[:, None] * design))
                coef = cov @ design.T @ (w * y)
                entry["bg_exponent"] = {"value": float(coef[1]),
                                        "stderr": float(np.sqrt(cov[1, 1]))}
                entry["g_exponent_at_fixed_bg"] = {"value": float(coef[2]),
                                                   "stderr": float(np.sqrt(cov[2, 2]))}
            pairs = []
            for i in range(len(rows)):
                for j in range(i + 1, len(rows)):
                    if bg[i] == bg[j] and g[i] != g[j]:
                        z = (y[i] - y[j]) / np.hypot(se[i], se[j])
                        pairs.append({"bg": int(bg[i]), "g": [int(g[i]), int(g[j])],
                                      "log_ratio": float(y[i] - y[j]), "z": float(z)})
            entry["same_bg_pairs"] = pairs
            if o == "adam" and self.layout.fit_rho and not self.layout.has("log_rho_p"):
                rho = float(np.exp(self.theta[self.layout.index("log_rho_A")]))
                mid = float(np.exp(np.mean(np.log(bg))))
                # the exponent depends on B G alone: evaluated at B = mid, G = 1
                entry["predicted_bg_exponent"] = float(
                    compiled("adam_stiffness_bg_exponent")(rho, mid, 1))
                entry["predicted_g_exponent_at_fixed_bg"] = 0.0
            elif o == "adam" and self.layout.fit_rho and rank == 3:
                # the split v_hat: the same regression on the fitted map's own k (D = 1)
                model = np.log(_Evaluator([s["hparams"] for s in rows],
                                          [np.arange(2)] * len(rows),
                                          self.layout).stiffness(self.theta))
                coef = np.linalg.lstsq(design, model, rcond=None)[0]
                entry["predicted_bg_exponent"] = float(coef[1])
                entry["predicted_g_exponent_at_fixed_bg"] = float(coef[2])
            else:
                entry["predicted_bg_exponent"] = 0.0
                entry["predicted_g_exponent_at_fixed_bg"] = 0.0
            if self.layout.units:
                entry["note"] = ("per-setting k with the noise drag held at the joint fit: the "
                                 "drag, not k, carries the B and G dependence of the gain that "
                                 "the noise explains")
            results[o] = entry
        return results

    def stability(self) -> list[dict[str, Any]]:
        """Compare each collapsed run's lr with the slow-mode limit of the fitted map.

        Each entry also says which limit the data constrain.
        """
        out = []
        healthy = [r for r in self.runs if not collapsed(r)]
        for run in self.runs:
            if not collapsed(run):
                continue
            h = run.hparams
            system = self.system(h)
            entry = {"name": run.name, "lr": h["lr"], "slow_mode_lr_max": system.lr_max}
            stable_lrs = [r.hparams["lr"] for r in healthy
                          if r.hparams["optimizer"] == h["optimizer"]]
            if h["lr"] < system.lr_max:
                step = system.stiffness / system.kappa  # k per unit curvature at this lr
                bound = float(system.stiffness_max / step)
                entry["limit"] = "stiff-mode"
                entry["explanation"] = (
                    f"the run collapsed at lr {h['lr']:.3g}, {system.lr_max / h['lr']:.3g}x "
                    f"below the slow (reward) mode's limit: the collapse constrains a stiff mode "
                    f"of curvature >= {bound:.3g} (units of kappa)")
                entry["stiff_curvature_lower_bound"] = bound
                below = [lr for lr in stable_lrs if lr < h["lr"]]
                if below:
                    ok = self.system({**h, "lr": max(below)})
                    entry["stiff_curvature_upper_bound"] = float(
                        ok.stiffness_max / (ok.stiffness / ok.kappa))
            else:
                entry["limit"] = "slow-mode"
                entry["explanation"] = (f"lr {h['lr']:.3g} is past the slow mode's limit "
                                        f"{system.lr_max:.3g}: consistent with the fitted map")
            out.append(entry)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Return the whole fit as the JSON object of ``grpodyn sweep``."""
        return {"constants": self.constants(), "runs": self.run_report(),
                "tau_lr_exponent": self.tau_lr_exponent(), "bg_test": self.bg_test(),
                "stability": self.stability(),
                "per_setting": [{k: v for k, v in s.items() if k != "runs"}
                                for s in self.per_setting],
                "n_runs": len(self.runs), "n_fitted": len(self.fitted),
                "warnings": self.warnings}


def _per_setting(runs: list[SweepRun], theta: np.ndarray, layout: _Layout
                 ) -> list[dict[str, Any]]:
    """Return k of each setting free (as a factor on the joint model's k), r0 and r* held."""
    settings: dict[tuple, list[SweepRun]] = {}
    for run in runs:
        settings.setdefault(run.setting, []).append(run)
    out = []
    for group in settings.values():
        observed = np.concatenate([r.reward for r in group])
        clusters = np.concatenate([np.full(r.steps.size, i) for i, r in enumerate(group)])

        evaluator = _evaluator(group, layout)

        def residuals(p: np.ndarray, evaluator: _Evaluator = evaluator,
                      observed: np.ndarray = observed) -> np.ndarray:
            return np.concatenate(evaluator.curves(theta, np.exp(p[0]))) - observed

        result = least_squares(residuals, np.zeros(1), bounds=([-12.0], [12.0]))
        cov = _sandwich(result.jac, result.fun, clusters) if len(group) > 1 else \
            np.linalg.pinv(result.jac.T @ result.jac) * 2 * result.cost / max(observed.size - 1, 1)
        se = float(np.sqrt(max(cov[0, 0], 0.0)))
        at_bound = abs(result.x[0]) > 11.9
        system = _system(group[0].hparams, theta, layout)
        factor = float(np.exp(result.x[0]))
        out.append({"hparams": {k: v for k, v in group[0].hparams.items() if k != "seed"},
                    "n_runs": len(group), "factor": None if at_bound else factor,
                    "log_factor_stderr": se, "stiffness": system.stiffness * factor,
                    "tau": system.damping / (system.stiffness * factor)})
    return out


def fit_sweep(runs: list[SweepRun], *, finite_group: bool = True, noise_drag: bool = True,
              prompt_noise: bool = True, plateau: str = "shared") -> SweepFit:
    """Fit the shared constants of a sweep (see the module docstring).

    Parameters
    ----------
    runs : list of SweepRun
        The runs; those that collapsed are left out of the fit.
    finite_group : bool
        Put the finite-G drift factor 1 - p^G - (1-p)^G on the force (derivations
        ``sgd_stiffness_finite_group``, ``adam_stiffness_finite_group``); False gives the
        large-G map of session 1.
    noise_drag : bool
        Let the sampling noise cost expected reward at second order (derivations
        ``sgd_noise_drag``, ``adam_noise_drag``): SGD's h sigma_p^2 and h sigma_c^2, Adam's
        h_noise, fitted where B and G both vary (revision 3; False: revision 2's map).
    prompt_noise : bool
        Split Adam's noise ratio into a between-prompt rho_p (per prompt) and rho_A (per
        completion): ``adam_stiffness_split``, fitted where B and G both vary (revision 3).
    plateau : {"shared", "per_seed"}
        One r* per optimizer, or one per optimizer and seed (runs of one seed start from the same
        weights; an unseen seed gets the mean). Revision 3 keeps "shared": a plateau per seed
        did not help the design score (docs/findings.md section 6d).

    Returns
    -------
    SweepFit
        The joint fit.
    """
    if not runs:
        raise InputError("a sweep needs at least one run")
    for run in runs:
        if run.steps.size < 10:
            raise InputError(f"{run.name}: only {run.steps.size} reward points (need >= 10)")
    warnings = []
    fitted = [r for r in runs if not collapsed(r)]
    for run in runs:
        if run not in fitted:
            warnings.append(f"{run.name}: collapsed (late reward under half the early one); "
                            "left out of the fit, compared with the stability limit")
    if not fitted:
        raise InputError("every run of the sweep collapsed: nothing to fit")
    if plateau not in PLATEAUS:
        raise InputError(f"plateau must be one of {', '.join(PLATEAUS)}, got {plateau!r}")
    layout = _layout(fitted, finite_group=finite_group, noise_drag=noise_drag,
                     prompt_noise=prompt_noise, plateau=plateau)
    if "adam" in layout.optimizers and not layout.fit_rho:
        warnings.append("all Adam runs share one B G: the noise ratio rho_A is not determined "
                        "(signal-dominated Adam assumed: k independent of G and B)")
    theta, cov, _, at_bound = _joint_fit(fitted, layout)
    for i in np.flatnonzero(at_bound):
        name = layout.names[i]
        if name.startswith("r_star") or name.startswith("r0"):
            warnings.append(f"{name} at the edge of the reward range {list(layout.reward_range)}:"
                            " not determined by the runs (a bound, held there; the band does "
                            "not carry its uncertainty)")
    per_setting = _per_setting(fitted, theta, layout)
    options = {"finite_group": finite_group, "noise_drag": noise_drag,
               "prompt_noise": prompt_noise, "plateau": plateau}
    return SweepFit(runs, fitted, theta, cov, layout, per_setting, warnings, at_bound, options)


# --- transfer --------------------------------------------------------------------------------
def _noise_model(fit: SweepFit) -> tuple[np.ndarray, float]:
    """Per-step sampling variance of a logged reward, var = r (1 - r) (c_B / B + c_BG / (B G)).

    Fitted (non-negative) to the source runs' residuals around their own smoothed path; and the
    seed-to-seed variance of the smoothed paths around the joint model.
    """
    from scipy.optimize import nnls

    rows, target, seed_var = [], [], []
    kernel = np.ones(_SMOOTH) / _SMOOTH
    for run in fit.fitted:
        if run.reward.size < 3 * _SMOOTH:
            continue
        smooth = np.convolve(run.reward, kernel, mode="valid")
        centre = run.reward[_SMOOTH // 2: _SMOOTH // 2 + smooth.size]
        var = float(np.var(centre - smooth) * _SMOOTH / (_SMOOTH - 1))
        level = float(np.clip(np.mean(run.reward), 0.01, 0.99))
        b, g = run.hparams.get("batch"), run.hparams.get("group_size")
        if b and g:
            base = level * (1 - level)
            rows.append([base / b, base / (b * g)])
            target.append(var)
        model = _curve(run, fit.theta, fit.layout)[_SMOOTH // 2: _SMOOTH // 2 + smooth.size]
        seed_var.append(float(np.mean((smooth - model) ** 2)))
    coef = nnls(np.array(rows), np.array(target))[0] if rows else np.zeros(2)
    return coef, float(np.mean(seed_var)) if seed_var else 0.0


def setting_distance(a: dict[str, Any], b: dict[str, Any]) -> float:
    """Distance between two hyperparameter settings in log-hyperparameter space (dimensionless).

    d(a, b) = sqrt(sum_k (log a_k - log b_k)^2) over k in lr, group_size, batch,
    num_iterations, and 1 - momentum (log(1 - beta1): the momentum enters the map through its
    time scale 1 / (1 - beta1)); a key missing or None on either side is left out. A factor of
    e in lr is a distance of 1, lr x3 of 1.10. The KL coefficient (often 0), the schedule and
    the warm-up are not in the distance: a difference there is not covered by the transfer
    error term of the band.
    """
    total = 0.0
    for key in _DISTANCE_KEYS:
        x, y = a.get(key), b.get(key)
        if x is None or y is None:
            continue
        if key == "momentum":
            x, y = 1.0 - x, 1.0 - y
        if x > 0 and y > 0:
            total += float(np.log(x / y)) ** 2
    return float(np.sqrt(total))


def _nearest(hp: dict[str, Any], runs: list[SweepRun]) -> tuple[float, dict[str, Any] | None]:
    """Return the smallest distance from ``hp`` to a run of its optimizer, and its settings."""
    same = [r for r in runs if r.hparams["optimizer"] == hp["optimizer"]]
    if not same:
        return float("inf"), None
    nearest = min(same, key=lambda r: setting_distance(hp, r.hparams))
    settings = {k: v for k, v in nearest.hparams.items() if k not in ("seed", "steps")}
    return setting_distance(hp, nearest.hparams), settings


@dataclass(frozen=True)
class _Band:
    """Revision 3's prediction of one target: the mean path and the variance parts of its band."""

    mean: np.ndarray
    var_constants: np.ndarray
    seed_var: float
    var_sampling: np.ndarray
    coef: np.ndarray
    warnings: tuple[str, ...]

    @property
    def variance(self) -> np.ndarray:
        return self.var_constants + self.seed_var + self.var_sampling


def _band(fit: SweepFit, hp: dict[str, Any], n: int, draws: int, seed: int) -> _Band:
    """Return the mean path of ``hp`` over steps 0..n and revision 3's band variance.

    Constants' covariance by ``draws`` draws, the seed-to-seed variance of the sources and the
    per-step sampling noise of the target's B and G (:func:`_noise_model`).
    """
    warnings = []
    mean = fit.curve(hp, n)
    rng = np.random.default_rng(seed)
    cov = (fit.cov + fit.cov.T) / 2
    draws_theta = rng.multivariate_normal(fit.theta, cov, size=draws, method="eigh",
                                          check_valid="ignore")
    lower_b, upper_b = _bounds(fit.layout)
    draws_theta = np.clip(draws_theta, lower_b, upper_b)
    unseen = fit.layout.starts and fit.layout.r0_index(hp) is None
    if unseen:  # a seed the sources do not hold: its r0 is one more draw from the seeds' spread
        r0s = fit.theta[fit.layout.r0_indices]
        shift = rng.normal(0.0, float(np.std(r0s, ddof=1)), size=draws)
        draws_theta[:, fit.layout.r0_indices] += shift[:, None]
        warnings.append(f"seed {hp.get('seed')} not among the sources' seeds "
                        f"{', '.join(map(str, fit.layout.starts))}: r0 is their mean, the band "
                        "carries their spread")
    evaluator = _Evaluator([hp], [np.arange(n + 1)], fit.layout)
    with np.errstate(over="ignore", invalid="ignore"):
        curves = np.array([evaluator.curves(theta)[0] for theta in draws_theta])
    # a mean reward lies in [0, 1]: a draw whose map runs away (unstable or undetermined
    # constants) counts at the bound it crossed, not as an overflow that voids the band
    curves = np.clip(curves[~np.any(np.isnan(curves), axis=1)], 0.0, 1.0)
    var_constants = np.var(curves, axis=0) if len(curves) > 1 else np.zeros_like(mean)
    coef, seed_var = _noise_model(fit)
    level_path = np.clip(mean, 0.01, 0.99)
    b, g = hp.get("batch"), hp.get("group_size")
    if b and g:
        var_sampling = level_path * (1 - level_path) * (coef[0] / b + coef[1] / (b * g))
    else:
        var_sampling = np.zeros_like(mean)
        warnings.append("target B or G unknown: the band leaves out per-step sampling noise")
    return _Band(mean, var_constants, seed_var, var_sampling, coef, tuple(warnings))


def _refit_without(fit: SweepFit, setting: tuple) -> SweepFit | str:
    """Refit ``fit``'s sweep without the runs of ``setting``; the input error's text if it fails."""
    try:
        return fit_sweep([r for r in fit.fitted if r.setting != setting], **fit.options)
    except InputError as exc:
        return str(exc)


def transfer_error(fit: SweepFit, optimizer: str, *, draws: int = 200, seed: int = 0
                   ) -> dict[str, Any]:
    """Calibrate the transfer-error term of the band by leave-one-setting-out on the sources.

    Revision 4 (issue 15). Each setting of ``optimizer`` among the fitted source runs is held
    out in turn, the sweep refitted on the other runs (``fit_sweep`` with this fit's options)
    and the held-out setting transferred from them (revision 3's mean path and band). The map's
    own error when it carries the constants over a distance d = :func:`setting_distance`
    (held-out setting, nearest remaining setting) is modelled as a relative error eps of the
    predicted displacement from the start, eps ~ N(0, s d^2):

        var_transfer(n) = s d^2 (m(n) - m(0))^2,

    zero at step 0 (r0 is carried by the seed, not by the map), growing with the horizon as the
    path moves, and saturating with it at the plateau (a stiffness error fades there, a plateau
    error does not; both are a share of the distance travelled). s (dimensionless, per unit
    squared log-distance) is the ratio of sums over every point n of every held-out run i:

        s = max(0, sum (e_i(n)^2 - v(n)) / sum d^2 (m(n) - m(0))^2),

    e_i(n) the run's reward minus the transferred mean of its seed, v(n) revision 3's band
    variance at that step: the squared error beyond what the band already explains, regressed
    on d^2 (m(n) - m(0))^2 through the origin with weights proportional to the regressor (a
    moment estimator, robust to single points).

    Returns
    -------
    dict
        ``status`` ("calibrated" or "not calibrated: <why>"), ``s``, ``form``, ``held_out``
        (per held-out setting: its settings, runs, distance, mean squared error of its runs
        around the transferred mean, mean band variance, mean excess), ``draws``. Cached on the
        fit.
    """
    key = (optimizer, draws, seed)
    if key in fit.calibrations:
        return fit.calibrations[key]
    form = "var_transfer(n) = s d^2 (m(n) - m(0))^2, d = setting_distance(target, nearest source)"
    groups: dict[tuple, list[SweepRun]] = {}
    for run in fit.fitted:
        if run.hparams["optimizer"] == optimizer:
            groups.setdefault(run.setting, []).append(run)
    out: dict[str, Any] = {"s": None, "form": form, "held_out": [], "draws": draws}
    if len(groups) < 2:
        out["status"] = (f"not calibrated: the sources hold {len(groups)} {optimizer} setting"
                         f"{'' if len(groups) == 1 else 's'}; holding one out leaves none to "
                         "transfer from")
        fit.calibrations[key] = out
        return out
    num = den = 0.0
    ordered = sorted(groups.items(), key=lambda item: str(item[0]))
    refits = run_tasks([partial(_refit_without, fit, setting) for setting, _ in ordered],
                       executor="serial", description="transfer error: settings held out")
    for (_, held), sub in zip(ordered, refits, strict=True):
        hp = {k: v for k, v in held[0].hparams.items() if k not in ("seed", "steps")}
        entry: dict[str, Any] = {"setting": hp, "runs": len(held)}
        if isinstance(sub, str):
            entry["status"] = f"skipped: {sub}"
            out["held_out"].append(entry)
            continue
        d, _ = _nearest(hp, sub.fitted)
        n = int(max(r.steps[-1] for r in held))
        with np.errstate(over="ignore", invalid="ignore"):
            band = _band(sub, {**hp, "seed": held[0].hparams.get("seed")}, n, draws, seed)
        errors, excess, regressor = [], [], []
        for run in held:
            idx = run.steps.astype(int)
            mean = sub.curve({**hp, "seed": run.hparams.get("seed")}, n)
            e2 = (run.reward - mean[idx]) ** 2
            errors.append(e2)
            excess.append(e2 - band.variance[idx])
            regressor.append(d ** 2 * (mean[idx] - mean[0]) ** 2)
        e2_all, excess_all = np.concatenate(errors), np.concatenate(excess)
        num += float(np.sum(excess_all))
        den += float(np.sum(np.concatenate(regressor)))
        entry.update({"distance": d, "mean_squared_error": float(np.mean(e2_all)),
                      "band_variance": float(np.mean(band.variance)),
                      "excess": float(np.mean(excess_all)), "status": "used"})
        out["held_out"].append(entry)
    if den > 0:
        out["s"] = max(num / den, 0.0)
        out["raw_ratio"] = num / den
        out["status"] = "calibrated"
    else:
        out["status"] = "not calibrated: no held-out setting moved away from its start"
    fit.calibrations[key] = out
    return out


def _exponent_warning(fit: SweepFit, optimizer: str, ratio: float) -> list[str]:
    """Warn when the sources' own tau-lr exponent refutes the map's -1 for an lr extrapolation.

    The map carries tau ~ lr^-1 (derivations ``relaxation_time``, ``adam_tau_lr_exponent``);
    if the sources measure an exponent p that differs from -1 by more than 2 standard errors,
    extrapolating the lr by a factor ``ratio`` misplaces tau by about ratio^|p + 1|, an error
    the band does not carry. Warned when that factor exceeds 1.25 (the project's tolerance on a
    relaxation time) and the mismatch is significant.
    """
    measured = fit.tau_lr_exponent().get(optimizer, {})
    value, stderr = measured.get("value"), measured.get("stderr")
    if value is None or stderr is None or abs(value + 1.0) <= 2.0 * stderr \
            or ratio ** abs(value + 1.0) <= 1.25:
        return []
    return [f"the sources' tau-lr exponent is {value:.2f} +- {stderr:.2f}, not the map's -1: "
            f"extrapolating lr by x{ratio:.3g} may misplace tau by a factor of about "
            f"{ratio ** abs(value + 1.0):.2g}, which the band does not carry"]


def transfer(sources: list[SweepRun], target: dict[str, Any], *, steps: int | None = None,
             level: float = 0.9, draws: int = 200, seed: int = 0,
             fit: SweepFit | None = None, cross_validate: bool = True) -> dict[str, Any]:
    """Predict the reward path of a run with hyperparameters ``target`` from ``sources``.

    ``target`` has keys of :data:`HPARAM_KEYS`; missing ones are taken from the first source.
    ``cross_validate`` (revision 4) adds the transfer-error term s d^2 (m(n) - m(0))^2 to the
    band, s calibrated by :func:`transfer_error` (leave-one-setting-out on the sources, about
    one sweep fit per source setting); False gives revision 3's band.

    Returns the JSON dict of ``grpodyn transfer``: ``steps``, ``mean``, ``lower``, ``upper``,
    ``level``, ``constants``, ``assumptions``, ``warnings``, ``band_calibration``.
    """
    level = check_fraction("--level", level)
    fit = fit_sweep(sources) if fit is None else fit
    base = {k: v for k, v in fit.fitted[0].hparams.items() if k not in ("seed", "steps")}
    hp = {**base, **_checked(dict(target), "--to")}
    warnings = list(fit.warnings)
    if hp["optimizer"] not in fit.layout.optimizers:
        raise InputError(f"--to: optimizer {hp['optimizer']} has no source run; the sources "
                         f"have {', '.join(fit.layout.optimizers)}")
    n = steps if steps is not None else hp.get("steps") or int(max(r.steps[-1] for r in sources))
    n = check_int("--steps", n, minimum=1)
    hp.pop("steps", None)
    system = fit.system(hp)
    band = _band(fit, hp, n, draws, seed)
    mean, coef, seed_var = band.mean, band.coef, band.seed_var
    warnings.extend(band.warnings)
    distance, nearest = _nearest(hp, fit.fitted)
    if cross_validate:
        calibration = dict(transfer_error(fit, hp["optimizer"], draws=draws, seed=seed))
    else:
        calibration = {"s": None, "status": "not calibrated: cross_validate=False",
                       "held_out": []}
    calibration.update({"distance": distance, "nearest_source": nearest})
    if calibration["s"] is None:
        var_transfer = np.zeros_like(mean)
        warnings.append(f"band {calibration['status']}: it leaves out the transfer error of the "
                        f"map (revision 3's band), here at distance {distance:.2f} from the "
                        "nearest source setting")
    else:
        var_transfer = calibration["s"] * distance ** 2 * (mean - mean[0]) ** 2
    z = float(norm.ppf(0.5 + level / 2))
    half = z * np.sqrt(band.variance + var_transfer)
    source_lrs = [r.hparams["lr"] for r in fit.fitted if r.hparams["optimizer"] == hp["optimizer"]]
    ratio = max(hp["lr"] / max(source_lrs), min(source_lrs) / hp["lr"])
    if ratio > 1.0:
        warnings.append(f"lr {hp['lr']:.3g} lies outside the sources' range "
                        f"[{min(source_lrs):.3g}, {max(source_lrs):.3g}]: extrapolated")
        warnings.extend(_exponent_warning(fit, hp["optimizer"], ratio))
    if system.lr > 0.5 * system.lr_max:
        warnings.append(f"lr is within a factor 2 of the slow-mode limit {system.lr_max:.3g}")
    assumptions = [
        "the target shares the sources' model, task and reward; runs of one seed share the "
        "starting policy (r0), given with --to seed=N" if fit.layout.starts else
        "the target shares the sources' model, task, reward and starting policy (r0)",
        "finite-G drift factor 1 - p^G - (1-p)^G on the force at p = the mean-field reward"
        if fit.layout.finite_group else "every group informative (large-G map)",
        "plateau r* per seed (an unseen seed: the seeds' mean), not a function of lr"
        if fit.layout.plateau == "per_seed" and fit.layout.starts else
        "plateau r* shared by the runs of one optimizer (not a function of lr)",
        "SGD stiffness lr * kappa; Adam stiffness lr (1-beta1) kappa_A / sqrt(1 + rho_p/B + "
        "rho_A/(B G)) (rho_p = 0 unless fitted)",
        "sampling noise costs expected reward at second order: a drag lr^2 h (sigma_p^2/B + "
        "sigma_c^2/(B G)) / (2 (1 - beta^2)) (SGD), lr^2 h (1-beta1)/(2 (1+beta1)) rho/(1+rho) "
        "(Adam) per step" if fit.layout.units else "no noise drag on the mean path",
        "band: constants' covariance (cluster-robust, one cluster per run), seed-to-seed spread "
        "of the sources, per-step sampling noise r(1-r)(c_B/B + c_BG/(B G)), and the map's "
        "transfer error s d^2 (m(n) - m(0))^2 with s from leave-one-setting-out on the sources "
        "(revision 4; see band_calibration)",
        *system.assumptions]
    constants = fit.constants()
    constants["sampling_noise"] = {"c_B": float(coef[0]), "c_BG": float(coef[1])}
    constants["seed_spread_variance"] = {"value": seed_var}
    return {"steps": list(range(n + 1)), "mean": [float(v) for v in mean],
            "lower": [float(v) for v in np.clip(mean - half, 0.0, 1.0)],
            "upper": [float(v) for v in np.clip(mean + half, 0.0, 1.0)],
            "level": float(level), "constants": constants, "target": hp,
            "system": system.to_dict(), "assumptions": assumptions, "warnings": warnings,
            "band_calibration": calibration}
