"""The verdict on one failure mode of GRPO and the constants every detector shares.

A mode gets a score in [0, 1], a flag (score >= :data:`FLAG_SCORE`), evidence in words with
the steps where it shows, or ``judged = False`` with the reason when the log lacks what the
mode needs (docs/theory.md section 10). Needs nothing beyond the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MODES", "ALPHA", "FLAG_SCORE", "CEILING", "NEGLIGIBLE_RISE", "G_BOUND", "REMEDIES",
           "ModeVerdict", "unjudged"]

MODES = ("reward_hacking", "advantage_degeneracy", "policy_concentration",
         "dynamical_instability")
FLAG_SCORE = 0.5
#: false-alarm rate of each test of the state and of the detectors that read the reward's
#: shape (a fall, a rise-then-fall, no change, a cycle), per run
ALPHA = 0.0027
#: a success rate this close to 1 has nothing left to learn: a policy locked there converged
CEILING = 0.97
#: the least change of a success rate that a mode reads from the reward: a smaller rise gives
#: the hacking test no progress to decouple, so over a whole run it is "no mode can be judged
#: from the reward", the diagnosis's definition of not learning
NEGLIGIBLE_RISE = 0.03
#: What to try when a mode is flagged: the knobs that act on its mechanism (docs/theory.md
#: section 10): the coupling of the optimised reward to the true one, the drift factor
#: 1 - p^G - (1-p)^G, the noise temperature p(1-p), the stiffness against its limit
REMEDIES = {
    "reward_hacking": "read samples where the reward rose; tighten the reward or verifier "
                      "(format and length terms are the usual loophole), raise the KL "
                      "coefficient, and keep the checkpoint where the held-out reward peaked",
    "advantage_degeneracy": "raise G (completions per prompt), drop prompts that every "
                            "completion solves or fails (dynamic sampling), or move the "
                            "prompts' difficulty toward the policy's",
    "policy_concentration": "keep the sampling temperature at 1 or above, add an entropy "
                            "bonus or a higher upper clip (clip-higher, 0.28), lower the lr, "
                            "or restart from a checkpoint before the entropy fell",
    "dynamical_instability": "lower the lr (grpodyn advise --log LOG says how far), reuse each "
                             "rollout for fewer epochs (less staleness), keep the ratio clip, "
                             "and restart from a checkpoint near the peak",
}
#: G unknown: the smallest group, the most zero-std groups a pool can leave
G_BOUND = 2


@dataclass(frozen=True)
class ModeVerdict:
    """One failure mode: its score in [0, 1], whether it is flagged, and why."""

    flag: bool
    score: float
    evidence: str
    judged: bool = True
    steps: tuple[float, float] | None = None  # where it shows (first, last step)
    #: the evidence at hand points to the mode, but the log lacks what would confirm or
    #: refute it: the diagnosis abstains (not a flag, not a clean bill)
    undecided: bool = False



def unjudged(reason: str) -> ModeVerdict:
    """Return the verdict of a mode the log cannot judge, with the reason."""
    return ModeVerdict(flag=False, score=0.0, evidence=reason, judged=False)
