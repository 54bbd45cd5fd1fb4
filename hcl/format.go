package hcl

import (
	"bytes"
	"os"
	"path/filepath"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"

	"github.com/tsolab/tsolab/sudouser"
)

// Format returns src in canonical form (hclwrite): aligned equals signs,
// two-space indentation, one space around operators. It leaves the
// meaning and the comments alone. Source that does not parse is returned
// as hclwrite formats its tokens; FormatDir refuses it instead.
func Format(src []byte) []byte {
	return hclwrite.Format(src)
}

// FormatDir formats every *.tsolab.hcl file of dir and returns the files
// that were not canonical, in name order. With write it rewrites them in
// place (keeping their permissions); without, it only reports. A file that
// does not parse is left alone and reported as a diagnostic.
func FormatDir(dir string, write bool) (changed []string, diags hclv2.Diagnostics) {
	entries, diags := labEntries(dir)
	if diags.HasErrors() {
		return nil, diags
	}
	var names []string
	for _, e := range entries {
		// A link is left alone: the atomic write would replace it with a
		// file.
		if e.Type().IsRegular() {
			names = append(names, filepath.Join(dir, e.Name()))
		}
	}
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Cannot read a lab file", Detail: err.Error()})
			continue
		}
		if _, d := hclsyntax.ParseConfig(src, name, hclv2.InitialPos); d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		out := Format(src)
		if bytes.Equal(out, src) {
			continue
		}
		changed = append(changed, name)
		if !write {
			continue
		}
		if err := writeFileAtomic(name, out); err != nil {
			diags = append(diags, &hclv2.Diagnostic{
				Severity: hclv2.DiagError,
				Summary:  "Cannot write a lab file",
				Detail:   err.Error() + ": check that the lab directory is writable.",
			})
		}
	}
	return changed, diags
}

// writeFileAtomic replaces name with data through a temporary file in the
// same directory, so an interrupted fmt never leaves half a file.
func writeFileAtomic(name string, data []byte) error {
	st, err := os.Stat(name)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(st.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := sudouser.GiveFile(tmp.Name()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
