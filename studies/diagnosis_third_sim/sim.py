"""A third, independent GRPO simulator for scoring grpodyn's failure diagnosis.

The policy is a small softmax model whose parameters every prompt shares, not a table per prompt
and not a two-arm bandit:

* a population of prompts; prompt ``i`` has ``K`` = 6 candidate answers, each with a feature
  vector ``phi[i, k]`` in R^12 (dimension 0: a surface cue; dimension 1: a "format" feature
  independent of correctness; dimensions 2..11: semantic features), and prompt features
  ``x[i]`` in R^4 that partly predict how many reasoning tokens ``d[i]`` the prompt needs;
* the correct answer is ``c[i] = argmax_k (w* . phi[i, k] + sigma_eta * eta[i, k])``: a hidden
  teacher ``w*`` the features can express plus a part ``eta`` they cannot (a ceiling); the
  ``policy_concentration`` family uses a shortcut task instead (``Split``);
* a completion is two decisions, each a "token" with its own importance ratio: an answer
  ``k ~ softmax((theta . phi[i, k] + u . tanh(W phi[i, k])) / T)`` (a linear part and a hidden
  layer of 8 units) and a length level ``j`` (15 levels, 32 ... 4096 tokens) from a discretised
  log-normal whose mean ``m + vx . x[i]`` and log-sd are learnt, sharpened by the same T; the
  realised length is jittered around the level (7-point Gauss-Hermite, so that every
  expectation is an exact finite sum);
* the answer is correct only if it is ``c[i]``, the completion reached ``d[i]`` tokens, and it
  was not truncated at ``max_completion_length``;
* GRPO: B prompts per step dealt in epochs from 1024 training prompts, G completions each,
  group-normalised advantages (std with ddof 1, + 1e-4), the PPO-clipped surrogate per token
  with the k3 KL penalty (beta) to the reference (the initial policy), gradient-norm clipping at
  1, Adam, ``num_iterations`` updates per generated batch (staleness), sampling temperature T;
* the optimised reward is the verifier (``acc``), verifier + 0.2 x format (``acc_format``), or a
  learned reward model that likes the format feature and long completions as well as
  correctness, used as a score (``rm``) or as a binary judge (``judge``, accepting with the
  score's probability); a truncated completion still looks long and well formatted to it;
* a held-out set of 128 prompts from the same distribution is scored by the gold verifier every
  ``eval_steps`` steps (``eval_reward``, 4 samples per prompt).

Every step also records the exact state (no sampling noise): the expected true success on the
train and held-out sets, the expected optimised reward, the expected share of groups whose G
rewards are all equal, the answer and length entropies, the exact KL to the reference, the
exact KL between consecutive policies (how far one step moved it), and the share of prompts the
model class can solve (a supervised oracle of the same class solves them) on which the policy
puts more than 0.9 on a wrong answer. ``label_of(state)`` gives each run one ground-truth label
from that state.

Usage (development; never diagnoses anything):
    python studies/diagnosis_third_sim/sim.py --seeds 0-9 --out /tmp/dev [--plot]
"""
from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

K = 6                     # candidate answers per prompt
D = 12                    # answer features: 0 surface heuristic, 1 format, 2.. semantic
P = 4                     # prompt features for the length head
H = 8                     # hidden units of the answer head
LEVELS = 32.0 * 2.0 ** (np.arange(15) / 2.0)   # length levels, 32 ... 4096 tokens
LOGLEV = np.log(LEVELS)
J = len(LEVELS)
_GH_X, _GH_W = np.polynomial.hermite_e.hermegauss(7)
GH_X, GH_W = _GH_X, _GH_W / _GH_W.sum()
Q = len(GH_X)
JITTER = 0.15             # log-sd of a completion's length around its level
N_TRAIN, N_HELD = 1024, 128
N_EVAL_SAMPLES = 4        # completions per held-out prompt at each evaluation

#: logged learning rate = the simulator's Adam step (in its parameter units) x LR_SCALE, a unit
#: change only, so that the logs carry LLM-like learning rates (1e-6 for a healthy run)
LR_SCALE = 5e-5

FAMILIES = ("healthy", "not_learning", "reward_hacking", "advantage_degeneracy",
            "policy_concentration", "dynamical_instability")
LABELS = FAMILIES
KEYSETS = ("all", "no_entropy", "no_zero_std", "reward_eval")
PROXY_KINDS = ("acc_format", "rm", "judge")


# ----------------------------------------------------------------------------- configurations

def _loguniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    """Draw a value log-uniformly in [lo, hi], for scale settings such as learning rates."""
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def make_config(family: str, rng: np.random.Generator) -> dict:
    """Draw the settings of one run of ``family`` (each family has its own mechanism)."""
    c = dict(
        family=family, variant="base",
        n_gen=int(rng.integers(150, 401)),          # generation steps (logged rows)
        T=1.0, G=int(rng.choice([8, 16])), B=int(rng.choice([16, 32])),
        lr=_loguniform(rng, 0.01, 0.04), beta=float(rng.choice([0.0, 0.01, 0.04])),
        mu=1, eps=0.2, cap=int(rng.choice([1024, 2048])), reward="acc",
        schedule=str(rng.choice(["constant", "linear"])), warmup=int(rng.choice([0, 10])),
        eval_steps=int(rng.choice([5, 10, 20])),
        # task
        expressible=True, w_s=1.0, w_sem=2.0, sigma_eta=0.6, s_scale=1.0,
        decoy_frac=0.0, margin_a=0.5, margin_b=0.5, marker=1.5,
        d_med=200.0, d_x=0.5, d_noise=0.3,
        # initial (= reference) policy
        init_sem=0.8, init_s=0.3, init_noise=0.3, init_len=192.0, len_width=0.7,
        # reward model (rm / judge)
        rm_c=1.0, rm_f=0.0, rm_l=0.0, rm_b=0.0,
    )
    if family == "healthy":
        c["variant"] = str(rng.choice(["acc", "acc", "acc_format"]))
        c["reward"] = c["variant"]
        c["mu"] = int(rng.choice([1, 1, 2]))
        c["init_sem"] = float(rng.uniform(0.4, 1.2))
    elif family == "not_learning":
        c["variant"] = str(rng.choice(["tiny_lr", "inexpressible"]))
        if c["variant"] == "tiny_lr":
            c["lr"] = _loguniform(rng, 3e-5, 1.5e-4)
        else:
            c["expressible"] = False
            c["lr"] = _loguniform(rng, 0.003, 0.01)
            c["init_sem"] = 0.3
            c["init_len"], c["len_width"], c["cap"] = 700.0, 0.4, 2048
            # (the length prior already reaches: only the answer is at stake)
    elif family == "reward_hacking":
        c["variant"] = str(rng.choice(["format", "length", "format_length"]))
        c["reward"] = str(rng.choice(["rm", "judge"]))
        c["lr"] = _loguniform(rng, 0.02, 0.05)
        c["rm_c"] = 0.6
        c["rm_f"] = 1.5 if "format" in c["variant"] else 0.2
        c["rm_l"] = 1.5 if "length" in c["variant"] else 0.1
        c["rm_b"] = -1.0
        if "length" in c["variant"]:
            c["cap"] = 1024
    elif family == "advantage_degeneracy":
        c["variant"] = str(rng.choice(["too_hard", "too_easy"]))
        c["G"] = int(rng.choice([2, 4]))
        c["lr"] = _loguniform(rng, 0.01, 0.03)
        if c["variant"] == "too_hard":  # prompts need far longer reasoning than the prior gives
            c["d_med"] = float(rng.uniform(700.0, 1000.0))
            c["cap"] = 2048
            c["init_len"] = 100.0
            c["len_width"] = 0.5
            c["init_sem"] = float(rng.uniform(-0.3, 0.0))
            c["init_s"] = 0.0
            c["lr"] = _loguniform(rng, 0.005, 0.02)
        else:  # the prior already solves almost everything
            c["d_med"] = 60.0
            c["sigma_eta"] = 0.15
            c["init_sem"] = 5.0
            c["init_s"] = 1.0
            c["init_len"] = 400.0
    elif family == "policy_concentration":
        # a shortcut task (a salient cue, a low-salience marker of decoys), sampled cold
        c["variant"] = "shortcut_cold"
        c["decoy_frac"] = 0.3
        c["s_scale"], c["margin_a"], c["margin_b"], c["marker"] = 3.0, 0.5, 1.0, 0.7
        c["w_s"], c["w_sem"] = 0.0, 2.0
        c["init_s"], c["init_sem"] = 0.3, 0.2
        c["T"] = float(rng.uniform(0.3, 0.4))
        c["G"] = int(rng.choice([4, 6, 8]))
        c["beta"] = 0.0
        c["lr"] = _loguniform(rng, 0.03, 0.05)
    elif family == "dynamical_instability":
        c["variant"] = str(rng.choice(["high_lr", "stale"]))
        if c["variant"] == "high_lr":
            c["lr"] = _loguniform(rng, 0.2, 1.0)
        else:  # stale: many updates on each batch, the clip off on half of them
            c["lr"] = _loguniform(rng, 0.05, 0.12)
            c["mu"] = int(rng.choice([4, 8]))
            c["eps"] = float(rng.choice([0.2, 10.0]))
            c["beta"] = float(rng.choice([0.0, 0.01]))
    else:
        raise ValueError(family)
    return c


# ----------------------------------------------------------------------------- the task

class Split:
    """One prompt set (train or held-out) with its fixed tables."""

    def __init__(self, n: int, cfg: dict, w_star: np.ndarray, a_len: np.ndarray,
                 rng: np.random.Generator) -> None:
        self.n = n
        self.phi = rng.standard_normal((n, K, D))
        self.phi[..., 0] *= cfg["s_scale"]       # the surface cue's salience (its feature scale)
        self.x = rng.standard_normal((n, P))
        eta = rng.standard_normal((n, K))
        if cfg["expressible"]:
            self.c = np.argmax(self.phi @ w_star + cfg["sigma_eta"] * eta, axis=1)
        else:
            self.c = np.argmax(eta, axis=1)  # nothing the features carry decides the answer
        self.decoy = np.zeros(n, bool)
        if cfg["decoy_frac"] > 0:
            # a shortcut task: the surface cue (dimension 0) marks the answer, except on a share
            # of prompts where a wrong candidate (a decoy) carries an even higher cue; the decoy
            # is recognisable by a marker on dimension 2, so the class can solve every prompt
            # (cue up, marker down), but the marker only pays off on the decoy prompts
            ar = np.arange(n)
            cue = self.phi[..., 0]
            self.c = cue.argmax(1)
            cue[ar, self.c] += cfg["margin_a"] * cfg["s_scale"]
            self.decoy = rng.random(n) < cfg["decoy_frac"]
            wrong = (self.c + rng.integers(1, K, n)) % K
            d_idx = ar[self.decoy]
            cue[d_idx, wrong[d_idx]] = cue[d_idx, self.c[d_idx]] + cfg["margin_b"] * cfg["s_scale"]
            self.phi[d_idx, wrong[d_idx], 2] += cfg["marker"]
        logd = (math.log(cfg["d_med"]) + cfg["d_x"] * (self.x @ a_len)
                + cfg["d_noise"] * rng.standard_normal(n))
        self.d = np.exp(logd)
        tokens = LEVELS[:, None] * np.exp(JITTER * GH_X[None, :])          # (J, Q)
        self.trunc = tokens > cfg["cap"]                                     # (J, Q)
        self.logged_tokens = np.minimum(tokens, cfg["cap"])                  # (J, Q)
        ok = (tokens[None] >= self.d[:, None, None]) & ~self.trunc[None]     # (n, J, Q)
        self.ok = ok
        self.reach = (ok * GH_W).sum(-1)                                     # (n, J)
        self.fmt = self.phi[..., 1] > 0                                      # (n, K)
        self.best_reach = self.reach.max(1)
        self.solvable = np.zeros(n, bool)   # set by the oracle (set_oracle)
        self.ceiling_i = np.zeros(n)
        self.ceiling = 0.0
        # reward model score, expected over the length jitter, for every (prompt, answer, level)
        if cfg["reward"] in ("rm", "judge"):
            L = np.log(self.logged_tokens / 256.0)                           # (J, Q)
            base = ((cfg["rm_f"] * self.phi[..., 1])[:, :, None, None]
                    + cfg["rm_l"] * L + cfg["rm_b"])
            s = np.broadcast_to(base, (n, K, J, Q)).copy()
            s[np.arange(n), self.c] += cfg["rm_c"] * ok
            self.rm_s = s                                                    # (n, K, J, Q)
            self.rm_sig = (_sigmoid(s) * GH_W).sum(-1)                       # (n, K, J)


    def set_oracle(self, correct: np.ndarray) -> None:
        """Set the solvable prompts and the ceiling from the supervised oracle.

        ``correct`` (n,) says where the oracle's greedy answer is right; those prompts bound what
        the model class can reach.
        """
        self.solvable = correct & (self.best_reach > 0.5)
        self.ceiling_i = correct * self.best_reach
        self.ceiling = float(self.ceiling_i.mean())


def oracle_fit(train: Split, held: Split, w_star: np.ndarray, rng: np.random.Generator,
               steps: int = 300, lr: float = 0.05) -> None:
    """Fit the answer head of the same model class by supervised cross-entropy.

    It learns the train set's correct answers (full information, no exploration needed); its
    greedy argmax on each prompt defines which prompts the class can solve (the ceiling).
    """
    v = np.zeros(Policy.n_params)
    p = Policy.split(v)
    p["theta"][:] = w_star
    p["W"][:] = rng.standard_normal((H, D)) / math.sqrt(D)
    m = np.zeros_like(v)
    s2 = np.zeros_like(v)
    onehot = np.eye(K)[train.c]
    for t in range(1, steps + 1):
        zA, _, h, dev = Policy.logits(v, train.phi, train.x, 1.0, with_hidden=True)
        dZ = (_softmax(zA) - onehot) / train.n
        g = Policy.grad(v, train.phi, train.x, h, dev, dZ, np.zeros((train.n, J)))
        m = 0.9 * m + 0.1 * g
        s2 = 0.999 * s2 + 0.001 * g ** 2
        v = v - lr * (m / (1 - 0.9 ** t)) / (np.sqrt(s2 / (1 - 0.999 ** t)) + 1e-8)
    for split in (train, held):
        zA, _ = Policy.logits(v, split.phi, split.x, 1.0)
        split.set_oracle(zA.argmax(1) == split.c)


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """Return the logistic function of ``z``, elementwise."""
    return 1.0 / (1.0 + np.exp(-z))


def _softmax(z: np.ndarray) -> np.ndarray:
    """Return the softmax over the last axis, shifted by the max for stability."""
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def _log_softmax(z: np.ndarray) -> np.ndarray:
    """Return the log-softmax over the last axis, shifted by the max for stability."""
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


class Policy:
    """The policy shared by all prompts: an answer head and a length head.

    Answer logits theta . phi + u . tanh(W phi) (a linear part and a small hidden layer of H
    units, shared by all prompts). Length: a discretised log-normal over the levels, its mean
    m + vx . x[i] and its log-sd ls shared by all prompts. One flat vector for Adam.
    """

    sizes = (("theta", (D,)), ("W", (H, D)), ("u", (H,)), ("m", (1,)), ("vx", (P,)),
             ("ls", (1,)))
    n_params = sum(int(np.prod(s)) for _, s in sizes)

    @staticmethod
    def split(v: np.ndarray) -> dict[str, np.ndarray]:
        """Return the named parameters as views of the flat vector ``v`` (writes reach ``v``)."""
        out, i = {}, 0
        for name, shape in Policy.sizes:
            n = int(np.prod(shape))
            out[name] = v[i:i + n].reshape(shape)
            i += n
        return out

    @staticmethod
    def logits(v: np.ndarray, phi: np.ndarray, x: np.ndarray, T: float,
               with_hidden: bool = False) -> tuple[np.ndarray, ...]:
        """Return the answer logits (..., K) and the length logits (..., J), divided by ``T``.

        With ``with_hidden``, also the hidden activations and the levels' deviations from the
        length mean, which ``grad`` needs.
        """
        p = Policy.split(v)
        h = np.tanh(phi @ p["W"].T)                              # (..., K, H)
        zA = (phi @ p["theta"] + h @ p["u"]) / T
        mean = p["m"][0] + x @ p["vx"]                           # (...,)
        dev = LOGLEV - mean[..., None]                           # (..., J)
        zL = -0.5 * dev ** 2 * np.exp(-2 * p["ls"][0]) / T
        return (zA, zL, h, dev) if with_hidden else (zA, zL)

    @staticmethod
    def grad(v: np.ndarray, phi: np.ndarray, x: np.ndarray, h: np.ndarray, dev: np.ndarray,
             dZ: np.ndarray, dY: np.ndarray) -> np.ndarray:
        """Gradient from dLoss/dzA (dZ, (B, K)) and dLoss/dzL (dY, (B, J)), already / T."""
        p = Policy.split(v)
        g_theta = np.einsum("bk,bkd->d", dZ, phi)
        g_u = np.einsum("bk,bkh->h", dZ, h)
        g_W = np.einsum("bkh,bkd->hd", dZ[..., None] * (1 - h ** 2) * p["u"], phi)
        inv = np.exp(-2 * p["ls"][0])
        g_mean = (dY * dev).sum(1) * inv                         # d zL / d mean = dev / s^2
        g_m = g_mean.sum()
        g_vx = g_mean @ x
        g_ls = (dY * dev ** 2).sum() * inv                       # d zL / d ls = dev^2 / s^2
        return np.concatenate([g_theta, g_W.ravel(), g_u, [g_m], g_vx, [g_ls]])


def _k3(d: np.ndarray) -> np.ndarray:
    """Schulman's k3 estimator of KL(pi || ref) per token, d = log ref - log pi."""
    return np.exp(d) - d - 1


def _entropy(logp: np.ndarray) -> np.ndarray:
    """Return the entropy over the last axis of a distribution given by its log-probabilities."""
    return -(np.exp(logp) * logp).sum(-1)


# ----------------------------------------------------------------------------- exact state

def exact_state(v: np.ndarray, v_ref: np.ndarray, split: Split, cfg: dict,
                want_reward: bool = True) -> dict[str, np.ndarray]:
    """Per-prompt exact quantities of the policy ``v`` on ``split``."""
    zA, zL = Policy.logits(v, split.phi, split.x, cfg["T"])
    lA, lL = _log_softmax(zA), _log_softmax(zL)
    pA, pL = np.exp(lA), np.exp(lL)
    n = split.n
    p_c = pA[np.arange(n), split.c]
    succ = p_c * (pL * split.reach).sum(1)
    out = {"succ": succ}
    if not want_reward:
        return out
    kind, G = cfg["reward"], cfg["G"]
    if kind == "acc":
        ropt = succ
        zshare = succ ** G + (1 - succ) ** G
    elif kind == "acc_format":
        p_fmt = (pA * split.fmt).sum(1)
        ropt = succ + 0.2 * p_fmt
        fc = split.fmt[np.arange(n), split.c]
        p_hi = succ                              # correct (value 1.2 if fc else 1.0)
        p_f = np.where(fc, p_fmt - succ, p_fmt)  # format, not correct (0.2)
        p_0 = 1 - p_hi - p_f
        zshare = p_hi ** G + np.clip(p_f, 0, 1) ** G + np.clip(p_0, 0, 1) ** G
    else:
        ropt = np.einsum("nk,nj,nkj->n", pA, pL, split.rm_sig)
        zshare = ropt ** G + (1 - ropt) ** G if kind == "judge" else np.zeros(n)
    if getattr(split, "ref_logp", None) is None:  # the reference is fixed: computed once
        zrA, zrL = Policy.logits(v_ref, split.phi, split.x, cfg["T"])
        split.ref_logp = (_log_softmax(zrA), _log_softmax(zrL))
    rA, rL = split.ref_logp
    kl = (pA * (lA - rA)).sum(1) + (pL * (lL - rL)).sum(1)
    top = pA.argmax(1)
    locked_wrong = split.solvable & (pA.max(1) > 0.9) & (top != split.c)
    out.update(ropt=ropt, zshare=zshare, HA=_entropy(lA), HL=_entropy(lL), kl=kl,
               locked_wrong=locked_wrong, lA=lA, lL=lL)
    return out


# ----------------------------------------------------------------------------- the run

def _evaluate(v: np.ndarray, held: Split, T: float, rng: np.random.Generator) -> float:
    """Return the gold verifier's mean over N_EVAL_SAMPLES completions per held-out prompt."""
    zA, zL = Policy.logits(v, held.phi, held.x, T)
    hA, hL = _softmax(zA), _softmax(zL)
    n = held.n
    ue = rng.random((n, N_EVAL_SAMPLES, 1))
    ke = (ue > np.cumsum(hA, 1)[:, None, :]).sum(-1).clip(0, K - 1)
    ue = rng.random((n, N_EVAL_SAMPLES, 1))
    je = (ue > np.cumsum(hL, 1)[:, None, :]).sum(-1).clip(0, J - 1)
    qe = rng.choice(Q, size=(n, N_EVAL_SAMPLES), p=GH_W)
    ce = (ke == held.c[:, None]) & held.ok[np.arange(n)[:, None], je, qe]
    return float(ce.mean())


def simulate(cfg: dict, seed_seq: list[int], *, eval_on_start: bool = False
             ) -> tuple[list[dict], dict, dict]:
    """Run GRPO; return (log rows, training args, exact state).

    ``eval_on_start`` adds TRL's evaluation before training (a row at step 0 holding only
    ``eval_reward``), drawn from a generator of its own so that every other number is the
    same as without it.
    """
    rng = np.random.default_rng(seed_seq)
    w_star = np.zeros(D)
    w_star[0] = cfg["w_s"] / cfg["s_scale"]   # the teacher reads the standardised cue
    sem = rng.standard_normal(D - 2)
    sem /= np.linalg.norm(sem)
    w_star[2:] = cfg["w_sem"] * sem
    a_len = rng.standard_normal(P)
    a_len /= np.linalg.norm(a_len)
    train = Split(N_TRAIN, cfg, w_star, a_len, rng)
    held = Split(N_HELD, cfg, w_star, a_len, rng)
    oracle_fit(train, held, w_star, rng)

    # initial (= reference) policy: partly aligned with the teacher's semantic direction,
    # a bias on the surface heuristic, a length prior centred at init_len
    theta0 = np.zeros(D)
    theta0[0] = cfg["init_s"]
    noise = rng.standard_normal(D - 2)
    noise -= noise @ sem * sem
    noise /= np.linalg.norm(noise)
    theta0[2:] = cfg["init_sem"] * sem + cfg["init_noise"] * noise
    W0 = rng.standard_normal((H, D)) / math.sqrt(D)     # hidden layer starts with unit-scale
    v = np.concatenate([theta0, W0.ravel(), np.zeros(H),  # ... pre-activations and u = 0
                        [math.log(cfg["init_len"])], np.zeros(P), [math.log(cfg["len_width"])]])
    v_ref = v.copy()

    T, G, B, mu, eps, beta = cfg["T"], cfg["G"], cfg["B"], cfg["mu"], cfg["eps"], cfg["beta"]
    n_gen = cfg["n_gen"]
    total_opt = n_gen * mu
    m = np.zeros_like(v)
    s2 = np.zeros_like(v)
    b1, b2, adam_eps = 0.9, 0.999, 1e-8
    opt_step = 0

    def lr_at(k: int) -> float:
        """Return the learning rate of optimiser step ``k`` (warm-up, then the schedule)."""
        base = cfg["lr"]
        if cfg["warmup"] and k < cfg["warmup"]:
            return base * (k + 1) / cfg["warmup"]
        if cfg["schedule"] == "linear":
            return base * max(0.0, (total_opt - k) / max(1, total_opt - cfg["warmup"]))
        return base

    keys = ("S_train", "S_held", "R_opt", "Z", "HA", "HL", "KL", "locked", "norm", "step",
            "move")
    st = {k: [] for k in keys}
    rows = []
    order = rng.permutation(N_TRAIN)
    pos = 0
    arB = np.arange(B)

    prev = {}

    def record(v: np.ndarray, step_norm: float) -> None:
        """Append the exact state of the policy ``v`` to ``st`` (the ground truth of the label)."""
        e = exact_state(v, v_ref, train, cfg)
        # exact KL(previous policy || this one), mean over train prompts: how far one step moved it
        if prev:
            move = ((np.exp(prev["lA"]) * (prev["lA"] - e["lA"])).sum(1)
                    + (np.exp(prev["lL"]) * (prev["lL"] - e["lL"])).sum(1)).mean()
        else:
            move = 0.0
        prev.update(lA=e["lA"], lL=e["lL"])
        st["move"].append(move)
        h = exact_state(v, v_ref, held, cfg, want_reward=False)
        st["S_train"].append(e["succ"].mean())
        st["S_held"].append(h["succ"].mean())
        st["R_opt"].append(e["ropt"].mean())
        st["Z"].append(e["zshare"].mean())
        st["HA"].append(e["HA"].mean())
        st["HL"].append(e["HL"].mean())
        st["KL"].append(e["kl"].mean())
        st["locked"].append(e["locked_wrong"].mean())
        st["norm"].append(float(np.linalg.norm(v[:D + H * D + H])))
        st["step"].append(step_norm)

    last_step = 0.0
    if eval_on_start:
        rows.append({"step": 0, "eval_reward": _evaluate(v, held, T,
                                                         np.random.default_rng([*seed_seq, 3]))})
    for g in range(n_gen):
        record(v, last_step)
        v_start = v.copy()
        if pos + B > N_TRAIN:
            order = rng.permutation(N_TRAIN)
            pos = 0
        idx = order[pos:pos + B]
        pos += B
        phi_b, x_b = train.phi[idx], train.x[idx]
        zA, zL = Policy.logits(v, phi_b, x_b, T)
        lA_old, lL_old = _log_softmax(zA), _log_softmax(zL)
        pA, pL = np.exp(lA_old), np.exp(lL_old)
        # sample G completions per prompt
        k = (rng.random((B, G, 1)) > np.cumsum(pA, 1)[:, None, :]).sum(-1).clip(0, K - 1)
        j = (rng.random((B, G, 1)) > np.cumsum(pL, 1)[:, None, :]).sum(-1).clip(0, J - 1)
        q = rng.choice(Q, size=(B, G), p=GH_W)
        correct = (k == train.c[idx][:, None]) & train.ok[idx[:, None], j, q]
        kind = cfg["reward"]
        if kind == "acc":
            r = correct.astype(float)
        elif kind == "acc_format":
            r = correct + 0.2 * train.fmt[idx[:, None], k]
        else:
            sc = _sigmoid(train.rm_s[idx[:, None], k, j, q])
            r = sc if kind == "rm" else (rng.random((B, G)) < sc).astype(float)
        mean_g = r.mean(1, keepdims=True)
        std_g = r.std(1, ddof=1, keepdims=True)
        adv = (r - mean_g) / (std_g + 1e-4)
        # log metrics at the sampling policy
        zrA, zrL = Policy.logits(v_ref, phi_b, x_b, T)
        rA, rL = _log_softmax(zrA), _log_softmax(zrL)
        bi = arB[:, None]
        lpA_old, lpL_old = lA_old[bi, k], lL_old[bi, j]
        lpA_ref, lpL_ref = rA[bi, k], rL[bi, j]
        kl_tok = 0.5 * (_k3(lpA_ref - lpA_old) + _k3(lpL_ref - lpL_old))
        ent = 0.5 * (_entropy(lA_old) + _entropy(lL_old))
        toks = train.logged_tokens[j, q]
        step_num = (g + 1) * mu
        row = {
            "step": step_num,
            "epoch": round(step_num / mu * B / N_TRAIN, 4),
            "reward": float(r.mean()),
            "reward_std": float(std_g.mean()),
            "frac_reward_zero_std": float(np.isclose(std_g, 0).mean()),
            "entropy": float(ent.mean()),
            "kl": float(kl_tok.mean()),
            "completions/mean_length": float(toks.mean()),
            "completions/clipped_ratio": float(train.trunc[j, q].mean()),
            "learning_rate": float(lr_at(opt_step) * LR_SCALE),
        }
        onehot_k = np.eye(K)[k]                                   # (B, G, K)
        onehot_j = np.eye(J)[j]                                   # (B, G, J)
        for _ in range(mu):
            zA, zL, hid, dev = Policy.logits(v, phi_b, x_b, T, with_hidden=True)
            lA, lL = _log_softmax(zA), _log_softmax(zL)
            pA_n, pL_n = np.exp(lA), np.exp(lL)
            coef = []
            for lp_new, lp_old, lp_ref in ((lA[bi, k], lpA_old, lpA_ref),
                                           (lL[bi, j], lpL_old, lpL_ref)):
                # log-ratios capped at 30 nats so that an unclipped stale run overflows to a huge
                # but finite number instead of inf/nan (the run then keeps going, as real ones
                # with bf16 ratios do)
                rho = np.exp(np.minimum(lp_new - lp_old, 30.0))
                unclip = ((adv >= 0) & (rho <= 1 + eps)) | ((adv < 0) & (rho >= 1 - eps))
                dl = -adv * rho * unclip + beta * (1 - np.exp(np.minimum(lp_ref - lp_new, 30.0)))
                coef.append(dl / (2 * B * G))
            cA, cL = coef
            # d logp(a) / d z = onehot(a) - pi; chain through the logits (divided by T)
            dZ = (cA[..., None] * (onehot_k - pA_n[:, None, :])).sum(1) / T   # (B, K)
            dY = (cL[..., None] * (onehot_j - pL_n[:, None, :])).sum(1) / T   # (B, J)
            grad = Policy.grad(v, phi_b, x_b, hid, dev, dZ, dY)
            gn = np.linalg.norm(grad)
            if gn > 1.0:
                grad /= gn
            opt_step += 1
            m = b1 * m + (1 - b1) * grad
            s2 = b2 * s2 + (1 - b2) * grad ** 2
            mh = m / (1 - b1 ** opt_step)
            vh = s2 / (1 - b2 ** opt_step)
            v = v - lr_at(opt_step - 1) * mh / (np.sqrt(vh) + adam_eps)
        last_step = float(np.linalg.norm(v - v_start))
        if (g + 1) % cfg["eval_steps"] == 0:
            row["eval_reward"] = _evaluate(v, held, T, rng)
        rows.append(row)
    record(v, last_step)
    state = {k: np.asarray(val, float) for k, val in st.items()}
    state.update(ceiling_train=train.ceiling, ceiling_held=held.ceiling,
                 reward_kind=cfg["reward"], G=G, n_gen=n_gen)
    args = {
        "num_generations": G,
        "per_device_train_batch_size": B * G,
        "gradient_accumulation_steps": 1,
        "learning_rate": cfg["lr"] * LR_SCALE,
        "lr_scheduler_type": cfg["schedule"],
        "warmup_steps": cfg["warmup"],
        "beta": beta,
        "num_iterations": mu,
        "epsilon": eps,
        "temperature": T,
        "max_completion_length": cfg["cap"],
        "max_steps": total_opt,
        "logging_steps": mu,
        "eval_steps": cfg["eval_steps"] * mu,
        "max_grad_norm": 1.0,
    }
    return rows, args, state


# ----------------------------------------------------------------------------- the label rule

#: thresholds of the label rule (justified in README.md, fixed before any diagnosis was run)
INSTAB_DROP = 0.15        # fall of the exact expected optimised reward below its running max
INSTAB_JUMP = 1.0         # ... or one step moving the policy by this many nats (exact KL, mean)
HACK_RISE = 0.10          # rise of the exact expected optimised (proxy) reward
HACK_FLAT = 0.05          # held-out true success gains at most this much ...
HACK_PEAK_FALL = 0.05     # ... or falls this much from its peak while the proxy still rises
DEGEN_START, DEGEN_MEAN = 0.6, 0.7   # share of all-same groups at the start / over the run
CONC_H_END, CONC_H_EARLY, CONC_EARLY = 0.3, 0.5, 0.4
CONC_LOCKED, CONC_GAP = 0.10, 0.10
NL_GAIN, NL_TOP = 0.03, 0.9


def _tail(a: np.ndarray, frac: float = 0.1) -> float:
    """Return the mean of the last ``frac`` of ``a`` (at least 3 points), a noise-robust end."""
    n = max(3, int(round(frac * len(a))))
    return float(np.mean(a[-n:]))


def label_of(state: dict) -> tuple[str, str]:
    """One ground-truth label from the simulator's exact state, with the reason.

    Checked in order; the first that holds is the label.
    """
    R, S_h, S_t = state["R_opt"], state["S_held"], state["S_train"]
    Z, HA, locked = state["Z"], state["HA"], state["locked"]
    n = len(R)
    # 1. dynamical instability: the optimiser makes its own (exact, noise-free) objective worse
    drop = float(np.max(np.maximum.accumulate(R) - R))
    jump = float(np.max(state["move"]))
    if drop >= INSTAB_DROP or jump >= INSTAB_JUMP:
        return "dynamical_instability", (f"exact optimised reward fell {drop:.2f} below its "
                                         f"running max; largest one-step move {jump:.2f} nats")
    # 2. reward hacking: a proxy reward rises while the true held-out success does not
    rise = _tail(R) - R[0]
    gain_h = _tail(S_h) - S_h[0]
    if state["reward_kind"] in PROXY_KINDS and rise >= HACK_RISE:
        peak = int(np.argmax(S_h))
        peak_fall = float(S_h[peak] - _tail(S_h))
        proxy_after = _tail(R) - R[peak]
        if gain_h <= HACK_FLAT or (peak_fall >= HACK_PEAK_FALL and proxy_after >= HACK_PEAK_FALL):
            return "reward_hacking", (f"proxy +{rise:.2f}, held-out true {gain_h:+.2f}"
                                      f" (peak fall {peak_fall:.2f})")
    # 3. advantage degeneracy: most groups all-same from the start
    if Z[0] >= DEGEN_START and float(Z.mean()) >= DEGEN_MEAN:
        return "advantage_degeneracy", f"all-same share {Z[0]:.2f} at start, {Z.mean():.2f} mean"
    # 4. policy concentration: early entropy collapse, locked wrong on solvable prompts, stalled
    h0 = HA[0]
    below = np.nonzero(HA <= CONC_H_EARLY * h0)[0]
    early = below.size > 0 and below[0] <= CONC_EARLY * n
    gap = state["ceiling_train"] - _tail(S_t)
    if (HA[-1] <= CONC_H_END * h0 and early and locked[-1] >= CONC_LOCKED and gap >= CONC_GAP):
        return "policy_concentration", (f"answer entropy {h0:.2f}->{HA[-1]:.2f} (half by step "
                                        f"{below[0]}), locked wrong {locked[-1]:.2f}, "
                                        f"gap {gap:.2f}")
    # 5. not learning: no true improvement although there was room
    if gain_h <= NL_GAIN and S_h[0] < NL_TOP:
        return "not_learning", f"held-out true {gain_h:+.3f} from {S_h[0]:.2f}"
    return "healthy", f"held-out true {gain_h:+.2f} from {S_h[0]:.2f}"


# ----------------------------------------------------------------------------- writing runs

_DROP = {"all": (), "no_entropy": ("entropy",), "no_zero_std": ("frac_reward_zero_std",)}


def select_keys(rows: list[dict], keyset: str) -> list[dict]:
    """Keep the metrics of ``keyset`` in each row, so that the diagnosis meets partial logs."""
    out = []
    for row in rows:
        if keyset == "reward_eval":
            new = {k: row[k] for k in ("step", "reward", "eval_reward") if k in row}
        else:
            new = {k: val for k, val in row.items() if k not in _DROP[keyset]}
        out.append(new)
    return out


def write_run(folder: Path, rows: list[dict], args: dict, keyset: str) -> Path:
    """Write one run as TRL writes it; return its ``trainer_state.json``.

    ``training_args.json`` beside it holds ``args`` (the KL coefficient among them).
    """
    folder.mkdir(parents=True, exist_ok=True)
    logged = select_keys(rows, keyset)
    if args["beta"] == 0:  # TRL does not log the KL when beta is 0
        for row in logged:
            row.pop("kl", None)
    (folder / "trainer_state.json").write_text(json.dumps(
        {"log_history": logged, "max_steps": args["max_steps"], "global_step": args["max_steps"],
         "logging_steps": args["logging_steps"]}, indent=1))
    (folder / "training_args.json").write_text(json.dumps(args, indent=1))
    return folder / "trainer_state.json"


def runs_of_seed(seed: int, *, eval_on_start: bool = False
                 ) -> Iterator[tuple[str, str, str, str, dict, list[dict], dict, dict]]:
    """Yield (name, family, variant, keyset, cfg, rows, args, state) for the six runs of a seed.

    ``eval_on_start``: each log also holds an evaluation before training (:func:`simulate`).
    """
    for fi, fam in enumerate(FAMILIES):
        rng = np.random.default_rng([seed, fi, 1])
        cfg = make_config(fam, rng)
        keyset = KEYSETS[(seed + fi) % len(KEYSETS)]
        rows, args, state = simulate(cfg, [seed, fi, 2], eval_on_start=eval_on_start)
        name = f"run_s{seed:03d}_{fi}"
        yield name, fam, cfg["variant"], keyset, cfg, rows, args, state


def parse_seeds(text: str) -> list[int]:
    """Parse seeds such as ``0-9`` or ``1,3,5-7`` (ranges inclusive) into a list."""
    out = []
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.extend(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def _summary(state: dict) -> str:
    """Return a few exact-state curves, subsampled, as text for development."""

    def f(a: np.ndarray) -> str:
        return " ".join(f"{x:.2f}" for x in a[:: max(1, len(a) // 8)])
    return (f"  S_held  {f(state['S_held'])}\n  R_opt   {f(state['R_opt'])}\n"
            f"  Z       {f(state['Z'])}\n  HA      {f(state['HA'])}\n  KL      {f(state['KL'])}\n"
            f"  locked  {f(state['locked'])}  ceiling {state['ceiling_train']:.2f}/"
            f"{state['ceiling_held']:.2f}")


def main() -> None:
    """Simulate and label the runs of the given seeds; write them (and plots) if asked."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="0-9")
    ap.add_argument("--out", default=None, help="write the runs here")
    ap.add_argument("--plot", action="store_true", help="plot state and logged curves to --out")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args()
    out = Path(a.out) if a.out else None
    for seed in parse_seeds(a.seeds):
        for name, fam, var, keyset, cfg, rows, args, state in runs_of_seed(seed):
            lab, why = label_of(state)
            print(f"{name} {fam:22s} {var:14s} {keyset:12s} -> {lab:22s} {why}")
            if not a.quiet:
                print(f"  cfg lr={cfg['lr']:.3g} G={cfg['G']} B={cfg['B']} T={cfg['T']:.2f} "
                      f"mu={cfg['mu']} beta={cfg['beta']} reward={cfg['reward']} n={cfg['n_gen']}")
                print(_summary(state))
            if out:
                write_run(out / name, rows, args, keyset)
                if a.plot:
                    _plot(out / f"{name}.png", f"{name} {fam}/{var} -> {lab}", rows, state)


def _plot(path: Path, title: str, rows: list[dict], state: dict) -> None:
    """Plot the exact state and the logged curves of one run, for development."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(2, 3, figsize=(13, 6))
    steps = np.arange(len(state["R_opt"]))
    ax[0, 0].plot([r["reward"] for r in rows], lw=0.6, label="logged reward")
    ev = [(i, r["eval_reward"]) for i, r in enumerate(rows) if "eval_reward" in r]
    if ev:
        ax[0, 0].plot(*zip(*ev, strict=True), "o-", ms=2, label="logged eval")
    ax[0, 0].plot(steps, state["R_opt"], label="exact R_opt")
    ax[0, 0].plot(steps, state["S_held"], label="exact S_held")
    ax[0, 0].legend(fontsize=6)
    ax[0, 1].plot([r["frac_reward_zero_std"] for r in rows], lw=0.6)
    ax[0, 1].plot(steps, state["Z"])
    ax[0, 1].set_title("zero-std share")
    ax[0, 2].plot([r["entropy"] for r in rows], lw=0.6)
    ax[0, 2].plot(steps, state["HA"], label="HA")
    ax[0, 2].plot(steps, state["HL"], label="HL")
    ax[0, 2].set_title("entropy")
    ax[1, 0].plot([r["kl"] for r in rows], lw=0.6)
    ax[1, 0].plot(steps, state["KL"])
    ax[1, 0].set_title("KL")
    ax[1, 1].plot([r["completions/mean_length"] for r in rows], lw=0.6)
    ax[1, 1].set_title("length")
    ax[1, 2].plot(steps, state["locked"], label="locked")
    ax[1, 2].plot(steps, state["step"], label="|dv|")
    ax[1, 2].legend(fontsize=6)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=70)
    plt.close(fig)


if __name__ == "__main__":
    main()
