"""Write the tour notebooks from the cells below: ``python notebooks/make_notebooks.py``.

Kept as code so that the notebooks are reviewed as text; the .ipynb files are committed without
outputs and executed by the test suite (tests/test_notebooks.py) with nbclient.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {
    "01_derivation.ipynb": [
        ("md", "# The derivation, step by step\n\nEvery result of grpodyn is a `Derivation` in "
               "one registry, derived with sympy (docs/theory.md sections 1-9). In Jupyter each "
               "one renders as LaTeX (`_repr_latex_`)."),
        ("code", "from grpodyn.theory import get, names\nprint(len(names()), 'derivations')\n"
                 "get('mean_field_map')"),
        ("md", "The map's continuum limit is a damped oscillator: mass, damping and stiffness."),
        ("code", "for name in ('mass', 'damping', 'stiffness', 'damping_ratio'):\n"
                 "    d = get(name)\n    print(f'{name:15s} {d.latex()}   ({d.summary})')"),
        ("code", "get('trajectory')"),
        ("md", "Each derivation records its steps; here the critical-damping limit."),
        ("code", "d = get('trajectory_critical')\nfor step in d.steps:\n"
                 "    print('-', step.description, ':', step.expr)\nd"),
        ("code", "get('stiffness_max')"),
    ],
    "02_overdamped_and_empirical_law.ipynb": [
        ("md", "# The overdamped limit and the empirical law\n\nWhen the damping dominates, "
               "the closed-form trajectory becomes the saturating exponential that reward "
               "curves are usually fitted with, shifted by the inertial delay m/c."),
        ("code", "import numpy as np\nimport matplotlib\nmatplotlib.use('Agg')\n"
                 "import matplotlib.pyplot as plt\nfrom grpodyn.numerics.trajectory import "
                 "reward_trajectory\nfrom grpodyn.numerics.compiled import compiled\n"
                 "t = np.linspace(0, 600, 601)\nbeta, k = 0.9, 0.0005\n"
                 "exact = reward_trajectory(t, r0=0.2, plateau=0.9, momentum=beta, "
                 "stiffness=k).values\ntau = compiled('relaxation_time')(beta, k, 1.0)\n"
                 "delay = compiled('inertial_delay')(beta)\nprint('tau', tau, 'delay', delay)"),
        ("code", "law = 0.9 - 0.7 * np.exp(-np.clip(t - delay, 0, None) / tau)\n"
                 "print('largest gap to the law:', np.max(np.abs(exact - law)))\n"
                 "plt.plot(t, exact, label='closed form')\nplt.plot(t, law, '--', "
                 "label='empirical law, shifted by m/c')\nplt.legend(); plt.xlabel('step');"),
        ("code", "from grpodyn.numerics.fit import fit_curve\nrng = np.random.default_rng(0)\n"
                 "y = exact + 0.03 * rng.normal(size=t.size)\n"
                 "for model in ('inertial', 'exponential', 'sigmoid'):\n"
                 "    f = fit_curve(model, t, y, momentum=beta if model == 'inertial' else None)\n"
                 "    print(f'{model:12s} R^2 {f.r2:.4f}  AIC {f.aic:.1f}')"),
    ],
    "03_stability_and_refresh.ipynb": [
        ("md", "# Stability and the refresh threshold\n\nExact discrete regimes (Jury "
               "conditions) and the first unstable refresh interval K (one past the largest "
               "stable K, `refresh_max` of `predict`), against the continuum estimate and the "
               "reference paper's bound."),
        ("code", "import numpy as np\nfrom grpodyn.numerics.stability import regime_map, "
                 "REGIMES, refresh_threshold_comparison\nbeta = np.linspace(0, 0.99, 200)[:, "
                 "None]\nk = np.geomspace(1e-4, 4, 300)[None, :]\ncodes = regime_map(beta, k)"
                 "\nfor i, name in enumerate(REGIMES):\n    print(f'{name:12s} "
                 "{np.mean(codes == i):.1%} of the grid')"),
        ("code", "for b in (0.0, 0.5, 0.9):\n    print(b, refresh_threshold_comparison("
                 "momentum=b, stiffness=0.05))"),
        ("code", "from grpodyn.numerics.predict import predict\npredict(lr=0.01, momentum=0.9, "
                 "kappa=1, refresh=4, noise=1e-4).to_dict()"),
    ],
    "04_bandit_lab.ipynb": [
        ("md", "# The softmax-bandit lab\n\nOn a two-arm bandit the mean-field reduction is "
               "exact up to sampling noise: the simulated GRPO runs follow the theory."),
        ("code", "import numpy as np\nfrom grpodyn.empirical.bandit.simulation import "
                 "BanditConfig, simulate_bandit\nconfig = BanditConfig(lr=0.3, group_size=8, "
                 "prompts=8, kl=0.5)\nrun = simulate_bandit(config, steps=200, seeds=16, x0=-1.5)\n"
                 "mean = run.metrics['reward'].mean(axis=1)\nprint(mean[::40])"),
        ("code", "from grpodyn.numerics.bandit import bandit_theory\n"
                 "theory = bandit_theory(group_size=8, kl=0.5)\ntheory"),
    ],
    "05_real_runs_and_fits.ipynb": [
        ("md", "# Real GRPO runs and their fits\n\nThe shipped tiny-model runs (TRL's "
               "GRPOTrainer on a local two-layer Llama) and what the fits say."),
        ("code", "from grpodyn.empirical.tinylm.analysis import DATA_DIR, summarise_tiny_runs\n"
                 "from grpodyn.empirical.logs.loaders import load_run\nfrom grpodyn.analysis "
                 "import fit_run\nrun = load_run(DATA_DIR / 'tiny_G4_seed0.json')\n"
                 "result = fit_run(run, train_fraction=0.5)\n"
                 "print('weights', {k: round(w, 3) for k, w in result['weights'].items()})\n"
                 "print('plateau:', result['plateau']['status'], '-', "
                 "result['plateau']['reason'])\n"
                 "print('noise sigma', round(result['noise']['sigma'], 4))\n"
                 "fc = result['forecast']\n"
                 "print(f\"fitted on the first half; from step {fc['cut_step']:g}: MAE "
                 "{fc['mae']:.4f}, 90% band covers {fc['coverage']:.2f}\")"),
        ("md", "## Two forecasters of the rest of a run\n\n"
               "`grpodyn forecast` cuts a run and forecasts the rest. The default is a stacked "
               "ensemble of curve models with the correlated noise of docs/theory.md section 6, "
               "which give the plateau, with the calibrated learned prior's point and band; "
               "`--forecaster learned_prior` is a small network trained on curves drawn from "
               "the theory's prior (LC-PFN style), whose median and quantiles are the forecast "
               "and its band. Scored on every source of `benchmarks/forecast.py` "
               "(studies/learned_prior/findings.md 8f, 8g), the learned prior's point forecast "
               "was the better one on 28 of 30 source x F cells (8f) and on 10 of 10 later "
               "(8g), and its band has the lowest interval score on most data made after it. "
               "So the default takes its point from the learned prior and calibrates its band "
               "on the run's own training part: below, the two print the same MAE and their "
               "point lines lie on each other; they differ in the band. One shipped run, cut "
               "at 30 %:"),
        ("code", "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
                 "from grpodyn.empirical.logs.run_analysis import analyse_run\n"
                 "run = load_run(DATA_DIR / 'tiny_G4_seed0.json')\n"
                 "plt.plot(run.steps, run.reward, '.', ms=2, color='0.6', label='reward')\n"
                 "for name, colour in (('ensemble', 'C0'), ('learned_prior', 'C3')):\n"
                 "    fc = analyse_run(run, train_fraction=0.3, forecaster=name, "
                 "diagnose_run=False)\n"
                 "    out = fc.forecast_dict()\n"
                 "    print(f\"{name:14s} MAE {out['mae']:.4f}, 90% band covers "
                 "{out['coverage']:.2f}, interval score {out['interval_score']:.3f}\")\n"
                 "    plt.plot(out['steps'], out['point'], color=colour, label=name)\n"
                 "    plt.fill_between(out['steps'], out['lower'], out['upper'], color=colour, "
                 "alpha=0.15)\n"
                 "plt.axvline(out['cut_step'], ls=':', color='k')\n"
                 "plt.legend(); plt.xlabel('step'); plt.ylabel('reward');"),
        ("code", "summary = summarise_tiny_runs()\nprint('plateau', summary.plateau)\n"
                 "print('tau', summary.relaxation_time, 'ratio', summary.relaxation_ratio)\n"
                 "print('fluctuation exponent', summary.fluctuation_exponent)"),
        ("code", "from grpodyn.empirical.tinylm.curvature_probe import summarise_probe\n"
                 "for row in summarise_probe():\n    print(row)"),
        ("md", "## A sweep, its joint fit, and a run predicted before it is made\n\n"
               "The shipped grid 2 (`python -m grpodyn.empirical.tinylm.make_grid --design "
               "grid2`): Adam runs of seed 0 at three learning rates and a cross in G and B. "
               "The sweep fit shares r*, kappa_A and Adam's noise ratio rho_A (and one r0 per "
               "seed); each run keeps its own lr, G, B (docs/theory.md sections 7 and 9). It also "
               "carries the sampling noise on the mean path: the step "
               "variance split sigma_p^2/B + sigma_c^2/(B G), Adam's between-prompt ratio rho_p "
               "and the second-order drag (studies/transfer/findings.md 6d); a constant these "
               "seven runs do "
               "not determine is printed with its status. The G = 16 "
               "run is held out and predicted from the others. The band also "
               "carries the map's own transfer error, s d^2 (m(n) - m(0))^2: d is the "
               "distance in log-hyperparameter space to the nearest source setting, and s is "
               "calibrated by holding each source setting out in turn and transferring it from "
               "the rest (`band_calibration`, studies/transfer/findings.md 6f)."),
        ("code", "from grpodyn.empirical.tinylm.make_grid import DESIGNS\n"
                 "from grpodyn.empirical.logs.sweep import fit_sweep, load_sweep_run, transfer\n"
                 "GRID = DESIGNS['grid2'].out\n"
                 "runs = [load_sweep_run(p) for p in sorted(GRID.glob('adam_*_seed0.json'))]\n"
                 "sweep = fit_sweep(runs)\nfor name, c in sweep.constants().items():\n"
                 "    print(name, c)\nprint(sweep.tau_lr_exponent())\nprint(sweep.bg_test())"),
        ("code", "held = [r for r in runs if '_G16_B8_' in r.name]\n"
                 "sources = [r for r in runs if r not in held]\n"
                 "out = transfer(sources, {'group_size': 16, 'batch': 8, 'lr': 2e-4, 'seed': 0}, "
                 "steps=359)\ncal = out['band_calibration']\n"
                 "print('transfer error:', cal['status'], 's =', cal['s'], 'at distance', "
                 "round(cal['distance'], 2))\nfor h in cal['held_out']:\n"
                 "    print('  held out', {k: h['setting'][k] for k in ('lr', 'group_size', "
                 "'batch')}, h['status'], 'd', h.get('distance'), 'excess', h.get('excess'))\n"
                 "import numpy as np\nimport matplotlib\nmatplotlib.use('Agg')\n"
                 "import matplotlib.pyplot as plt\nat = held[0].steps.astype(int)\n"
                 "inside = np.mean((held[0].reward >= np.array(out['lower'])[at]) & "
                 "(held[0].reward <= np.array(out['upper'])[at]))\n"
                 "print('band covers', round(float(inside), 2), 'of the held-out points')\n"
                 "plt.plot(held[0].steps, held[0].reward, '.', ms=2, label='held out (G 16, B 8)')"
                 "\nplt.plot(out['steps'], out['mean'], label='transfer')\n"
                 "plt.fill_between(out['steps'], out['lower'], out['upper'], alpha=0.3)\n"
                 "plt.legend(); plt.xlabel('step');"),
    ],
    "06_diagnostics.ipynb": [
        ("md", "# Diagnostics: the four failure modes\n\nThe labelled bandit test bed, "
               "scored by the theory-based diagnosis and by simple threshold rules."),
        ("code", "from grpodyn.empirical.diagnostics.testbed import bandit_testbed, evaluate\n"
                 "scores = evaluate(bandit_testbed(seeds=5))\n"
                 "for label, pr in scores['model']['per_mode'].items():\n"
                 "    print(f\"{label:22s} model P {pr['precision']:.2f} R {pr['recall']:.2f}"
                 "   rules R {scores['threshold_rules']['per_mode'][label]['recall']:.2f}\")"),
        ("md", "This bed scores its induced labels (`testbed.evaluate`), and its concentration "
               "label cannot be met: on-policy GRPO on a bandit with one rewarded arm never "
               "lowers that arm's logit, so a policy can only lock onto it at reward 1.00, "
               "which the diagnosis calls convergence. Its concentration runs are called "
               "healthy: concentration recall 0, its precision undefined (`nan`: nothing is "
               "called concentration), healthy precision 0.50. With those locked runs "
               "relabelled converged the diagnosis scores 1.00 on every label "
               "(studies/tiny_grids/findings.md section 4b, revision 6)."),
        ("md", "The tiny-model TRL runs made while the diagnosis was frozen (held-out seeds). "
               "Labels are the induced modes; where a run failed otherwise, it counts as a miss "
               "(studies/tiny_grids/findings.md, section 4)."),
        ("code", "from grpodyn.empirical.diagnostics.testbed import HELDOUT_SEEDS, tiny_testbed\n"
                 "held = evaluate(tiny_testbed(seeds=HELDOUT_SEEDS))\n"
                 "for label, pr in held['model']['per_mode'].items():\n"
                 "    print(f\"{label:22s} model P {pr['precision']:.2f} R {pr['recall']:.2f}\")\n"
                 "print([c for c in held['cases'] if c['model'] != c['label']])"),
        ("code", "from grpodyn.empirical.diagnostics.diagnose import diagnose\n"
                 "from grpodyn.empirical.logs.loaders import load_run\n"
                 "from grpodyn.empirical.tinylm.analysis import DATA_DIR\n"
                 "d = diagnose(load_run(DATA_DIR / 'tiny_G16_seed0.json'))\nprint(d.primary)\n"
                 "for name, v in d.modes.items():\n    print(name, round(v.score, 2), "
                 "v.evidence)"),
        ("md", "## The prompt distribution behind a real log\n\nThe logged zero-std share is "
               "the average of p^G + (1-p)^G over the prompts of a step. With p ~ Beta(m phi, "
               "(1-m) phi), the mean reward gives m and the zero-std share gives phi "
               "(docs/theory.md section 7, `prompt_pool_zero_std_share`). Here the lzhihan "
               "grpo-math-pipeline run (G = 4 from its repository's README), the full log from "
               "`../shared/data/real_logs` when it is there, else the excerpt of the tests (80 "
               "entries, 77 with a reward)."),
        ("code", "from pathlib import Path\nimport numpy as np\nimport grpodyn\n"
                 "from grpodyn.numerics.prompt_pool import fit_prompt_pool, zero_std_share\n"
                 "repo = Path(grpodyn.__file__).resolve().parents[1]\n"
                 "name = 'lzhihan__grpo-math-pipeline__outputs_grpo_qwen2.5-1.5b-sft-grpo-lora_"
                 "checkpoint-1200_trainer_state'\n"
                 "full = [base / 'shared' / 'data' / 'real_logs' / f'{name}.json' "
                 "for base in (repo.parent, repo)]\n"
                 "log = next((f for f in full if f.exists()), repo / 'tests' / 'data' / "
                 "'real_logs' / f'{name}.excerpt.json')\n"
                 "run = load_run(log)\nprint(log.name, run.n_points, 'points')\n"
                 "frac = run.metrics['frac_reward_zero_std']\n"
                 "for part in np.array_split(np.arange(run.n_points), 4):\n"
                 "    pool = fit_prompt_pool(run.reward[part], frac[part], group_size=4)\n"
                 "    print(f'steps {run.steps[part[0]]:g}-{run.steps[part[-1]]:g}: mean "
                 "{pool.mean:.2f}, zero-std {pool.observed_share:.2f}, phi {pool.phi:.3g} "
                 "[{pool.low:.3g}, {pool.high:.3g}] ({pool.status}); identical prompts would "
                 "give {zero_std_share(pool.mean, np.inf, 4):.2f}')"),
        ("md", "phi about one (0.7-1.2 over the run): the prompts are far from identical "
               "(phi -> infinity), and "
               "the zero-std share is mostly the pool's spread, not G. The diagnosis uses the "
               "late window's law for the drift lost to the group size, and the first steps' "
               "law for the share of failing prompts that should still explore."),
        ("code", "d = diagnose(run, group_size=4)\nprint(d.primary, d.state, d.group_size)\n"
                 "print(d.prompt_pool['late'])\n"
                 "print(d.modes['advantage_degeneracy'].evidence)\n"
                 "print(d.modes['policy_concentration'].evidence)"),
        ("md", "## Labels by outcome, verl's advantage extremes, and an abstention that "
               "counts as a miss"
               "\n\nThe prompt-pool simulator labels a run by what it did (its exact pool "
               "success rate: `outcome_label`), not by the settings it was drawn from. Written "
               "as verl's console, which logs no zero-std share, the step's largest and "
               "smallest advantage (`critic/advantages/max`, `min`) are those of the groups "
               "with the fewest and the most successes among those with spread, both 0 when "
               "no group has spread; their law under the Beta pool "
               "(`prompt_pool_batch_extremes_within`) gives phi "
               "(`fit_prompt_pool_extremes`), and concentration is judged as on TRL's logs. "
               "A verl log without them falls back on the entropy read against the reward's "
               "move (`prompt_pool_entropy_ratio_bound`): a fall within it is "
               "learning; a fall beyond it is `undecided` and the run `undetermined` (a miss "
               "in the source matrix). Design seed 0 of the variant bed."),
        ("code", "from grpodyn.empirical.diagnostics.testbed import called, pool_testbed\n"
                 "for fmt in ('trl', 'verl'):\n"
                 "    for c in pool_testbed(seeds=range(0, 1), variant=True, log_format=fmt):\n"
                 "        d = diagnose(c.run)\n"
                 "        print(f\"{fmt:4s} {c.name:38s} label {c.label:22s} called "
                 "{called(d):22s} state {d.state}\")\n"
                 "        if fmt == 'verl' and c.label in ('healthy', 'policy_concentration'):\n"
                 "            print('     ', d.modes['policy_concentration'].evidence)"),
    ],
    "07_deepnet.ipynb": [
        ("md", "# The deep-network demonstration\n\nA tiny Llama (three sizes: 70k, 330k and 1m "
               "parameters) trained "
               "with GRPO and heavy-ball SGD. Its curvatures were measured before training, the "
               "thresholds predicted and committed, then the sweeps run. This notebook only "
               "reads the study's data (`studies/deepnet`); studies/deepnet/findings.md section 10 "
               "reads it."),
        ("code", "import json\nimport sys\n\n"
                 "from grpodyn.empirical.data_paths import studies_root\n"
                 "sys.path.insert(0, str(studies_root() / 'deepnet'))  # the study's scripts\n"
                 "from deepnet_study import figures\n"
                 "models = [m for m in ('70k', '330k', '1m') if (figures.DATA / "
                 "f'measurements_{m}.json').exists()]\n"
                 "figures.spectrum_figure(models);"),
        ("code", "rows = figures.load('comparison.json')['rows']\n"
                 "for r in rows:\n"
                 "    if not r['quantity'].startswith('relaxation'):\n"
                 "        print(r['model'], r['quantity'], r['setting'], 'predicted', "
                 "r['predicted'], r.get('predicted_status') or '', '| observed', r['observed'], "
                 "r.get('observed_status') or '', '| within target:', r['within_target'])"),
        ("md", "Most committed predictions miss (`within target: False`). At momentum 0 the "
               "observed limits (lr 0.1 to 1.6; in the first sweeps the whole grid stayed "
               "stable) lie far above the `lr_max` predictions (0.007 to 0.18; the critical and "
               "cross-validated variants come closer on 330k); at momentum 0.9 the "
               "70k and 330k limits fall within target, and the 1m one under the second "
               "instability rule; the refresh and oscillation thresholds at lr 0.1 mostly "
               "miss. studies/deepnet/findings.md section 10 reads these rows: one stiffness "
               "does not describe the network."),
        ("code", "for m in models:\n"
                 "    if (figures.DATA / f'runs_{m}.json').exists():\n"
                 "        figures.threshold_figure(m)\n        figures.reward_figure(m)"),
        ("md", "The two-mode map (theory/two_mode.py): a stiff curvature (top Hessian "
               "eigenvalue) and a soft one (the curvature of the mean update direction, "
               "sampling noise removed), predicted by code committed before the runs2 sweeps "
               "(predictions_two_mode.json)."),
        ("code", "for i in figures.load('predictions_two_mode.json')['items']:\n"
                 "    print(i['model'], i['quantity'], i['setting'], i['value'], "
                 "i.get('status') or '')\n"
                 "for m in models:\n"
                 "    if (figures.DATA / f'runs2_{m}.json').exists() and any(\n"
                 "            r['setting']['sweep'] == 'lr'\n"
                 "            for r in figures.load(f'runs2_{m}.json')['runs']):\n"
                 "        figures.two_mode_lr_figure(m)"),
        ("md", "Later sweeps, same committed predictions: the 1m lr sweep continued upward "
               "(dotted: a second instability rule, defined after the runs, whose baseline is "
               "the warm-up reward), and the staleness sweeps predicted in "
               "predictions_staleness.json (committed before they were run)."),
        ("code", "for m in models:\n"
                 "    if (figures.DATA / f'runs2_{m}.json').exists() and any(\n"
                 "            r['setting']['sweep'] == 'staleness'\n"
                 "            for r in figures.load(f'runs2_{m}.json')['runs']):\n"
                 "        figures.two_mode_staleness_figure(m)"),
        ("md", "Progressive sharpening: the critical lr re-measured along a 70k run at lr 0.1 "
               "(an observation made after the sweeps)."),
        ("code", "for m in models:\n"
                 "    if (figures.DATA / f'sharpening_{m}.json').exists():\n"
                 "        for row in figures.load(f'sharpening_{m}.json')['rows']:\n"
                 "            print(m, 'step', row['step'], 'reward', round(row['reward'], 3), "
                 "'critical lr', row['critical_lr'])"),
        ("md", "The relaxation time from the finite-step drift measured across r on briefly "
               "trained copies (predictions_relaxation.json, committed before the runs; "
               "studies/deepnet/findings.md section 10e)."),
        ("code", "for m in models:\n"
                 "    if (figures.DATA / f'drift_{m}.json').exists():\n"
                 "        figures.relaxation_figure(m)"),
        ("md", "The slow route (studies/deepnet/findings.md section 10f): the segments' drift "
               "regressed "
               "on each state's deviation from the copy run's trend, the slow drift at zero "
               "deviation, predicted at lr 0.05 and 0.15 (predictions_relaxation_slow.json, "
               "committed before the runs on seeds 900-902)."),
        ("code", "for m in models:\n"
                 "    if (figures.DATA / f'drift_slow_{m}.json').exists():\n"
                 "        figures.relaxation_figure(m, route='slow')"),
        ("md", "The burn-in route (studies/deepnet/findings.md section 10g): segments read after "
               "20 steps "
               "at their own lr, the predicted curve through the measured burn-in of the warmed "
               "model, predicted at lr 0.075 and 0.125 (predictions_relaxation_burnin.json, "
               "committed before the runs on seeds 1000-1002)."),
        ("code", "for m in models:\n"
                 "    if (figures.DATA / f'drift_burnin_{m}.json').exists():\n"
                 "        figures.relaxation_figure(m, route='burnin')"),
        ("md", "The linear route (studies/deepnet/findings.md section 10h): one stiffness, "
               "D(r) = kappa (r* - r), 60-step segments after the burn-in at three copy states, "
               "predicted at lr 0.0625 and 0.1125 (predictions_relaxation_linear.json, committed "
               "before the "
               "runs on seeds 1100-1108); its 600-step variant (section 10i, lr 0.0875 and 0.14, "
               "seeds 1200-1208) and its precise variant (section 10j: 96 repeats per state, "
               "70k only, lr 0.08 and 0.095, seeds 1300-1308)."),
        ("code", "for route in ('linear', 'long', 'precise'):\n"
                 "    for m in models:\n"
                 "        if (figures.DATA / f'relaxruns_{route}_{m}.json').exists():\n"
                 "            figures.relaxation_figure(m, route=route)"),
    ],
    "08_regime_explorer.ipynb": [
        ("md", "# The regime explorer\n\nMove the sliders: the learning rate, the momentum, "
               "the curvature kappa and a lag (a refresh interval K, sample-and-hold, or a "
               "staleness d). The stiffness is k = lr kappa [1/step^2]. The panels show the mean "
               "reward path of the exact discrete map, its poles in the unit disk (the map is "
               "stable while every pole lies inside) and the regime map with this run as a "
               "star: regimes shaded and named, the critical damping curve, the flip boundary, "
               "the Jury limit 2(1 + beta) and, with a lag, its threshold (docs/theory.md sections "
               "4 and 5). The static panels are `grpodyn.numerics.explorer.explorer_figure`; "
               "the widgets need the `notebooks` extra (ipywidgets)."),
        ("code", "import ipywidgets as widgets\nimport matplotlib.pyplot as plt\n"
                 "from IPython.display import display\n"
                 "from grpodyn.numerics.explorer import explorer_figure\n\n"
                 "lr = widgets.FloatLogSlider(value=0.02, base=10, min=-4, max=0.7, step=0.05, "
                 "description='lr')\n"
                 "momentum = widgets.FloatSlider(value=0.9, min=0.0, max=0.99, step=0.01, "
                 "description='momentum')\n"
                 "kappa = widgets.FloatLogSlider(value=1.0, base=10, min=-2, max=2, step=0.05, "
                 "description='kappa')\n"
                 "lag = widgets.Dropdown(options=['none', 'refresh', 'staleness'], "
                 "value='none', description='lag')\n"
                 "lag_steps = widgets.IntSlider(value=4, min=1, max=16, "
                 "description='K or d (steps)')"),
        ("md", "Each change redraws the three panels and records what they show in `state` "
               "(the regime, the poles and their radius, the limits)."),
        ("code", "panel = widgets.Output()\nlabel = widgets.HTML()\nstate = {}\ndrawn = [0]\n\n"
                 "def update(change=None):\n"
                 "    refresh = lag_steps.value if lag.value == 'refresh' else 1\n"
                 "    staleness = lag_steps.value if lag.value == 'staleness' else 0\n"
                 "    fig = explorer_figure(lr=lr.value, momentum=momentum.value, "
                 "kappa=kappa.value,\n"
                 "                          refresh=refresh, staleness=staleness)\n"
                 "    state.clear()\n    state.update(fig.explorer_state.to_dict())\n"
                 "    drawn[0] += 1\n"
                 "    label.value = (f\"<b>{state['regime']}</b>: k = {state['stiffness']:.3g}, "
                 "pole radius {state['spectral_radius']:.3f}, \"\n"
                 "                   f\"lr limit {state['lr_max']:.3g}\")\n"
                 "    with panel:\n        panel.clear_output(wait=True)\n"
                 "        display(fig)\n    plt.close(fig)\n\n"
                 "for control in (lr, momentum, kappa, lag, lag_steps):\n"
                 "    control.observe(update, names='value')\n"
                 "update()\n"
                 "display(widgets.VBox([widgets.HBox([lr, momentum, kappa]), "
                 "widgets.HBox([lag, lag_steps]), label, panel]))"),
        ("md", "The same point through the public API: `grpodyn.predict` names the regime, "
               "`grpodyn.MeanFieldMap` gives the poles."),
        ("code", "import grpodyn\nrefresh = lag_steps.value if lag.value == 'refresh' else 1\n"
                 "staleness = lag_steps.value if lag.value == 'staleness' else 0\n"
                 "prediction = grpodyn.predict(lr=lr.value, momentum=momentum.value, "
                 "kappa=kappa.value,\n"
                 "                             refresh=refresh, staleness=staleness)\n"
                 "system = grpodyn.MeanFieldMap(lr=lr.value, kappa=kappa.value, "
                 "momentum=momentum.value,\n"
                 "                              refresh=refresh, staleness=staleness)\n"
                 "print(prediction.regime, state['regime'], system.spectral_radius, "
                 "state['spectral_radius'])"),
        ("md", "The same panels without widgets, at the sliders' values (what a rendered page "
               "of this notebook shows; `python -m grpodyn.numerics.explorer OUT` writes them "
               "for one point per regime)."),
        ("code", "explorer_figure(lr=lr.value, momentum=momentum.value, kappa=kappa.value, "
                 "refresh=refresh,\n                staleness=staleness);"),
    ],
}


def main() -> None:
    """Write every notebook of ``NOTEBOOKS`` next to this file."""
    for name, cells in NOTEBOOKS.items():
        notebook = new_notebook(cells=[new_markdown_cell(src) if kind == "md"
                                       else new_code_cell(src) for kind, src in cells])
        for i, cell in enumerate(notebook.cells):  # stable ids: a rewrite changes no id
            cell.id = f"cell-{i:02d}"
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                           "language": "python"}
        nbformat.write(notebook, HERE / name)
        print(HERE / name)


if __name__ == "__main__":
    main()
