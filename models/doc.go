// Package models holds the power, time and energy models of the energy
// seeds, as pure functions with no I/O:
//
//   - Srinivasan and Bellur (2014) (DVFS power, eq. 6–10): TPower(cpu, f) = P0 − α·(fmax−f)/fmax
//   - (A·f/fmax + B)·cpu, built from six measured inputs (eq. 7–9) or by
//     least squares from many (cpu, f, P) measurements; the completion-time
//     model (eq. 14–18) from seven inputs; Error% (eq. 10);
//   - Yang et al. (2014) (§3.2–3.4): E = Σ_nodes [P_idle·T + (P_app−P_idle)·T_app +
//     (P_storage−P_idle)·T_storage + (P_net−P_idle)·T_net], with the per-state
//     powers given or fitted by least squares from measured energy against
//     state occupancy; inaccuracy |1 − E_pred/E_actual|; energy-delay product;
//   - Anger (2016) (ch. 4): energy speedup from time speedup and idle fraction
//     (eq. 5–6) and the Pareto frontier of (configuration, time, power) points.
package models
