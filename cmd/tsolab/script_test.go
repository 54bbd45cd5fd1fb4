package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tsolab": func() {
			c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, env: os.Environ()}
			os.Exit(c.main(os.Args[1:]))
		},
	})
}

// canNetAdmin reports whether this process may create namespaces.
func canNetAdmin() bool {
	if os.Geteuid() != 0 {
		return false
	}
	var hdr = unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[0].Effective&(1<<unix.CAP_NET_ADMIN) != 0
}

// destroyLeftovers destroys every lab under dir that has a state file.
func destroyLeftovers(t *testing.T, dir string) {
	states, _ := filepath.Glob(filepath.Join(dir, "*", ".tsolab", "state.json"))
	for _, st := range states {
		lab := filepath.Dir(filepath.Dir(st))
		var out bytes.Buffer
		c := &cli{stdin: strings.NewReader(""), stdout: &out, stderr: &out, env: os.Environ()}
		if code := c.main([]string{"destroy", "-auto-approve", lab}); code != exitOK {
			t.Errorf("cleanup: tsolab destroy %s: exit %d\n%s", lab, code, out.String())
		}
	}
}

// TestScript runs the end-to-end CLI scripts in testdata/script. Scripts
// that need namespaces carry [!netadmin] skip lines; under
// TSOLAB_REQUIRE_NETNS=1 the test fails instead when they cannot run.
// UPDATE_SCRIPTS=1 rewrites the golden output in the scripts.
func TestScript(t *testing.T) {
	netadmin := canNetAdmin()
	if !netadmin && os.Getenv("TSOLAB_REQUIRE_NETNS") == "1" {
		t.Fatal("TSOLAB_REQUIRE_NETNS=1 but this process lacks CAP_NET_ADMIN: run the tests as root")
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: os.Getenv("UPDATE_SCRIPTS") == "1",
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "netadmin":
				return netadmin, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", wd+"/../../examples")
			// Whatever a script applied is destroyed when it ends, even
			// when it fails half-way.
			env.Defer(func() { destroyLeftovers(t, env.WorkDir) })
			return nil
		},
	})
}
