package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestManPageIsCurrent: docs/tsolab.1 is what tsolab man prints, so the
// manual says what the commands' help says. A change to a command or a
// flag is followed by: go run ./cmd/tsolab man > docs/tsolab.1
func TestManPageIsCurrent(t *testing.T) {
	var out, errs bytes.Buffer
	c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &errs, env: os.Environ()}
	if code := c.main([]string{"man"}); code != exitOK {
		t.Fatalf("tsolab man: exit %d\n%s", code, errs.String())
	}
	const file = "../../docs/tsolab.1"
	if os.Getenv("UPDATE_SCRIPTS") == "1" {
		if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, out.Bytes()) {
		t.Errorf("docs/tsolab.1 differs from what tsolab man prints (a command or a flag changed): run\n\tgo run ./cmd/tsolab man > docs/tsolab.1")
	}
	// Every command has its section, every flag its entry.
	for _, mc := range c.commandHelps() {
		if !strings.Contains(out.String(), ".SS "+roff(mc.name)+"\n") {
			t.Errorf("no section for command %s", mc.name)
		}
		for _, f := range mc.flags {
			if f.usage == "" {
				t.Errorf("%s -%s: no help text read", mc.name, f.name)
			}
		}
	}
}
