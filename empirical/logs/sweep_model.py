"""The joint model of a sweep: which constant is which, and the mean paths of many runs at once.

Every run follows the mean-field map of its own hyperparameters (see :mod:`.sweep`); the
shared constants are laid out by :class:`Layout` and the model curves of all runs computed in
one vectorised pass by :class:`Evaluator`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from grpodyn.empirical.logs.loaders import Run
from grpodyn.empirical.logs.run_settings import infer_reward_range
from grpodyn.empirical.logs.sweep_runs import SweepRun
from grpodyn.ground import InputError
from grpodyn.numerics.compiled import compiled
from grpodyn.numerics.mean_field_map import (
    MeanFieldMap,
    drift_factor_of,
    iterate_map,
    lr_schedule,
)

_LOG_RHO = (np.log(1e-2), np.log(1e5))
_LOG_DRAG = (np.log(1e-5), np.log(1e3))  # drags relative to 1e-3 reward units/step
PLATEAUS = ("shared", "per_seed")


@dataclass(frozen=True)
class Layout:
    """Which parameter is which, for the optimizers present."""

    names: tuple[str, ...]
    optimizers: tuple[str, ...]
    fit_rho: bool
    bg_ref: float = 1.0  # B G at which Adam's curvature is parametrised (geometric mean)
    starts: tuple[int, ...] = ()  # seeds with their own r0 (empty: one r0 for every run)
    finite_group: bool = True  # the drift factor 1 - p^G - (1-p)^G on the force
    reward_range: tuple[float, float] = (0.0, 1.0)  # where r0 and r* may lie ((-inf, inf): any)
    b_ref: float = 1.0  # B at which Adam's curvature is parametrised (geometric mean)
    units: tuple[tuple[str, float], ...] = ()  # physical value of exp(parameter) = 1
    plateau: str = "shared"  # "per_seed": an r* per optimizer and seed
    reward_unit: float = 1.0  # the reward's scale: its range's width, or the runs' span
    range_source: str = ""  # where reward_range comes from (declared, inferred, unknown)

    @property
    def bounded(self) -> bool:
        """Tell whether the reward has a known (finite) range."""
        return all(math.isfinite(edge) for edge in self.reward_range)

    @property
    def floor(self) -> float | None:
        """The lowest reward the range allows, None where the range is not known.

        A run that sits there after starting above it collapsed, whatever its noise says
        (``sweep_advice.fall_limit``).
        """
        return float(self.reward_range[0]) if self.bounded else None

    def share(self, reward: Any) -> Any:
        """Return the reward as a share of its known range (the reward itself without one)."""
        low, high = self.reward_range
        return (reward - low) / (high - low) if self.bounded else reward

    def index(self, name: str) -> int:
        """Position of the parameter ``name`` in the fit's vector."""
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


def sweep_reward_range(runs: list[SweepRun]) -> tuple[tuple[float, float], str]:
    """Return where r0 and the plateau may lie, and where that range comes from.

    The range the single-run analyses use (:func:`~.run_settings.infer_reward_range`): the
    declared one (every run's, which must agree), else [0, 1] where every run's reward is
    inferred to be a rate or an accuracy, else none: (-inf, inf), an unbounded reward (a summed
    or shaped one, whose scale the runs do not bound). A logged reward outside a known range is
    refused: the fit would hold r0 or the plateau away from the data.
    """
    declared = {r.declared_range for r in runs} - {None}
    if len(declared) > 1:
        raise InputError("reward range: the runs declare "
                         f"{', '.join(str(list(d)) for d in sorted(declared))}; the runs of a "
                         "sweep share one reward: declare one range")
    found = [(r, *infer_reward_range(Run(source=r.name, format="sweep", steps=r.steps,
                                         reward=r.reward, metrics={}, reward_key=r.reward_key),
                                     next(iter(declared), None))) for r in runs]
    if any(bounds is None for _, bounds, _ in found):
        return (-np.inf, np.inf), next(source for _, bounds, source in found if bounds is None)
    _, bounds, source = found[0]
    for other, _, why in found:
        if not np.all((other.reward >= bounds[0]) & (other.reward <= bounds[1])):
            raise InputError(f"{other.name}: reward range {list(bounds)} ({why}), yet its "
                             f"logged rewards run from {np.min(other.reward):.4g} to "
                             f"{np.max(other.reward):.4g}; declare reward_range= (--reward-range)")
    return bounds, source


def _geometric_mean(values: list[float]) -> float:
    return float(np.exp(np.mean(np.log(values))))


def make_layout(runs: list[SweepRun], *, finite_group: bool = True, noise_drag: bool = False,
                prompt_noise: bool = False, plateau: str = "shared") -> Layout:
    """Lay out the parameter vector of a joint fit of ``runs``: shared and per-run constants.

    The reward's range is :func:`sweep_reward_range`'s; the finite-G factor 1 - p^G - (1-p)^G
    needs the reward as a share of a known range (a success rate), and is left out without one.
    The drag constants are in units of the reward's scale (:attr:`Layout.reward_unit`).
    """
    reward_range, range_source = sweep_reward_range(runs)
    low, high = reward_range
    span = max(float(np.max(r.reward)) for r in runs) - min(float(np.min(r.reward)) for r in runs)
    unit = high - low if np.isfinite(high - low) else (span or 1.0)
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
        if noise_drag and split:  # h sigma^2: the part gives 1e-3 reward units/step at the ref
            drag = 2 * (1 - beta**2) * b * 1e-3 * unit / lr**2
            names += ["log_drag_prompt_sgd", "log_drag_completion_sgd"]
            units += [("log_drag_prompt_sgd", drag), ("log_drag_completion_sgd", drag * g)]
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
                              2 * (1 + beta) / (1 - beta) * 1e-3 * unit / lr**2))
    return Layout(tuple(names), optimizers, fit_rho, bg_ref, starts,
                  finite_group and bool(np.isfinite(high - low)), reward_range, b_ref,
                  tuple(units), plateau, unit, range_source)


def _noise_constants(theta: np.ndarray, layout: Layout, optimizer: str) -> dict[str, Any]:
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


def kappa_a(theta: np.ndarray, layout: Layout) -> float:
    """kappa_A from the fitted reference curvature and rho_A."""
    reference = np.exp(theta[layout.index("log_kappa_A_ref")])
    if not layout.fit_rho:
        return float(reference)
    return float(reference * np.sqrt(1 + layout.physical(theta, "log_rho_A") / layout.bg_ref
                                     + layout.physical(theta, "log_rho_p") / layout.b_ref))


def model_system(h: dict[str, Any], theta: np.ndarray, layout: Layout) -> MeanFieldMap:
    """Build the mean-field map of the hyperparameters ``h`` at the fitted vector ``theta``."""
    kappa = np.exp(theta[layout.index("log_kappa")]) if h["optimizer"] == "sgd" else \
        kappa_a(theta, layout)
    return MeanFieldMap(lr=h["lr"], kappa=float(kappa), optimizer=h["optimizer"],
                        momentum=h["momentum"], **_noise_constants(theta, layout, h["optimizer"]),
                        group_size=h.get("group_size"),
                        batch=h.get("batch"), kl=h.get("kl", 0.0) or 0.0,
                        num_iterations=h.get("num_iterations", 1) or 1,
                        schedule=h.get("schedule", "constant"), warmup=h.get("warmup", 0) or 0,
                        finite_group=layout.finite_group and (h.get("group_size") or 0) >= 2)


class Evaluator:
    """Model curves of many runs at once.

    One vectorised pass of the map per (optimizer, momentum) group, the schedules' lr profiles
    computed once.
    """

    def __init__(self, hparams: list[dict[str, Any]], steps: list[np.ndarray],
                 layout: Layout) -> None:
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
                    h["lr"], h["momentum"], kappa_a(theta, layout),
                    noise["prompt_noise_ratio"] or 0.0, noise["noise_ratio"], h["batch"],
                    h["group_size"])
            else:
                k[i] = compiled("adam_stiffness_signal_limit")(
                    h["lr"], h["momentum"], kappa_a(theta, layout))
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
        if not self._finite_group(index, optimizer):
            return None
        noise = _noise_constants(theta, self.layout, optimizer)
        return self._factor(index, optimizer, star, noise.get("noise_ratio"),
                            noise.get("prompt_noise_ratio"))

    def _finite_group(self, index: list[int], optimizer: str) -> bool:
        """Whether the finite-G factor acts on any of the runs ``index``."""
        if not self.layout.finite_group or not (self.group_size[index] >= 2).any():
            return False
        return optimizer != "adam" or self.layout.fit_rho  # signal-dominated Adam: no factor

    def _factor(self, index: list[int], optimizer: str, star: np.ndarray,
                noise_ratio: Any, prompt_noise_ratio: Any) -> Any:
        """Return f(e) of the runs ``index`` (one per row of e, or the draws of one run).

        ``star`` and Adam's ratios are scalars or one value per row; a run without a known G
        (under 2) keeps the factor 1.
        """
        g, b = self.group_size[index], self.batch[index]
        known = g >= 2
        g_safe, b_safe = np.where(known, g, 2.0), np.where(known, b, 1.0)

        drift = drift_factor_of(optimizer=optimizer, group_size=g_safe, batch=b_safe,
                                noise_ratio=noise_ratio, prompt_noise_ratio=prompt_noise_ratio)

        def factor(e: np.ndarray) -> np.ndarray:
            return np.where(known, drift(self.layout.share(star + e)), 1.0)

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

    def draw_curves(self, thetas: np.ndarray, factors: np.ndarray) -> np.ndarray:
        """Return the one run's model reward at its steps, at many draws of the constants.

        The draws are the rows of ``thetas``, each with its factor on k (``factors``); one
        vectorised pass of the map replaces a pass per draw, the same floats as
        :meth:`curves` called draw by draw. Shape (draws, steps).
        """
        if len(self.hparams) != 1:
            raise ValueError("draw_curves evaluates the draws of one run")
        (optimizer, beta), = self.groups
        adam = optimizer == "adam"
        k = np.array([self.stiffness(t)[0] for t in thetas]) * np.asarray(factors, dtype=float)
        r0 = np.array([self.starts(t)[0] for t in thetas])
        star = np.array([self.plateaus(t)[0] for t in thetas])
        drags = [self.drags(t) for t in thetas]
        drag = None if all(d is None for d in drags) else np.vstack(
            [np.zeros_like(self.profiles) if d is None else d for d in drags])
        scale = k[:, None] * self.profiles / ((1.0 - beta) if adam else 1.0)
        e = iterate_map(momentum=beta, scale=scale, e0=r0 - star, steps=self.length,
                        weight=(1.0 - beta) if adam else 1.0, bias_correction=adam,
                        force_factor=self._draws_drift(thetas, optimizer, star), drag=drag)
        return star[:, None] + e[:, self.steps[0].astype(int)]

    def _draws_drift(self, thetas: np.ndarray, optimizer: str, star: np.ndarray) -> Any:
        """:meth:`_drift` of the one run at every draw: f(e) for e of shape (draws,)."""
        if not self._finite_group([0], optimizer):
            return None
        noises = [_noise_constants(t, self.layout, optimizer) for t in thetas]
        ratio = None if noises[0].get("noise_ratio") is None else \
            np.array([n["noise_ratio"] for n in noises])
        prompt = None if not noises[0].get("prompt_noise_ratio") else \
            np.array([n["prompt_noise_ratio"] for n in noises])
        return self._factor([0], optimizer, star, ratio, prompt)

    def curves(self, theta: np.ndarray, factors: np.ndarray | None = None) -> list[np.ndarray]:
        """Return the model reward of every run at its logged steps."""
        e = self.paths(theta, factors)
        star = self.plateaus(theta)
        return [star[i] + e[i, s.astype(int)] for i, s in enumerate(self.steps)]


def make_evaluator(runs: list[SweepRun], layout: Layout) -> Evaluator:
    """Make an evaluator of the model's reward curves for ``runs`` (their settings and steps)."""
    return Evaluator([r.hparams for r in runs], [r.steps for r in runs], layout)


def model_curve(run: SweepRun, theta: np.ndarray, layout: Layout) -> np.ndarray:
    """Evaluate the model's reward curve of ``run`` at the fitted vector ``theta``."""
    return make_evaluator([run], layout).curves(theta)[0]


def start_point(runs: list[SweepRun], layout: Layout) -> list[np.ndarray]:
    """Return starting vectors of the joint fit, from the runs' early and late rewards."""
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
        for name, _ in layout.units:  # a drag of 2e-4 reward units/step at the reference
            theta[layout.index(name)] = np.log(0.2)
        starts.append(theta)
    return starts


def model_bounds(layout: Layout) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds of every parameter of ``layout``."""
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

