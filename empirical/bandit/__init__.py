"""The softmax-bandit lab: GRPO on a bandit, where the mean-field reduction is exact.

:mod:`.simulation` simulates GRPO on a softmax bandit (:func:`~.simulation.simulate_bandit`),
:mod:`.lab` runs the experiments that compare it with the compiled theory, and :mod:`.plots`
draws them.
"""
