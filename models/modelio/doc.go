// Package modelio reads and writes what the model commands exchange, so
// that package models can stay pure math:
//
//   - model files (JSON): the DVFS power model and the completion-time
//     model of Srinivasan and Bellur (2014), written by "fit" and read by "predict";
//   - measurement tables (CSV with a header row, columns in any order):
//     (cpu, f, watts) samples to fit the power model, (config, time, power)
//     points for the Pareto frontier;
//   - per-state power files (YAML or JSON) for Yang et al.'s (2014) model;
//   - the JSON answers of the predict and energy-speedup commands.
//
// Errors name the file, and the line for a bad table row ("FILE:LINE: bad
// time"), as the parsers do.
package modelio
