"""The deep-network instrument: curvature measured before training, and the lr_max it predicts.

:mod:`.instrument` is what a user calls: :func:`.instrument.measure_curvature` (the top Hessian
eigenvalues of the GRPO objective by Lanczos, before any GRPO step) and
:func:`.instrument.predict_lr_max` (the largest stable lr of heavy-ball SGD from them, the route
the deep-network study's result stands on). Beneath it: :mod:`.grpo` (a small GRPO loop with
heavy-ball SGD, sample-and-hold refresh, fixed staleness and TRL-style importance-corrected
reuse; the model the measurement is made on) and :mod:`.measure` (Hessian-vector products,
Lanczos, the spectrum, the critical lr, the drift slope). :mod:`.section` is the ``grpodyn
report`` section (predicted against observed). The runs that tested the predictions, the other
routes and the figures are the study's scripts (``studies/deepnet``, not installed). Needs the
``trl`` extra (torch) to measure; :mod:`.section` and :func:`.instrument.predict_lr_max` do not.
"""
