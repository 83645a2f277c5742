"""grpodyn.empirical: measurements of real and simulated GRPO runs, in four wings.

- :mod:`~grpodyn.empirical.logs`: training logs in, analyses out (loaders, run analysis, sweeps);
- :mod:`~grpodyn.empirical.bandit`: the softmax-bandit lab (simulator, experiments, figures);
- :mod:`~grpodyn.empirical.tinylm`: real TRL runs of a tiny language model and their scripts;
- :mod:`~grpodyn.empirical.diagnostics`: failure-mode diagnosis and its labelled test beds.

:mod:`~grpodyn.empirical.callback` (the TRL callback) sits beside the wings: it uses the logs
and diagnostics wings live, inside a trainer. The run files ``grpodyn report`` reads ship in
``empirical/data``; the studies' data stay in the repository's ``studies/`` folder, found by
:mod:`~grpodyn.empirical.data_paths`.
"""
