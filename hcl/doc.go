// Package hcl reads lab directories: the *.tsolab.hcl language (schema,
// variables, matrix, references, functions), its validation, and its
// diagnostics with file, line, column and a source snippet. It produces a
// config.Lab and never touches the system.
//
// # What it owns
//
//   - Load: every *.tsolab.hcl file of a directory, in name order, parsed
//     with hclsyntax and checked against the schema (schema.go): unknown
//     block types and attributes, labels, duplicate names, names that
//     cannot become namespace or interface names. A block whose type is
//     a misspelling of one (workloads "bulk", matrixx) is one error at
//     its type, "Did you mean workload "bulk"?": the block is left out,
//     and what refers to it (workload.bulk, matrix.tso, scenario({...}),
//     observed blocks' scenarios) or would miss it (reachability, the
//     lab block's presence) is not reported again.
//   - References (references.go): every expression is checked before it
//     is evaluated. host.X, switch.X, nic.X and workload.X name blocks and
//     evaluate to {name = "X"}; var.X and matrix.X read variables and the
//     matrix cell. Each attribute may read only some of these (an
//     expectation's `when` only var and matrix; its `condition` also
//     result, baseline and scenario({...})). A reference to nothing gets a
//     "did you mean" from the declared names.
//   - The dependency graph (graph.go): the references between blocks; a
//     cycle (two NICs naming each other as peer) is reported once, at the
//     reference that closes it.
//   - Variables (variables.go): default < TSOLAB_VAR_name < -var-file <
//     -var, like Terraform. Command-line and environment values are taken
//     as written for string variables and read as HCL otherwise.
//   - Scenarios (scenario.go): the cartesian product of the matrix axes in
//     declaration order, the last varying fastest, named "tso=false,mtu=9000";
//     "default" without a matrix. Every topology and workload block is
//     evaluated once per cell (eval.go, topology.go, workload.go) and the
//     cell is checked as a whole (validate.go): links, peers, addresses per
//     segment, offloads the kernel cannot hold together, workloads whose
//     servers the client cannot reach. A mistake found in several cells is
//     reported once, naming the cells when it is not all of them.
//   - Expectations keep their `when` and `condition` as hcl.Expression:
//     package outcome evaluates them against results.
//   - Format and FormatDir (format.go): canonical layout through hclwrite,
//     for `tsolab fmt`.
//   - LabFiles: the lab files' bytes as Load reads them, unparsed (the
//     CLI hashes them to tell whether a saved plan's lab was edited since).
//   - WriteDiagnostics (diagnostics.go): Terraform's layout, the subject
//     underlined in its source line and the values the expression read.
//
// Every mistake in a lab is a diagnostic whose Subject is where it was
// written and whose Detail says how to fix it; bugs in tsolab panic. When
// Load returns errors, only the lab's Sources are meaningful.
//
// # What it must not touch
//
// The system: no namespaces, links, files other than the lab's and the
// variable files it is given (FormatDir rewrites lab files only when asked
// to). Kernel feature names stay in provider/nic; this package speaks the
// language's names (tso, gso, gro, lro, sg, tx_csum, rx_csum).
package hcl
