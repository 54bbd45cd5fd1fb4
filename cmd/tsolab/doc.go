// Command tsolab is the CLI: validate, plan, apply, run, test, destroy,
// show, fmt and graph a lab of *.tsolab.hcl files.
//
// It owns argument parsing, wiring the packages together (hcl → planner →
// providers → engine → outcome → views) and exit codes. It holds no
// provisioning, modelling or judging logic of its own.
//
// Each command chooses how it speaks once, as soon as its flags are
// parsed: a view.View for plans and applies (text, or JSON lines with
// -json), and for run and test a testView (humanTest: progress on stderr
// and the results table on stdout; jsonTest: JSON lines on stdout with
// -json -) that every later message goes to.
package main
