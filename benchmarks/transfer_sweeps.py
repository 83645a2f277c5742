"""The sweeps the transfer benchmark scores, and the leave-one-setting-out score of one sweep.

Own sweeps: the tiny TRL grids (``python -m grpodyn.empirical.tinylm.make_grid``), each
setting run with several seeds. Public controlled sweeps (the manifest of the public logs):

- ShibukiZero S4: lr 1e-5 against 4e-5 (G 8, 32 prompts, AdamW), two runs;
- garg-aayush: six learning rates, eval reward (G 8; B not logged, taken as 1: one B G);
- ShibukiZero S1: the off-policy sweep. One rollout of 256 completions (32 prompts x G 8) is
  reused for ``epochs`` passes in micro-batches of ``train_batch`` completions, i.e.
  U = epochs x 256 / train_batch Adam updates of B G = train_batch per logged step. Read in
  the small-step limit as one update per logged step at lr_eff = lr x U with B = train_batch /
  8 prompts and G = 8: a sweep of lr_eff and B G together. The runs that collapse (e8, e16)
  are left out, as a sweep fit leaves out collapsed runs. The reading is the map's assumption
  (U updates add up like one update U times larger), not a property of the trainer, and the
  sweep does not bear it out: its six curves nearly coincide, the tau-lr exponent it measures
  is about +0.4 where the reading expects -1, and the stiffness does not grow with B G at one
  lr_eff (studies/transfer/README.md). It is kept as it is: a benchmark whose reading were
  changed to fit the result would no longer test the transfer.

For each held-out setting: the sweep is fitted on the other settings (same optimizer) and
:func:`grpodyn.empirical.logs.sweep.transfer` predicts it before its data are read. Scores on
the held-out seed-mean curve: R^2 of the transfer and of the setting's own fit (the plain map
fitted to the held-out runs alone) and their ratio; the mean squared error of the transfer and
of the two naive baselines, copying the sources (the mean path of every source setting) and
copying the nearest source setting (log lr, log G, log B; a tie is scored as the share of the
tied copies beaten); the coverage of the 90% band over every held-out point of every run; and
whether any point of the mean lies outside the reward range [0, 1] (a reward logged inside it).

Runs of one seed and one B draw the same prompts at every step, so the nearest copy at the
held-out seeds carries the held-out runs' own prompt draws; the transfer conditions on them too
(:mod:`grpodyn.empirical.logs.sweep_shared`). Two further scores keep the comparison without
them: the transfer's mean less its prompt shift (``mse_transfer_unconditioned``,
``r2_ratio_unconditioned``: the own fit does not condition) against the nearest copy's moving
average (``beats_smoothed_copy_unconditioned``). A setting whose mean
fell back to the nearest source (an undetermined B G exponent, or a law the sources
contradict) is counted as a tie
(``fallback``): the summary gives the share beaten with such settings counted as lost
(``beats_nearest_copy_fraction_fallback_as_loss``) beside the plain share.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from grpodyn.empirical.logs.loaders import load_run
from grpodyn.empirical.logs.sweep import SweepRun, fit_sweep, load_sweep_run, transfer
from grpodyn.empirical.logs.sweep_band import band_window
from grpodyn.empirical.logs.sweep_model import sweep_reward_range
from grpodyn.ground import InputError

#: the public logs beside the checkout (shared/data/real_logs one or two folders up)
PUBLIC = next((p for p in (Path(__file__).resolve().parents[k] / "shared" / "data" / "real_logs"
                           for k in (2, 3)) if p.is_dir()),
              Path(__file__).resolve().parents[2] / "shared" / "data" / "real_logs")
_SHIBUKI = "ShibukiZero__assignment5-alignment__artifacts_experiments_main_ch7_"
_GARG = "garg-aayush__building-from-scratch__grpo_results_lr_sweep_lr_sweep_data.csv"


def _r2(y: np.ndarray, model: np.ndarray) -> float:
    total = float(np.sum((y - y.mean()) ** 2))
    return float(1 - np.sum((y - model) ** 2) / total) if total > 0 else float("nan")


def _seed_mean(runs: list[SweepRun]) -> tuple[np.ndarray, np.ndarray]:
    """Steps logged by every run, and the mean reward over runs at those steps."""
    common = set(runs[0].steps.tolist())
    for run in runs[1:]:
        common &= set(run.steps.tolist())
    steps = np.array(sorted(common))
    return steps, np.mean([np.interp(steps, r.steps, r.reward) for r in runs], axis=0)


def _distance(a: dict, b: dict) -> float:
    keys = ("lr", "group_size", "batch")
    return float(np.sqrt(sum(np.log(a[k] / b[k]) ** 2 for k in keys if a.get(k) and b.get(k))))


def _inside(run: SweepRun, predicted: dict) -> float:
    """Share of a run's points inside a prediction's band."""
    at = run.steps.astype(int)
    return float(np.mean((run.reward >= np.asarray(predicted["lower"])[at])
                         & (run.reward <= np.asarray(predicted["upper"])[at])))


def _kind(target: dict, nearest: dict) -> str:
    """Which hyperparameters the held-out setting changes from its nearest source."""
    changed = [k for k in ("lr", "group_size", "batch") if target.get(k) != nearest.get(k)]
    return "+".join({"group_size": "G", "batch": "B"}.get(k, k) for k in changed) or "same"


def _copies(target: dict, steps: np.ndarray, sources: list[SweepRun]
            ) -> tuple[list[np.ndarray], np.ndarray, dict]:
    """The nearest source settings' seed-mean curves (ties), the sources' mean curve."""
    by_setting: dict[tuple, list[SweepRun]] = {}
    for run in sources:
        by_setting.setdefault(run.setting, []).append(run)
    curves = {}
    for key, runs in by_setting.items():
        s, m = _seed_mean(runs)
        curves[key] = np.interp(steps, s, m)
    distances = {key: _distance(target, runs[0].hparams) for key, runs in by_setting.items()}
    closest = min(distances.values())
    tied = sorted((k for k, v in distances.items() if np.isclose(v, closest)), key=str)
    nearest = by_setting[tied[0]][0].hparams
    return [curves[k] for k in tied], np.mean(list(curves.values()), axis=0), nearest


def range_checked(runs: list[SweepRun]) -> tuple[float, float, str]:
    """Return the range a transfer's mean must stay in, and where it comes from.

    The range the transfer reads (:func:`~grpodyn.empirical.logs.sweep_model.sweep_reward_range`:
    [0, 1] for a rate); for a reward it reads no range for (one the logs show beyond [0, 1],
    such as a verifier plus a format bonus), the span of every reward the sweep's runs logged:
    a mean beyond anything logged is out of range there.
    """
    (low, high), _ = sweep_reward_range(runs)
    if np.isfinite(low) and np.isfinite(high):
        return low, high, "the reward's range"
    logged = np.concatenate([r.reward[np.isfinite(r.reward)] for r in runs])
    return float(logged.min()), float(logged.max()), "the span of the logged rewards"


def score_held_out(runs: list[SweepRun], *, level: float = 0.9,
                   extra: tuple[SweepRun, ...] = (), model: dict | None = None,
                   draws: int = 200) -> list[dict]:
    """Leave-one-setting-out transfer scores of one optimizer's runs (module docstring).

    ``extra``: runs that join the sources of every held-out setting but are never scored.
    ``model``: further keywords of ``fit_sweep`` for the sources' fit; the held-out setting's
    own fit is always the plain map (shared plateau, no drag), one denominator for the ratio.
    """
    settings: dict[tuple, list[SweepRun]] = {}
    for run in runs:
        settings.setdefault(run.setting, []).append(run)
    low, high, _ = range_checked(runs)
    out = []
    refits: dict = {}  # the calibration's refits, shared: X then Y holds out what Y then X does
    for key, held in settings.items():
        sources = [r for r in [*runs, *extra] if r.setting != key and r.hparams["optimizer"]
                   == key[0]]
        if not sources:
            continue
        target = {k: v for k, v in held[0].hparams.items() if k not in ("seed", "steps")}
        steps, mean = _seed_mean(held)
        n = int(max(r.steps[-1] for r in held))
        fit = fit_sweep(sources, **(model or {}))
        predictions = [transfer(sources, {**target, "seed": r.hparams["seed"]}
                                if "seed" in r.hparams else target, steps=n, level=level,
                                fit=fit, draws=draws, refits=refits) for r in held]
        at = steps.astype(int)
        pm = np.mean([np.asarray(p["mean"]) for p in predictions], axis=0)[at]
        try:
            own = fit_sweep(held, noise_drag=False, prompt_noise=False, plateau="shared")
            own_curve = np.mean([own.curve(r.hparams, n) for r in held], axis=0)[at]
        except InputError:  # every held-out run collapsed
            own_curve = np.full(steps.size, np.nan)
        copy_curves, sources_curve, nearest = _copies(target, steps, sources)
        mse_t = float(np.mean((mean - pm) ** 2))
        copies = [float(np.mean((mean - c) ** 2)) for c in copy_curves]
        smoothed = [float(np.mean((mean - _smoothed(c)) ** 2)) for c in copy_curves]
        shifts = [np.asarray(p["shared_prompts"].get("shift", np.zeros(n + 1)))[at]
                  for p in predictions]
        mse_unc = float(np.mean((mean - pm + np.mean(shifts, axis=0)) ** 2))
        fallback = any("fallback" in (e or {})
                       for e in (predictions[0].get("exponents") or {}).values())
        mse_src = float(np.mean((mean - sources_curve) ** 2))
        r2_t, r2_o = _r2(mean, pm), _r2(mean, own_curve)
        means = np.concatenate([np.asarray(p["mean"]) for p in predictions])
        widths = np.concatenate([np.asarray(p["upper"]) - np.asarray(p["lower"])
                                 for p in predictions])
        out.append({"setting": target, "seeds": len(held), "nearest_source": nearest,
                    "kind": _kind(target, nearest), "sources": len(sources),
                    "r2_transfer": r2_t, "r2_own_fit": r2_o,
                    "r2_ratio": r2_t / r2_o if r2_o > 0 else None,
                    "r2_copy_nearest": _r2(mean, copy_curves[0]),
                    "r2_copy_sources": _r2(mean, sources_curve),
                    "mse_transfer": mse_t, "mse_nearest_copy": copies,
                    "mse_copy_sources": mse_src,
                    "beats_nearest_copy": float(np.mean([mse_t < c for c in copies])),
                    "beats_copy_sources": float(mse_t < mse_src),
                    "fallback": fallback,
                    "mse_nearest_copy_smoothed": smoothed,
                    "mse_transfer_unconditioned": mse_unc,
                    "r2_ratio_unconditioned": _r2(mean, pm - np.mean(shifts, axis=0)) / r2_o
                    if r2_o > 0 else None,
                    "beats_smoothed_copy_unconditioned": float(np.mean([mse_unc < c
                                                                        for c in smoothed])),
                    "shared_prompts": {k: predictions[0]["shared_prompts"].get(k)
                                       for k in ("status", "beta")},
                    "coverage": float(np.mean([_inside(r, p) for r, p in
                                               zip(held, predictions, strict=True)])),
                    "mean_outside_range": int(np.sum((means < low) | (means > high))),
                    "range_checked": [low, high],
                    "band_width_median": float(np.median(widths)),
                    "band_is_whole_range_share": float(np.mean(widths >= 0.99)),
                    "steps_first": predictions[0]["steps"][0],
                    "beats_nearest_copy_by_seed_pair": _pair_scores(held, predictions, steps,
                                                                    copy_curves),
                    "exponents": predictions[0].get("exponents"),
                    "warnings": predictions[0]["warnings"],
                    "band_calibration": {k: predictions[0]["band_calibration"].get(k)
                                         for k in ("s", "status", "distance")}})
    return out


def _smoothed(curve: np.ndarray) -> np.ndarray:
    """A copied curve without its per-step prompt draws: its moving average (the band's window)."""
    width = band_window(curve.size)
    kernel = np.ones(width)
    return np.convolve(curve, kernel, mode="same") / np.convolve(np.ones_like(curve), kernel,
                                                                 mode="same")


def _pair_scores(held: list[SweepRun], predictions: list[dict], steps: np.ndarray,
                 copy_curves: list[np.ndarray]) -> dict[str, float]:
    """The copy test on the mean of every pair of held-out seeds (the spread of a 2-seed score).

    The same test as ``beats_nearest_copy`` on the two-seed mean curve at the held-out runs'
    common steps (the share of tied copies beaten), keyed by "seed_a,seed_b".
    """
    out: dict[str, float] = {}
    rewards = [np.interp(steps, r.steps, r.reward) for r in held]
    curves = [np.asarray(p["mean"])[steps.astype(int)] for p in predictions]
    for i in range(len(held)):
        for j in range(i + 1, len(held)):
            pair = (rewards[i] + rewards[j]) / 2
            mse_t = np.mean((pair - (curves[i] + curves[j]) / 2) ** 2)
            key = ",".join(str(held[k].hparams.get("seed", k)) for k in (i, j))
            out[key] = float(np.mean([mse_t < np.mean((pair - c) ** 2) for c in copy_curves]))
    return out


def summary(scores: list[dict]) -> dict:
    """Medians and shares over held-out settings (None where there are none)."""
    if not scores:
        return {"held_out_settings": 0}
    ratios = [s["r2_ratio"] for s in scores if s["r2_ratio"] is not None]
    return {"held_out_settings": len(scores),
            "median_r2_ratio": float(np.median(ratios)) if ratios else None,
            "median_r2_ratio_unconditioned": float(np.median(
                [s["r2_ratio_unconditioned"] for s in scores
                 if s.get("r2_ratio_unconditioned") is not None])) if ratios else None,
            "settings_with_positive_own_r2": len(ratios),
            "beats_copy_sources_fraction": float(np.mean([s["beats_copy_sources"]
                                                          for s in scores])),
            "beats_nearest_copy_fraction": float(np.mean([s["beats_nearest_copy"]
                                                          for s in scores])),
            "fallback_settings": int(sum(s.get("fallback", False) for s in scores)),
            "beats_nearest_copy_fraction_fallback_as_loss": float(np.mean(
                [0.0 if s.get("fallback") else s["beats_nearest_copy"] for s in scores])),
            "beats_smoothed_copy_unconditioned_fraction": float(np.mean(
                [s.get("beats_smoothed_copy_unconditioned", np.nan) for s in scores])),
            "conditioned_on_shared_prompts": int(sum(
                (s.get("shared_prompts") or {}).get("beta") is not None for s in scores)),
            "coverage_90": float(np.mean([s["coverage"] for s in scores])),
            "means_outside_range": int(sum(s["mean_outside_range"] for s in scores)),
            "median_mse_transfer": float(np.median([s["mse_transfer"] for s in scores])),
            "median_mse_copy_sources": float(np.median([s["mse_copy_sources"]
                                                        for s in scores])),
            "median_mse_copy_nearest": float(np.median([min(s["mse_nearest_copy"])
                                                        for s in scores])),
            "median_r2_transfer": float(np.median([s["r2_transfer"] for s in scores])),
            "median_r2_own_fit": float(np.nanmedian([s["r2_own_fit"] for s in scores]))}


def _public_run(path: Path, name: str | None, hparams: dict) -> SweepRun:
    run = load_run(path, run=name) if name else load_run(path)
    keep = np.isfinite(run.reward)
    steps = run.steps[keep]
    return SweepRun(f"{path.name}{':' + name if name else ''}", steps - steps[0],
                    run.reward[keep], {"optimizer": "adam", "momentum": 0.9, **hparams},
                    first_step=float(steps[0]))


def public_sweeps(public: Path = PUBLIC) -> dict[str, list[SweepRun] | str]:
    """The public controlled sweeps that load, by title (a string: why one did not load)."""
    members = {
        "public S4: ShibukiZero lr 1e-5 vs 4e-5 (G 8, B 32, AdamW)": [
            (f"{_SHIBUKI}grpo_baselines_runs_reinforce_with_baseline_metrics.jsonl", None,
             {"lr": 4e-5, "group_size": 8, "batch": 32}),
            (f"{_SHIBUKI}grpo_train_loop_runs_grpo_on_policy_lr1e-5_metrics.jsonl", None,
             {"lr": 1e-5, "group_size": 8, "batch": 32})],
        "public garg-aayush: six lr (eval reward, G 8, B taken as 1)": [
            (_GARG, f"lr_sweep_{tag}", {"lr": float(tag), "group_size": 8, "batch": 1})
            for tag in ("1e-6", "3e-6", "1e-5", "1.5e-5", "3e-5", "1e-4")],
        "public S1: ShibukiZero off-policy, lr_eff = lr x updates, B G = train batch": [
            (f"{_SHIBUKI}grpo_off_policy_sweep_runs_broad_e{e}_tb{tb}_metrics.jsonl", None,
             {"lr": 4e-5 * e * 256 / tb, "group_size": 8, "batch": tb // 8,
              "momentum": 0.9})
            for e, tb in ((2, 32), (2, 64), (2, 128), (2, 256), (4, 128), (4, 256))]}
    out: dict[str, list[SweepRun] | str] = {}
    for title, rows in members.items():
        try:
            runs = [_public_run(public / file, name, hp) for file, name, hp in rows]
            out[title] = [r for r in runs if r.steps.size >= 10]  # a sweep fit needs 10 points
        except (OSError, ValueError) as exc:
            out[title] = f"not loaded: {exc}"
    return out


THIRD_SIM = Path(__file__).resolve().parents[1] / "studies" / "diagnosis_third_sim"


def third_sim_sweep(seed: int) -> list[SweepRun]:
    """One sweep of the third simulator: its healthy settings at ``seed``, one factor at a time.

    ``studies/diagnosis_third_sim/sim.py`` (a softmax policy shared by all prompts, Adam, an
    answer and a length per completion), built without reading the transfer. The settings'
    own Adam lr, G and B, then the lr halved and doubled, G at 4 and 16 (or 8 where the
    settings' G is 16) and the other B of 16 and 32: six runs on the same task and initial
    policy, each written as a TRL log and read back with the loaders' hyperparameters, the
    seed added (the logs do not carry it). One update per batch, 200 logged steps.
    """
    import tempfile

    sys.path.insert(0, str(THIRD_SIM))
    import sim

    base = {**sim.make_config("healthy", np.random.default_rng([seed, 0, 1])), "mu": 1,
            "n_gen": 200}
    other_g = (4, 16) if base["G"] == 8 else (4, 8)
    variants = [{}, {"lr": base["lr"] / 2}, {"lr": base["lr"] * 2},
                *({"G": g} for g in other_g), {"B": 48 - base["B"]}]
    runs = []
    with tempfile.TemporaryDirectory() as folder:
        for i, change in enumerate(variants):
            rows, args, _ = sim.simulate({**base, **change}, [seed, 0, 2])
            path = sim.write_run(Path(folder) / f"s{seed}_{i}", rows, args, "all")
            run = load_sweep_run(path, {"seed": seed})
            tag = "_".join(f"{k}{v:g}" for k, v in change.items()) or "base"
            runs.append(replace(run, name=f"third_sim_s{seed}_{tag}"))
    return runs
