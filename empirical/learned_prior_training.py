"""Train the learned-prior forecaster on curves drawn from the theory's prior (torch, an extra).

``python -m grpodyn.empirical.learned_prior_training [--curves N] [--seed S] [--out PATH]``
draws N curves from :func:`numerics.learned_prior.sample_prior_curves`, cuts each at a random
fraction F in [0.15, 0.75] of its points, and trains a ReLU perceptron on (summary of the
training part, horizon) -> quantiles of the reward at that horizon in noise units, with the
pinball loss averaged over ``QUANTILE_LEVELS``. No real run enters: the prior is the theory's
(docs/theory.md sections 3 and 6), so every real source stays a fair test. The weights go to
``numerics/learned_prior_weights.npz`` (written atomically), with the prior's seed, the number
of curves and the final validation loss in its ``info``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from grpodyn.ground import InputError
from grpodyn.numerics.learned_prior import (
    QUANTILE_LEVELS,
    WEIGHTS_PATH,
    curve_features,
    sample_prior_curves,
)

__all__ = ["training_set", "train", "main"]


def training_set(seed: int, count: int, *, horizons: int = 16,
                 signal_to_noise: tuple[float, float] | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``count`` prior curves, cut each at a random fraction, return (features, targets).

    Per curve, ``horizons`` future points are drawn at random from the part after the cut;
    their targets are in the noise units of the training part (z = (r - loc) / scale).
    Curves whose training part has fewer than 8 points, or no noise, are skipped.
    ``signal_to_noise``: the prior's hyperprior on range / noise (``sample_prior_curves``;
    None: the theory's prior, that of the shipped weights).
    """
    rng = np.random.default_rng(seed)
    rows, targets = [], []
    for curve in sample_prior_curves(rng, count, signal_to_noise=signal_to_noise):
        n = curve.reward.size
        n_train = int(rng.uniform(0.15, 0.75) * n)
        if n_train < 8 or n - n_train < 3:
            continue
        t = np.arange(1.0, n + 1)
        pick = rng.choice(np.arange(n_train, n), size=min(horizons, n - n_train), replace=False)
        try:
            features, loc, scale = curve_features(t[:n_train], curve.reward[:n_train], t[pick],
                                                  curve.bounds)
        except InputError:
            continue
        rows.append(features)
        targets.append((curve.reward[pick] - loc) / scale)
    return np.vstack(rows), np.concatenate(targets)


def train(features: np.ndarray, targets: np.ndarray, *, hidden: int = 128, epochs: int = 6,
          seed: int = 0, progress: bool = True) -> tuple[dict[str, np.ndarray], float]:
    """Fit the perceptron with the pinball loss; return its arrays and the validation loss.

    The first 5 % of the rows are held out (rows are grouped by curve, so these are the first
    curves' rows; the curve at the boundary may have rows on both sides); the weights kept are
    those of the epoch with the lowest validation loss (noise units).
    """
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(1)
    mean, sd = features.mean(axis=0), features.std(axis=0) + 1e-6
    x = torch.tensor((features - mean) / sd, dtype=torch.float32)
    y = torch.tensor(targets, dtype=torch.float32)
    n_val = x.shape[0] // 20
    x_fit, y_fit, x_val, y_val = x[n_val:], y[n_val:], x[:n_val], y[:n_val]
    levels = torch.tensor(QUANTILE_LEVELS, dtype=torch.float32)
    mid = QUANTILE_LEVELS.index(0.5)
    net = torch.nn.Sequential(
        torch.nn.Linear(x.shape[1], hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, len(QUANTILE_LEVELS)))

    def quantiles(batch: torch.Tensor) -> torch.Tensor:
        out = net(batch)
        steps = torch.nn.functional.softplus(out[:, 1:])
        upper = out[:, :1] + torch.cumsum(steps[:, mid:], dim=1)
        lower = out[:, :1] - torch.flip(torch.cumsum(steps[:, :mid], dim=1), dims=[1])
        return torch.cat([lower, out[:, :1], upper], dim=1)

    def pinball(q: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        error = target[:, None] - q
        return torch.mean(torch.maximum(levels * error, (levels - 1) * error))

    optimiser = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=1e-4)
    batches = int(np.ceil(x_fit.shape[0] / 2048))
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=2e-3,
                                                   total_steps=epochs * batches)
    best, kept = np.inf, None
    for epoch in range(epochs):
        order = torch.randperm(x_fit.shape[0])
        start = time.time()
        for i in range(batches):
            index = order[i * 2048:(i + 1) * 2048]
            loss = pinball(quantiles(x_fit[index]), y_fit[index])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
        with torch.no_grad():
            validation = float(pinball(quantiles(x_val), y_val))
        if validation < best:
            best, kept = validation, {k: v.clone() for k, v in net.state_dict().items()}
        if progress:
            print(f"epoch {epoch + 1}/{epochs}: validation pinball loss {validation:.4f} "
                  f"(noise units), {time.time() - start:.0f} s", file=sys.stderr)
    net.load_state_dict(kept)
    arrays = {"feature_mean": mean, "feature_sd": sd}
    linear = [m for m in net if isinstance(m, torch.nn.Linear)]
    for i, layer in enumerate(linear):
        arrays[f"w_{i}"] = layer.weight.detach().numpy().T.astype(float)
        arrays[f"b_{i}"] = layer.bias.detach().numpy().astype(float)
    return arrays, best


def _mean_and_sd(text: str) -> tuple[float, float]:
    """Parse ``--signal-to-noise MU,SD``: two finite numbers, SD > 0."""
    try:
        mu, sd = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"need MU,SD, got {text!r}") from None
    if not (np.isfinite(mu) and np.isfinite(sd) and sd > 0):
        raise argparse.ArgumentTypeError(f"need finite MU and SD > 0, got {text!r}")
    return mu, sd


def main(argv: list[str] | None = None) -> int:
    """Draw the prior, train, write the weights atomically."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--curves", type=int, default=600000, help="prior curves to draw")
    parser.add_argument("--seed", type=int, default=0, help="seed of the prior's draw")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--out", default=str(WEIGHTS_PATH), help="weights file (.npz)")
    parser.add_argument("--signal-to-noise", type=_mean_and_sd, metavar="MU,SD",
                        help="a log-normal hyperprior on the ratio of the mean path's range to "
                             "the white noise (default: none, the theory's prior)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    if args.curves < 100 or args.epochs < 1:
        parser.error("--curves must be at least 100 and --epochs at least 1")
    if not out.parent.is_dir():
        parser.error(f"--out: the folder {out.parent} does not exist")
    start = time.time()
    features, targets = training_set(args.seed, args.curves,
                                     signal_to_noise=args.signal_to_noise)
    print(f"{targets.size} training rows from {args.curves} prior curves "
          f"({time.time() - start:.0f} s)", file=sys.stderr)
    arrays, validation = train(features, targets, epochs=args.epochs, seed=args.seed)
    info = {"prior_seed": args.seed, "curves": args.curves, "rows": int(targets.size),
            "epochs": args.epochs, "validation_pinball": validation,
            "signal_to_noise": args.signal_to_noise,
            "levels": list(QUANTILE_LEVELS)}
    with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".npz", delete=False) as handle:
        temporary = Path(handle.name)
    try:
        np.savez(temporary, info=json.dumps(info), **arrays)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)  # a temporary file is private; the weights are not
        os.replace(temporary, out)
    finally:
        temporary.unlink(missing_ok=True)
    print(f"wrote {out} ({time.time() - start:.0f} s in all)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
