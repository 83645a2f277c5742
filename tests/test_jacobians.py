"""Analytic Jacobians of the fit models (sympy derivatives) against finite differences."""

from __future__ import annotations

import numpy as np
import pytest

from grpodyn.numerics.compiled import compiled, signature
from grpodyn.theory.jacobians import FIT_PARAMETERS

#: a point inside every model's domain, per model
POINT = {"saturation_law": {"r0": 0.2, "r_star": 0.85, "tau": 60.0},
         "trajectory": {"e0": -0.6, "v0": 0.01, "zeta": 1.8, "omega0": 0.05},
         "trajectory_underdamped": {"e0": -0.6, "v0": 0.01, "zeta": 0.4, "omega0": 0.05},
         "trajectory_critical": {"e0": -0.6, "v0": 0.01, "omega0": 0.05},
         "sigmoid_law": {"r0": 0.2, "r_star": 0.85, "t_mid": 120.0, "width": 30.0},
         "power_law": {"r0": 0.2, "r_star": 0.85, "t_mid": 80.0, "exponent": 1.3}}


@pytest.mark.parametrize("model", sorted(FIT_PARAMETERS))
def test_every_column_equals_central_differences(model):
    # the power law's d/d exponent is (t/t_mid)^b log(t/t_mid): 0 * log 0 at t = 0, so it is
    # declared for t > 0 and refuses t = 0 (the fit differences U there, tested in test_fit.py)
    t = np.linspace(1.0 if model == "power_law" else 0.0, 300.0, 301)
    names = signature(model)
    for parameter in FIT_PARAMETERS[model]:
        assert signature(f"{model}_d_{parameter}") == names
        values = {"t": t, **POINT[model]}
        analytic = compiled(f"{model}_d_{parameter}")(*(values[n] for n in names))
        h = 1e-6 * max(abs(values[parameter]), 1e-3)  # relative step
        up = {**values, parameter: values[parameter] + h}
        down = {**values, parameter: values[parameter] - h}
        numeric = (compiled(model)(*(up[n] for n in names))
                   - compiled(model)(*(down[n] for n in names))) / (2 * h)
        analytic = np.broadcast_to(analytic, t.shape)
        # central differences err by ~h^2 f'' + eps f / h: judged against the column's scale
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6,
                                   atol=1e-7 * np.abs(analytic).max(),
                                   err_msg=f"{model} / {parameter}")


def test_jacobian_refuses_outside_the_model_domain():
    with pytest.raises(ValueError, match="trajectory_d_zeta: defined only where"):
        compiled("trajectory_d_zeta")(np.arange(5.0), -0.6, 0.0, 0.5, 0.05)
    with pytest.raises(ValueError, match="power_law_d_exponent: defined only where t > 0"):
        compiled("power_law_d_exponent")(np.arange(5.0), 0.2, 0.8, 40.0, 1.3)
