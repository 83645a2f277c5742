"""Diagnosis of failure modes, and the labelled test beds that score it.

:mod:`.diagnose` names the failure mode of a run (:func:`~.diagnose.diagnose`); :mod:`.testbed`
builds labelled runs with each mode induced on purpose (bandit, prompt pool via
:mod:`.prompt_pool_sim`, tiny TRL runs); :mod:`.public_outcomes` labels public logs from their
documented outcomes; :mod:`.source_matrix` scores the diagnosis on every source.
"""
