"""grpodyn.empirical: the softmax-bandit lab, real runs, measured constants, diagnostics."""
