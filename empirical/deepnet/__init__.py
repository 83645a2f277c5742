"""The deep-network instrument: curvature and spectrum measured before training, and predictions.

Modules: :mod:`.grpo` (a small GRPO loop with heavy-ball SGD, sample-and-hold refresh, fixed
staleness and TRL-style importance-corrected reuse; the model the measurement is made on),
:mod:`.measure` (Hessian spectrum by Lanczos, curvature along the update, critical lr, drift
slope, before training), :mod:`.forecast` (the project's thresholds from the measured constants:
lr_max with and without momentum, refresh_max, staleness_max), :mod:`.section` (the ``grpodyn
report`` section: predicted against observed). The runs that tested the predictions, the
relaxation routes and the figures are the study's scripts (``studies/deepnet``, not installed).
Needs the ``trl`` extra (torch) except :mod:`.section`.
"""
