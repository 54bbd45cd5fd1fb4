package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	ctyjson "github.com/zclconf/go-cty/cty/json"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provenance"
	"github.com/tsolab/tsolab/result"
)

// labProvenance is where this command's results come from: this tsolab,
// the lab's files, git commit and variables, this machine. The engines add
// what each run ran on.
func labProvenance(lab *config.Lab, dir string) *result.Provenance {
	vars := map[string]string{}
	for _, v := range lab.Variables {
		if b, err := ctyjson.Marshal(v.Value, v.Value.Type()); err == nil {
			vars[v.Name] = string(b)
		}
	}
	// Files by their name in the lab directory, so that two copies of a
	// lab hash alike.
	files := map[string][]byte{}
	for name, b := range lab.Sources {
		if rel, err := filepath.Rel(dir, name); err == nil && !strings.HasPrefix(rel, "..") {
			name = filepath.ToSlash(rel)
		}
		files[name] = b
	}
	return provenance.New(lab.Name, dir, files, vars)
}

// writeProvenance writes the provenance's summary lines, the first lines
// of the results' text summary.
func writeProvenance(w io.Writer, p *result.Provenance) {
	for _, l := range p.Summary() {
		fmt.Fprintln(w, l)
	}
}

// writeSides says where each workload's sides ran, when one ran on
// another machine than this one (result.Results.Sides).
func writeSides(w io.Writer, r *result.Results) {
	if s := r.Sides(); s != "" {
		fmt.Fprintln(w, "sides: "+s)
	}
}
