"""Sample values of every symbol, shared by the tests that evaluate derivations."""

from __future__ import annotations

#: A valid value of every symbol for the numeric comparisons (several points each).
POINTS = [
    {"beta": 0.3, "k": 0.02, "a": 0.01, "kappa": 2.0, "t": 3.5, "e0": -0.4, "v0": 0.05,
     "zeta": 1.7, "omega0": 0.2, "K": 7, "d": 2, "G": 8, "S": 3, "p": 0.3, "eps": 1e-4,
     "s2": 1e-3, "Sigma": 0.5, "B": 4, "h": 3, "omega": 0.7, "z": 0.9, "l_bar": 1.5, "m": 0.7,
     "c": 0.6, "q": 0.9, "tau": 12.0, "r0": 0.1, "r_star": 0.8, "alpha": 0.3, "eta": 1e-3,
     "beta1": 0.9, "v_hat": 4e-4, "g_mean": 0.02, "sigma_g2": 0.3, "n": 3, "T_w": 20.0,
     "e_now": 0.3, "e_prev": 0.25, "e_lag": 0.2, "x": 1.3, "x_ref": -0.4, "x_old": 1.1,
     "a_p": 0.7, "b_p": 1.3, "r1": 0.6, "S_lo": 2, "S_hi": 5, "q_in": 0.8,
     "rho_A": 40.0, "kappa_A": 3.0, "t_mid": 20.0, "width": 8.0, "exponent": 1.3,
     "k_s": 0.5, "k_r": 0.01, "w_s": 0.3, "f_sat": 0.25,
     "sigma_p2": 0.2, "sigma_c2": 1.5, "rho_p": 3.0, "rho_c": 60.0, "h_noise": 2.0,
     "N_p": 12.0, "sigma_r2": 0.1, "w_r": 0.12, "x_r": 0.6},
    {"beta": 0.8, "k": 0.001, "a": 0.3, "kappa": 0.05, "t": 40.0, "e0": 0.6, "v0": 0.0,
     "zeta": 4.0, "omega0": 0.03, "K": 31, "d": 5, "G": 16, "S": 9, "p": 0.7, "eps": 0.0,
     "s2": 0.2, "Sigma": 2.0, "B": 1, "h": 10, "omega": 2.5, "z": -0.5, "l_bar": 15.0, "m": 0.9,
     "c": 0.2, "q": 0.5, "tau": 3.0, "r0": 0.9, "r_star": 0.2, "alpha": -0.1, "eta": 0.1,
     "beta1": 0.5, "v_hat": 1.0, "g_mean": -0.2, "sigma_g2": 0.01, "n": 1, "T_w": 2.0,
     "e_now": -1.0, "e_prev": 2.0, "e_lag": 0.0, "x": -0.6, "x_ref": 0.5, "x_old": 0.0,
     "a_p": 3.0, "b_p": 0.4, "r1": 0.3, "S_lo": 1, "S_hi": 12, "q_in": 0.3,
     "rho_A": 0.5, "kappa_A": 0.2, "t_mid": 5.0, "width": 30.0, "exponent": 0.6,
     "k_s": 3.0, "k_r": 0.001, "w_s": 0.9, "f_sat": 1.5,
     "sigma_p2": 0.0, "sigma_c2": 0.05, "rho_p": 0.0, "rho_c": 0.7, "h_noise": 0.1,
     "N_p": 7.0, "sigma_r2": 0.0, "w_r": 0.2, "x_r": 0.9},
]


#: Derivations valid only on part of the table's ranges: values that put them in their domain.
DOMAIN: dict[str, dict[str, float]] = {"trajectory_underdamped": {"zeta": 0.4},
                                       "discrete_damping_ratio": {"k": 0.5},
                                       **{f"trajectory_underdamped_d_{p}": {"zeta": 0.4}
                                          for p in ("e0", "v0", "zeta", "omega0")}}



def argument_values(name: str, arg_names, point: int) -> list[float]:
    """Values of ``arg_names`` at sample point ``point``, inside the domain of ``name``."""
    values = POINTS[point]
    return [DOMAIN.get(name, {}).get(a, values[a]) for a in arg_names]
