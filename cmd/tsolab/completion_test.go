package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/tsolab/tsolab/provider/host/netnsfs/netnstest"
)

// completionScript writes `tsolab completion SHELL` to a file.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
	if code := c.main([]string{"completion", shell}); code != exitOK {
		t.Fatalf("tsolab completion %s: exit %d: %s", shell, code, errb.String())
	}
	path := filepath.Join(t.TempDir(), "tsolab."+shell)
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// completionDir is a directory with a lab directory and a results file,
// for file and directory completion.
func completionDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "lab1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: cannot run the bash completion")
	}
	script := completionScript(t, "bash")
	dir := completionDir(t)
	tests := []struct {
		line string // the command line; the last word is completed
		want []string
	}{
		{"tsolab te", []string{"test"}},
		{"tsolab re", []string{"report"}},
		{"tsolab co", []string{"completion"}},
		{"tsolab completion ", []string{"bash", "zsh", "fish"}},
		{"tsolab test -ke", []string{"-keep"}},
		{"tsolab run -ke", nil},
		{"tsolab test -engine ", []string{"kernel", "sim", "kernel,sim"}},
		{"tsolab report -", []string{"-baseline", "-lab", "-name", "-o", "-strict", "-var", "-var-file"}},
		{"tsolab test -rep", []string{"-repeat", "-report"}},
		{"tsolab test -report r", []string{"run.json"}},
		{"tsolab report -lab l", []string{"lab1"}},
		{"tsolab report r", []string{"run.json"}},
		{"tsolab plan l", []string{"lab1"}},
		{"tsolab plan r", nil},
		{"tsolab test -repeat ", nil},
		{"tsolab test -name r", nil},
		{"tsolab test -confidence r", nil},
		{"tsolab plan -name ", nil},
		{"tsolab test -var-file r", []string{"run.json"}},
		{"tsolab st", []string{"state"}},
		{"tsolab state ", []string{"list", "show", "rm"}},
		{"tsolab state r", []string{"rm"}},
		{"tsolab state list l", []string{"lab1"}},
		{"tsolab state rm -", []string{"-json"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			words := strings.Split(tt.line, " ")
			var quoted []string
			for _, w := range words {
				quoted = append(quoted, "'"+w+"'")
			}
			prog := "source " + script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\n" +
				"COMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_tsolab\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
			cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			got := strings.Fields(string(out))
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("completing %q (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

// requireShell returns the path of shell, or skips t when it is not
// installed (fails it under TSOLAB_REQUIRE_NETNS=1: .ci/run installs fish
// and zsh, so CI never skips a completion).
func requireShell(t *testing.T, shell string) string {
	t.Helper()
	p, err := exec.LookPath(shell)
	if err == nil {
		return p
	}
	reason := fmt.Sprintf("%s is not installed (apt-get install %s): cannot check the %s completion", shell, shell, shell)
	if os.Getenv(netnstest.RequireEnv) == "1" {
		t.Fatalf("%s=1 but %s", netnstest.RequireEnv, reason)
	}
	t.Skip(reason)
	return ""
}

func TestCompletionFish(t *testing.T) {
	fish := requireShell(t, "fish")
	script := completionScript(t, "fish")
	dir := completionDir(t)
	tests := []struct {
		line string
		want []string // completions, without their descriptions
	}{
		{"tsolab te", []string{"test"}},
		{"tsolab completion ", []string{"bash", "fish", "zsh"}},
		{"tsolab test -ke", []string{"-keep"}},
		{"tsolab test -engine ", []string{"kernel", "kernel,sim", "sim"}},
		{"tsolab report -l", []string{"-lab"}},
		{"tsolab report r", []string{"run.json"}},
		{"tsolab plan l", []string{"lab1/"}},
		{"tsolab test -name r", nil},
		{"tsolab test -confidence r", nil},
		{"tsolab state ", []string{"lab1/", "list", "rm", "show"}},
		{"tsolab state list -", []string{"-json"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			cmd := exec.Command(fish, "--no-config", "-c", "source "+script+"; complete -C '"+tt.line+"'")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("fish: %v\n%s", err, out)
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if l != "" {
					name, _, _ := strings.Cut(l, "\t")
					got = append(got, name)
				}
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("completing %q (-want +got):\n%s", tt.line, diff)
			}
		})
	}
}

func TestCompletionZsh(t *testing.T) {
	zsh := requireShell(t, "zsh")
	script := completionScript(t, "zsh")
	if out, err := exec.Command(zsh, "-n", script).CombinedOutput(); err != nil {
		t.Fatalf("zsh -n: %v\n%s", err, out)
	}
	// Loading it the way compinit does defines the function.
	prog := "autoload -U compinit && compinit -u -D; source " + script + "; whence -w _tsolab"
	out, err := exec.Command(zsh, "-f", "-c", prog).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "_tsolab: function") {
		t.Fatalf("zsh did not define _tsolab: %v\n%s", err, out)
	}
	b, _ := os.ReadFile(script)
	for _, want := range []string{"'report:render a results file", "'-engine[", ":engine:(kernel sim kernel,sim)'", "'-lab[", "'1:shell:(bash zsh fish)'", "'1:subcommand:(list show rm)'"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("zsh script lacks %q", want)
		}
	}
	// -name and -confidence take a value, not a file.
	for _, line := range strings.Split(string(b), "\n") {
		if (strings.Contains(line, "'-name[") || strings.Contains(line, "'-confidence[")) && !strings.HasSuffix(strings.TrimSuffix(line, " \\"), ":value: '") {
			t.Errorf("zsh completes files or nothing for a value: %s", strings.TrimSpace(line))
		}
	}
}

func TestCompletionMistakes(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		var out, errb bytes.Buffer
		c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errb}
		if code := c.main(args); code != exitError {
			t.Errorf("tsolab %v: exit %d, want %d", args, code, exitError)
		}
		if !strings.Contains(errb.String(), "bash, zsh or fish") {
			t.Errorf("tsolab %v: stderr %q does not name the shells", args, errb.String())
		}
	}
}
