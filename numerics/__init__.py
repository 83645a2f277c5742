"""grpodyn.numerics: the theory compiled to fast numeric functions."""
