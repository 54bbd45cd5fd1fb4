package planner

import (
	"os"
	"path/filepath"

	"github.com/tsolab/tsolab/sudouser"
)

// makeStateDir makes the state directory of the lab in dir when it is
// missing, gives it to the user who ran tsolab through sudo when that
// user owns dir (sudouser.Give), and returns its path.
func makeStateDir(dir string) (string, error) {
	sdir := filepath.Join(dir, StateDir)
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return "", err
	}
	return sdir, sudouser.Give(dir, sdir)
}
