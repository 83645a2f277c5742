"""A sustained oscillation of the reward: one cycle that persists over the whole run.

An unstable linear mode whose growth the reward's nonlinearity saturates leaves a limit cycle:
the reward goes up and down with one period and an amplitude that holds (docs/theory.md
sections 5 and 10). The AR(2) of the instability detector reads such a cycle from its
autocovariances at a few lags, which resolve periods of tens of logged points; a cycle of a
hundred points bends them too little, and its poles come out real. This module reads the
cycle itself: the reward less a quadratic trend, its periodogram (a sinusoid's share of it,
fitted by least squares at each frequency, as Lomb and Scargle's) over periods of
:data:`SHORTEST` logged points to a :data:`CYCLES`-th of the span, and at its peak the
least-squares sinusoid fitted jointly with the trend (its frequency refined between the
periodogram's neighbouring frequencies). It counts as a cycle where

- it stands beyond the white noise: ``m * gain / noise^2``, chi-square with 2 degrees of
  freedom under white noise, exceeds its quantile at the false-alarm rate ``ALPHA`` shared
  over the periodogram's independent frequencies;
- it is the fluctuations: the sinusoid carries at least :data:`SHARE` of the variance beyond
  the white noise. Red noise spreads its variance over many periods, a step or a sigmoid puts
  it in the trend's misfit, a damped oscillation in its decay; a sinusoid carries 0.9-1.0;
- it is a peak: the periodogram does not still rise at the longest period read, as a trend's
  misfit makes it do;
- it persists: its amplitude over the second half of the run is at least :data:`HOLD` of the
  first half's, where a stable map's transient oscillation decays;
- it is not within the noise: its amplitude is at least :data:`AMPLITUDE` times the noise's
  s.d. Real runs of a tiny model hold cycles of a third of the noise that stand beyond white
  noise over hundreds of steps (0.33-0.45 of its s.d., periods of 10-101 steps, on 7 of 928
  runs at stable lrs and 2 above them; the logs hold no epoch to tell whether the prompts'
  order makes them); the unstable map's limit cycle is the reward's own swing, and every
  sinusoid of the grid below was 0.73 of the noise or more.

Over fewer than :data:`POINTS` logged points red noise puts its variance in few periods, and
no cycle is read. On AR(1) red noise of poles 0.8-0.99 under white noise these tests call a
cycle in 3 of 800 runs of 150 points and in none of 300 or 500 (damped oscillations: 2 of 20
at 150 points, none beyond), and find every one of 600 sinusoids of 8 points to a third of
the run, 1-3.3 noise s.d. high (studies/diagnosis/slow_oscillations.py).

A cycle over a whole run is not a plateau with noise, a rise or a fall: the state reads the
reward's level net of it. Needs numpy and scipy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from grpodyn.empirical.diagnostics.verdict import ALPHA

__all__ = ["Cycle", "sustained_cycle", "SHORTEST", "CYCLES", "SHARE", "POINTS", "HOLD", "AMPLITUDE"]

#: the shortest period read [logged points]: below it the AR(2) at lags 3-8 resolves the cycle
SHORTEST = 8
#: the least number of whole periods over the run: fewer is a wave, not a cycle that persists
CYCLES = 3
#: the least share of the variance beyond the white noise that the sinusoid carries
SHARE = 0.8
#: the fewest logged points read: over fewer, red noise puts its variance in few periods
POINTS = 150
#: the least ratio of the cycle's amplitude over the second half of the run to the first's
HOLD = 0.5
#: the least amplitude of a cycle, in units of the reward's point-to-point noise s.d.
AMPLITUDE = 0.6


@dataclass(frozen=True)
class Cycle:
    """A sinusoid that carries the reward's fluctuations: period, amplitude, share, fit.

    ``period`` [step], ``amplitude`` [reward] (half the peak-to-peak swing), ``share`` of the
    variance beyond the white noise that it carries, ``cycles`` over the run, and ``wave``:
    the fitted sinusoid at every logged point (zero mean; NaN where the reward is NaN).
    """

    period: float
    amplitude: float
    share: float
    cycles: float
    wave: np.ndarray

    def words(self) -> str:
        """Say the cycle: its period, amplitude, number of cycles and share of the variance."""
        return (f"the reward oscillates with a period of {self.period:.3g} steps and an "
                f"amplitude of {self.amplitude:.3g} over {self.cycles:.3g} cycles (a sinusoid "
                f"carries {min(self.share, 1.0):.0%} of its variance beyond the noise)")


def _trend_basis(t: np.ndarray) -> np.ndarray:
    """Return the constant, linear and quadratic columns on the span scaled to [-1, 1]."""
    x = 2 * (t - t[0]) / (t[-1] - t[0]) - 1
    return np.column_stack([np.ones_like(x), x, x**2])


def _sinusoid_gain(t: np.ndarray, y: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """Return the sum of squares a sinusoid fitted by least squares takes from ``y``, per frequency.

    Lomb's periodogram: at each frequency f, the projection of y onto sin and cos of
    2 pi f (t - tau), where the phase tau makes the two columns orthogonal. Evaluated in blocks
    of frequencies so that the design never holds more than a few million entries.
    """
    out = np.empty(frequencies.size)
    block = max(1, 2_000_000 // t.size)
    for lo in range(0, frequencies.size, block):
        omega = 2 * np.pi * frequencies[lo: lo + block, None]
        tau = np.arctan2(np.sin(2 * omega * t).sum(1), np.cos(2 * omega * t).sum(1))[:, None] / (
            2 * omega)
        c, s = np.cos(omega * (t - tau)), np.sin(omega * (t - tau))
        out[lo: lo + block] = (c @ y) ** 2 / np.sum(c**2, 1) + (s @ y) ** 2 / np.sum(s**2, 1)
    return out


def sustained_cycle(steps: np.ndarray, r: np.ndarray, noise: float) -> Cycle | None:
    """Return the sinusoid that carries the reward's fluctuations, or None where none does.

    Parameters
    ----------
    steps : ndarray
        The logged steps [step].
    r : ndarray
        The reward per logged step [reward].
    noise : float
        Point-to-point noise of the reward [reward] (std of the differences over sqrt 2).

    Returns
    -------
    Cycle or None
        None where the run holds fewer than :data:`POINTS` finite points, the noise is not
        positive, or the best sinusoid fails a test of the module's docstring.
    """
    from scipy.optimize import minimize_scalar

    finite = np.isfinite(r)
    t, y = np.asarray(steps, dtype=float)[finite], np.asarray(r, dtype=float)[finite]
    m = y.size
    if m < POINTS or not noise > 0 or not t[-1] > t[0]:
        return None
    span, spacing = float(t[-1] - t[0]), float(np.median(np.diff(t)))
    trend = _trend_basis(t)
    coef, *_ = np.linalg.lstsq(trend, y, rcond=None)
    rest = y - trend @ coef
    beyond = float(np.mean(rest**2)) - noise**2
    lowest, highest = CYCLES / span, 1.0 / (SHORTEST * spacing)
    if not beyond > 0 or not highest > lowest:
        return None
    independent = max(1, int((highest - lowest) * span))  # Fourier frequencies in the band
    frequencies = np.linspace(lowest, highest, 4 * independent + 1)  # oversampled x4
    at = int(np.argmax(_sinusoid_gain(t, rest, frequencies)))
    if at == 0:  # still rising toward longer periods: the trend's misfit, not a peak
        return None
    # the grid's peak, refined between its neighbours: a period off by a grid step drifts out
    # of phase over many cycles and leaves a beat in the reward net of the cycle
    step = float(frequencies[1] - frequencies[0])
    frequency = float(minimize_scalar(lambda f: _joint_fit(t, y, trend, f)[0], method="bounded",
                                      bounds=(frequencies[at] - step, frequencies[at] + step)).x)
    sse, fitted, design = _joint_fit(t, y, trend, frequency)
    gain = float(np.mean(rest**2) - sse / m)
    # chi-square with 2 degrees of freedom: P(X > x) = exp(-x / 2)
    significant = m * gain / noise**2 > -2 * np.log(ALPHA / independent)
    amplitude = float(np.hypot(*fitted[3:]))
    if not (significant and gain >= SHARE * beyond and amplitude >= AMPLITUDE * noise
            and _holds(t, y, trend, frequency)):
        return None
    wave = np.full(np.shape(r), np.nan)
    wave[finite] = design[:, 3:] @ fitted[3:]
    return Cycle(period=1.0 / frequency, amplitude=amplitude,
                 share=gain / beyond, cycles=span * frequency, wave=wave)


def _joint_fit(t: np.ndarray, y: np.ndarray, trend: np.ndarray, frequency: float
               ) -> tuple[float, np.ndarray, np.ndarray]:
    """Fit the trend and a sinusoid of ``frequency`` jointly: residual squares, fit, design."""
    phase = 2 * np.pi * frequency * t
    design = np.column_stack([trend, np.sin(phase), np.cos(phase)])
    fitted, *_ = np.linalg.lstsq(design, y, rcond=None)
    return float(np.sum((y - design @ fitted) ** 2)), fitted, design


def _holds(t: np.ndarray, y: np.ndarray, trend: np.ndarray, frequency: float) -> bool:
    """Say whether the cycle's amplitude over the second half is :data:`HOLD` of the first's.

    A stable map's transient oscillation decays (a damped oscillation); a limit cycle holds
    its amplitude, and a growing one is not yet saturated.
    """
    half = t.size // 2
    amplitudes = [np.hypot(*_joint_fit(t[part], y[part], trend[part], frequency)[1][3:])
                  for part in (slice(0, half), slice(half, None))]
    return bool(amplitudes[1] >= HOLD * amplitudes[0])
