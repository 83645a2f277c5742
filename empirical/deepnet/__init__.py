"""The deep-network demonstration (issue 16): measure, predict, run, compare on a tiny Llama.

Modules: :mod:`.grpo` (a small GRPO loop with heavy-ball SGD, sample-and-hold refresh, fixed
staleness and TRL-style importance-corrected reuse), :mod:`.measure` (drift, kappa, Hessian
spectrum before training), :mod:`.forecast` (the project's thresholds from the measured
constants), :mod:`.sweeps` (the runs and the predicted-vs-observed comparison), :mod:`.section`
(the ``grpodyn report`` section). ``python -m grpodyn.empirical.deepnet`` is the command line.
"""
