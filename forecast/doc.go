// Package forecast forecasts idle capacity over a consumer's horizon, in
// continuous time, from the state changes of a trace (see
// docs/forecasts.md for the definitions and scores).
//
// A forecast issued at trace time t for horizon H and threshold k states p,
// the fraction of [t, t+H) during which at least k selected containers are
// in a class, and mean, the mean fraction of containers in the class over
// [t, t+H), with an interval for p. Every method is strictly causal: it sees
// the changes with time ≤ t and nothing later. The Engine consumes changes
// of the class count in time order (O(1) per change and per threshold
// crossed) and issues forecasts at a regular cadence; memory depends on the
// longest look-back (10 H), not on the trace's length.
//
// Verify scores forecasts against what happened, from the step function of
// the whole trace, with the baselines of the definitions computed
// independently of the Engine.
package forecast
