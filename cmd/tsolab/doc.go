// Command tsolab is the CLI: validate, plan, apply, run, test, destroy,
// show, fmt and graph a lab of *.tsolab.hcl files.
//
// It owns argument parsing, wiring the packages together (hcl → planner →
// providers → engine → outcome → views) and exit codes. It holds no
// provisioning, modelling or judging logic of its own.
package main
