"""Training logs in, analyses out.

:mod:`.loaders` reads a log of any supported format into a :class:`~.loaders.Run` (the format
readers are :mod:`.records`, :mod:`.tables`, :mod:`.text`, :mod:`.tensorboard_events`,
:mod:`.pickled`; metric names in :mod:`.aliases`, hyperparameters in :mod:`.meta`, :mod:`.infer`
and :mod:`.config`); :mod:`.run_analysis` turns a run into a
:class:`~.run_analysis.RunAnalysis` (fits, forecast, dynamics, diagnosis) with its figure in
:mod:`.run_figure`; :mod:`.sweep` fits the theory across the runs of a hyperparameter sweep
(:mod:`.sweep_runs`, :mod:`.sweep_model`, :mod:`.sweep_fit`) and transfers it to a new setting
(:mod:`.sweep_transfer`).
"""
