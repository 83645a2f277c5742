"""The deep-network instrument: the curvature measured before training, and the lr_max it predicts.

One route, the one the deep-network study's result stands on (``studies/deepnet/README.md``):
the top Hessian eigenvalue h_max of the GRPO objective, measured by Lanczos on sampled
completions before any GRPO step (:func:`measure_curvature`), sets the largest stable learning
rate of heavy-ball SGD through the Jury limit of the linear map (docs/theory.md section 4):

    lr_max(momentum) = k_max(momentum) / h_max,   k_max = 2 (1 + momentum)

(:func:`predict_lr_max`, computed by :func:`grpodyn.numerics.predict.predict`). With momentum
0.9 this predicted the first unstable learning rate within one grid step at both model sizes of
the study; without momentum the network did not diverge at the predicted limit (it collapses
instead). Each prediction's ``note`` says which. The study's other routes (relaxation times,
lag thresholds, the two-mode map) are its scripts, not part of the package.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from grpodyn.numerics.predict import predict

from .measure import curvature_spectrum

__all__ = ["Curvature", "LrMax", "measure_curvature", "predict_lr_max"]

#: what the study found at the momenta it tested (``studies/deepnet/README.md``)
_STUDY_NOTES = {
    0.0: "without momentum the network did not diverge at this limit in the study: the step "
         "saturates a softmax and the groups collapse instead",
    0.9: "in the study: the first unstable lr within one grid step (a factor 2) at both sizes, "
         "the prediction on the high side",
}
_UNTESTED_NOTE = "a momentum the study did not test"


@dataclass(frozen=True)
class Curvature:
    """The curvature of the GRPO objective measured before training.

    Attributes
    ----------
    top_eigenvalues : tuple of float
        The largest Hessian eigenvalues (Lanczos Ritz values), mean over replicates, in units
        of 1 / lr (the stiffness of a step is lr times the eigenvalue).
    top_eigenvalues_se : tuple of float
        Their standard errors over the replicates.
    top_cross_validated : float
        The top eigenvector's Rayleigh quotient on an independent sample set (unbiased for that
        direction).
    top_cross_validated_se : float
        Its standard error.
    curvature_along_update : float or None
        g.Hg / g.g along the sampled expected update (None when every group was degenerate).
    replicates : int
        Independent sample sets.
    completions_per_replicate : int
        Completions sampled per set (prompts x group size).
    lanczos_iterations : int
        Lanczos steps per replicate.
    """

    top_eigenvalues: tuple[float, ...]
    top_eigenvalues_se: tuple[float, ...]
    top_cross_validated: float
    top_cross_validated_se: float
    curvature_along_update: float | None
    replicates: int
    completions_per_replicate: int
    lanczos_iterations: int

    @property
    def top(self) -> float:
        """The largest eigenvalue h_max (mean over replicates)."""
        return self.top_eigenvalues[0]

    @classmethod
    def from_spectrum(cls, spectrum: dict[str, Any]) -> Curvature:
        """Build from the mapping of :func:`.measure.curvature_spectrum` (or its JSON).

        Parameters
        ----------
        spectrum : dict
            Keys ``top_eigenvalues``, ``top_eigenvalues_se``, ``top_cross_validated``,
            ``top_cross_validated_se``, ``curvature_along_update``, ``replicates``,
            ``completions_per_replicate``, ``lanczos_iterations``.

        Returns
        -------
        Curvature
            The measurement.
        """
        return cls(top_eigenvalues=tuple(float(v) for v in spectrum["top_eigenvalues"]),
                   top_eigenvalues_se=tuple(float(v) for v in spectrum["top_eigenvalues_se"]),
                   top_cross_validated=float(spectrum["top_cross_validated"]),
                   top_cross_validated_se=float(spectrum["top_cross_validated_se"]),
                   curvature_along_update=spectrum.get("curvature_along_update"),
                   replicates=int(spectrum["replicates"]),
                   completions_per_replicate=int(spectrum["completions_per_replicate"]),
                   lanczos_iterations=int(spectrum["lanczos_iterations"]))

    def to_dict(self) -> dict[str, Any]:
        """Return the measurement as plain JSON values."""
        return {**asdict(self), "top_eigenvalues": list(self.top_eigenvalues),
                "top_eigenvalues_se": list(self.top_eigenvalues_se)}


@dataclass(frozen=True)
class LrMax:
    """The largest stable learning rate predicted from the top eigenvalue.

    Attributes
    ----------
    momentum : float
        The heavy-ball momentum.
    lr_max : float
        k_max / h_max (docs/theory.md section 4), in the optimizer's lr units.
    stiffness_max : float
        k_max = 2 (1 + momentum), the Jury limit of the linear map.
    curvature : float
        h_max, the top eigenvalue used.
    note : str
        What the study found at this momentum (or that it did not test it).
    """

    momentum: float
    lr_max: float
    stiffness_max: float
    curvature: float
    note: str

    def to_dict(self) -> dict[str, Any]:
        """Return the prediction as plain JSON values."""
        return asdict(self)


def measure_curvature(model: Any, tokenizer: Any, *, replicates: int = 4, prompts: int = 256,
                      group_size: int = 8, iterations: int = 20, seed: int = 0) -> Curvature:
    """Measure the top Hessian eigenvalues of the GRPO objective before training.

    Parameters
    ----------
    model, tokenizer : object
        A causal language model and its tokenizer (the ``trl`` extra's torch model).
    replicates : int
        Independent sample sets (at least 2, for the standard errors).
    prompts, group_size : int
        Prompts per sample set and completions per prompt.
    iterations : int
        Lanczos steps per set.
    seed : int
        Seed of the sampling and of the Lanczos start vectors.

    Returns
    -------
    Curvature
        The spectrum (:func:`.measure.curvature_spectrum` without its eigenvector).

    Raises
    ------
    ValueError
        When ``replicates`` < 2 or ``prompts``, ``group_size`` or ``iterations`` < 1.
    """
    if replicates < 2:
        raise ValueError(f"replicates: {replicates} < 2 (standard errors need two sets)")
    for name, value in (("prompts", prompts), ("group_size", group_size),
                        ("iterations", iterations)):
        if value < 1:
            raise ValueError(f"{name}: {value} < 1")
    spectrum = curvature_spectrum(model, tokenizer, replicates=replicates, prompts=prompts,
                                  group_size=group_size, iterations=iterations, seed=seed)
    return Curvature.from_spectrum(spectrum)


def predict_lr_max(curvature: Curvature | float, *,
                   momenta: tuple[float, ...] = (0.0, 0.9)) -> list[LrMax]:
    """Predict lr_max of heavy-ball SGD from the top eigenvalue, one value per momentum.

    Parameters
    ----------
    curvature : Curvature or float
        The measurement, or h_max itself (> 0, units 1 / lr).
    momenta : tuple of float
        Momenta in [0, 1).

    Returns
    -------
    list of LrMax
        lr_max = k_max(momentum) / h_max with k_max = 2 (1 + momentum).

    Raises
    ------
    ValueError
        When h_max is not positive and finite, or a momentum is outside [0, 1).
    """
    h_max = curvature.top if isinstance(curvature, Curvature) else float(curvature)
    if not 0 < h_max < float("inf"):
        raise ValueError(f"curvature: top eigenvalue {h_max!r} is not positive and finite")
    limits = []
    for momentum in momenta:
        if not 0 <= momentum < 1:
            raise ValueError(f"momenta: {momentum!r} is outside [0, 1)")
        k_max = float(predict(lr=1.0, momentum=momentum, kappa=h_max).stiffness_max)
        limits.append(LrMax(momentum=float(momentum), lr_max=k_max / h_max,
                            stiffness_max=k_max, curvature=h_max,
                            note=_STUDY_NOTES.get(float(momentum), _UNTESTED_NOTE)))
    return limits
