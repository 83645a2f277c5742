"""Real GRPO runs (TRL) of a tiny language model; needs the ``trl`` extra to make new runs.

:mod:`.training` builds the model and runs TRL's GRPO; the scripts ``python -m
grpodyn.empirical.tinylm.make_runs`` (:mod:`.make_runs`), ``make_grid`` and ``make_testbed``
make the shipped runs of ``empirical/data``; :mod:`.analysis` summarises them and
:mod:`.curvature_probe` measures their curvature directly.
"""
