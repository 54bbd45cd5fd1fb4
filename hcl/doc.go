// Package hcl reads lab directories: the *.tsolab.hcl language (schema,
// variables, matrix, references, functions), its validation, and its
// diagnostics with file, line, column and a source snippet. It produces a
// config.Lab and never touches the system.
package hcl
