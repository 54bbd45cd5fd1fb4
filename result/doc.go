// Package result is the vocabulary of a measured run, shared by the
// engines that produce it and everything that reads it: the result types
// (WorkloadResult, Results, Sample, CaptureFile, Observation); the
// provenance records a result carries (Provenance: tool, lab, machine;
// Run: what each run ran on, NICs, sysctls or the model) with their flat
// and human forms (Properties, Summary); the table of metrics (name, unit,
// display scale, workload kinds, the engines that report it, what it
// means); Derive, which computes the derived metrics from an engine's
// counters so both engines give them one meaning; and FormatNumber, the
// one way a measured value is written (tables, verdicts, the report).
//
// The language checks the metrics a condition reads against the table;
// outcome, report and view take units, scales and order from it; the
// metric list of docs/json-format.md is checked against it by a test.
//
// It imports nothing of tsolab's. Package provenance fills the provenance
// records in (reading the binary, the lab's files and git repository, the
// machine) and compares two; the engines fill in each Run.
package result
