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
//
// default.pgo is the CPU profile `go build` and `go install` optimize the
// command with (profile-guided optimization, -pgo=auto): the model's
// loop as `tsolab test -engine sim` runs every example, which takes
// 8-9% less CPU built with it (docs/engine.md, Speed). Made again after
// the model's hot code changes, from the module root:
//
//	go build -o /tmp/tsolab ./cmd/tsolab
//	for d in examples/*/; do TSOLAB_CPUPROFILE=/tmp/pgo-$(basename $d).pprof /tmp/tsolab test -engine sim $d >/dev/null; done
//	go tool pprof -proto /tmp/pgo-*.pprof > cmd/tsolab/default.pgo
package main
