"""The deep-network study's scripts: runs, relaxation routes, comparison and figures.

Not installed with the package: run from ``studies/deepnet`` (``python -m deepnet_study STEP``)
or with ``studies/deepnet`` on ``sys.path``. They use the package's instrument,
:mod:`grpodyn.empirical.deepnet` (the GRPO loop, the measurement before training and the
predictions from it). Modules: :mod:`.cli` (the steps, in order), :mod:`.sweeps` (the runs and
the predicted-vs-observed comparison), :mod:`.relaxation` with :mod:`.slow`, :mod:`.burnin` and
:mod:`.linear` (the relaxation routes), :mod:`.stiff` and :mod:`.relay` (the top eigenvector's
displacement and the delayed relay), :mod:`.figures`, :mod:`.paths` (where the files live).
"""
