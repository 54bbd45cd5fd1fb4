package hcl

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/tsolab/tsolab/config"
)

// FileSuffix is how lab files end; every such file in a lab directory is
// part of the lab.
const FileSuffix = ".tsolab.hcl"

// EnvPrefix starts the environment variables that set lab variables:
// TSOLAB_VAR_mtu=9000 sets var.mtu.
const EnvPrefix = "TSOLAB_VAR_"

// Options are the inputs of a lab besides its files. Variables take the
// last value of: their default, Env, VarFiles (in order), Vars.
type Options struct {
	// Vars are -var name=value settings. A value is read as an HCL
	// expression (9000, true, ["a", "b"]) unless the variable's type is
	// string or not declared, when it is taken as written.
	Vars map[string]string
	// VarFiles are HCL files of `name = value` lines (-var-file).
	VarFiles []string
	// Env is the process environment (os.Environ()); TSOLAB_VAR_name=value
	// entries set variables, read like Vars.
	Env []string
	// Name, when set (-name), replaces the lab block's name, which names
	// everything the lab creates (tsl.NAME.HOST): two copies of one lab,
	// say two CI jobs on one runner, can then live side by side.
	Name string
}

// Load reads every *.tsolab.hcl file of dir, in name order, and returns
// the lab with every matrix cell evaluated into a Scenario.
//
// When the diagnostics hold errors the lab is incomplete and must not be
// used, except for Sources, which holds every file read (lab files and
// variable files) so the diagnostics can be shown with their snippets.
func Load(dir string, opts Options) (*config.Lab, hclv2.Diagnostics) {
	files, diags := readLabDir(dir)
	if diags.HasErrors() {
		return &config.Lab{Dir: dir, Sources: map[string][]byte{}}, diags
	}
	return load(dir, files, opts)
}

// LabFiles reads the lab files of dir as Load does, without parsing
// them: each *.tsolab.hcl file's bytes by the name Load gives it in
// Sources (dir joined with the file's name).
func LabFiles(dir string) (map[string][]byte, hclv2.Diagnostics) {
	files, diags := readLabDir(dir)
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		out[f.name] = f.src
	}
	return out, diags
}

// sourceFile is one lab file: its name as diagnostics show it, and bytes.
type sourceFile struct {
	name string
	src  []byte
}

func readLabDir(dir string) ([]sourceFile, hclv2.Diagnostics) {
	entries, diags := labEntries(dir)
	if diags.HasErrors() {
		return nil, diags
	}
	var files []sourceFile
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		src, err := os.ReadFile(name)
		if err != nil {
			diags = append(diags, &hclv2.Diagnostic{
				Severity: hclv2.DiagError,
				Summary:  "Cannot read a lab file",
				Detail:   err.Error() + ": make the file readable or move it out of the lab directory.",
			})
			continue
		}
		files = append(files, sourceFile{name: name, src: src})
	}
	if len(files) == 0 && !diags.HasErrors() {
		diags = append(diags, &hclv2.Diagnostic{
			Severity: hclv2.DiagError,
			Summary:  "No lab files",
			Detail:   noLabFiles(dir),
		})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].name < files[j].name })
	return files, diags
}

// noLabFiles says that dir holds no lab files and what to do: give one of
// the labs in its subdirectories (tsolab validate examples), or create one.
func noLabFiles(dir string) string {
	found, _ := filepath.Glob(filepath.Join(dir, "*", "*"+FileSuffix))
	var labs []string
	for _, f := range found {
		if d := filepath.Dir(f); !slices.Contains(labs, d) {
			labs = append(labs, d)
		}
	}
	if len(labs) > 0 {
		return dir + " holds no *" + FileSuffix + " files, but its subdirectories are labs: give one of " + strings.Join(labs, ", ") + "."
	}
	if others, _ := filepath.Glob(filepath.Join(dir, "*.hcl")); len(others) > 0 {
		return dir + " holds no *" + FileSuffix + " files; tsolab reads only those, not " + filepath.Base(others[0]) +
			": rename it to " + strings.TrimSuffix(filepath.Base(others[0]), ".hcl") + FileSuffix + "."
	}
	return dir + " holds no *" + FileSuffix + " files. A lab is a directory of them: create " + filepath.Join(dir, "lab"+FileSuffix) + ` starting with lab "NAME" {}.`
}

// labEntries lists the lab files of dir (isLabFile, not a directory),
// in name order, or says that dir cannot be read.
func labEntries(dir string) ([]os.DirEntry, hclv2.Diagnostics) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, hclv2.Diagnostics{{
			Severity: hclv2.DiagError,
			Summary:  "Cannot read the lab directory",
			Detail:   err.Error() + ": give the path of a directory holding *" + FileSuffix + " files.",
		}}
	}
	var out []os.DirEntry
	for _, e := range entries {
		if isLabFile(e.Name()) && !e.IsDir() {
			out = append(out, e)
		}
	}
	return out, nil
}

// isLabFile is true for *.tsolab.hcl files, leaving out editor leftovers
// (hidden files, emacs lock files).
func isLabFile(name string) bool {
	return strings.HasSuffix(name, FileSuffix) && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "#")
}

// loader holds the state of one Load.
type loader struct {
	dir   string
	opts  Options
	lab   *config.Lab
	diags diagSet

	// Declared blocks: unique ones (lab, matrix) by kind, named ones by
	// address ("nic.tx0") and, in declaration order, by kind.
	unique map[string]*block
	byAddr map[string]*block
	// dropped holds the blocks dropped for a mistake reported at them
	// (an invalid name, a misspelt block type), by the address they
	// were meant to have: a reference to one says so.
	dropped map[string]droppedBlock
	// waiting counts the references to dropped blocks whose error
	// already covers them: each leaves its attribute unusable without
	// an error of its own.
	waiting int
	blocks  map[string][]*block
	// seen holds every block type written, well-formed or not.
	seen map[string]bool
	// refsList is every reference between blocks, the edges of the
	// dependency graph, in source order.
	refsList []ref

	// vars are the variables' final values; a variable whose value is in
	// error is cty.DynamicVal, so expressions reading it are skipped.
	vars map[string]cty.Value
	// refs maps each referenceable kind to the object of its names
	// (host.tx evaluates to {name = "tx"}).
	refs map[string]cty.Value
	// matrixBroken is set when an axis failed: no cell can be evaluated.
	matrixBroken bool
	// engineMetrics are the metrics read that only some engines report,
	// checked against the lab's engine once it is known.
	engineMetrics []metricRef
}

func load(dir string, files []sourceFile, opts Options) (*config.Lab, hclv2.Diagnostics) {
	l := &loader{
		dir:     dir,
		opts:    opts,
		lab:     &config.Lab{Dir: dir, Sources: map[string][]byte{}},
		unique:  map[string]*block{},
		byAddr:  map[string]*block{},
		dropped: map[string]droppedBlock{},
		blocks:  map[string][]*block{},
		seen:    map[string]bool{},
		vars:    map[string]cty.Value{},
	}
	var bodies []*hclsyntax.Body
	for _, f := range files {
		l.lab.Sources[f.name] = f.src
		file, diags := hclsyntax.ParseConfig(f.src, f.name, hclv2.InitialPos)
		l.diags.addAll(diags)
		if file != nil {
			bodies = append(bodies, file.Body.(*hclsyntax.Body))
		}
	}
	// A file that does not parse leaves a partial body behind: checking
	// it would report attributes as missing that are only cut off.
	if l.diags.hasErrors() {
		return l.lab, l.diags.sorted()
	}
	for _, body := range bodies {
		l.declare(body)
	}
	l.checkLabPresent(files)
	l.checkExpressions()
	l.checkCycles()
	l.loadVariables()
	l.loadLab()
	l.checkEngineMetrics()
	l.buildRefs()
	l.loadMatrix()
	l.loadExpects()
	l.loadScenarios()
	l.loadObserved()
	l.loadCalibrations()
	return l.lab, l.diags.sorted()
}

func (l *loader) checkLabPresent(files []sourceFile) {
	if l.seen[kindLab] {
		return
	}
	if l.misspelt(kindLab) {
		return // written with a misspelt type, reported there
	}
	start := hclv2.Range{Filename: files[0].name, Start: hclv2.InitialPos, End: hclv2.InitialPos}
	l.errorf(start, "Missing lab block",
		`Every lab declares itself once with a lab block: add lab "NAME" { engine = "kernel" } to one of its files.`)
}
