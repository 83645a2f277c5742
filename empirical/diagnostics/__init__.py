"""Diagnosis of failure modes, and the labelled test beds that score it.

:mod:`.diagnose` names the failure mode of a run (:func:`~.diagnose.diagnose`) from the detectors
of :mod:`.hacking`, :mod:`.modes` and :mod:`.instability`, the state of :mod:`.state` and the
headline of :mod:`.text`; :mod:`.early_warning` looks for the precursors of a collapse;
:mod:`.testbed`
builds labelled runs with each mode induced on purpose (bandit, prompt pool via
:mod:`.prompt_pool_sim`, tiny TRL runs); :mod:`.public_outcomes` labels public logs from their
documented outcomes; :mod:`.source_matrix` scores the diagnosis on every source.
"""
