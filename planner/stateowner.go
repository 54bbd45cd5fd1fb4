package planner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// makeStateDir makes the state directory of the lab in dir when it is
// missing, gives it to the user who ran tsolab through sudo (sudoOwner),
// and returns its path.
func makeStateDir(dir string) (string, error) {
	sdir := filepath.Join(dir, StateDir)
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return "", err
	}
	return sdir, giveToSudoUser(dir, sdir)
}

// giveToSudoUser gives paths, in the state directory of the lab in dir,
// to the user who ran tsolab through sudo when that user owns dir
// (sudoOwner): after `sudo tsolab apply` in a user's checkout, the user
// can still copy, clean or remove the lab as themselves. Otherwise it
// leaves them as they are (root's under plain root).
func giveToSudoUser(dir string, paths ...string) error {
	uid, gid, ok := sudoOwner(dir)
	if !ok {
		return nil
	}
	for _, p := range paths {
		if err := os.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("give %s to the user who ran sudo (uid %d): %w", p, uid, err)
		}
	}
	return nil
}

// sudoOwner returns the user and group that ran tsolab through sudo
// (SUDO_UID and SUDO_GID, which sudo sets) when tsolab runs as root, that
// user is not root, and it owns the lab directory dir; ok is false
// otherwise.
func sudoOwner(dir string) (uid, gid int, ok bool) {
	if os.Geteuid() != 0 {
		return 0, 0, false
	}
	uid, err1 := strconv.Atoi(os.Getenv("SUDO_UID"))
	gid, err2 := strconv.Atoi(os.Getenv("SUDO_GID"))
	if err1 != nil || err2 != nil || uid <= 0 || gid < 0 || ownerOf(dir) != uid {
		return 0, 0, false
	}
	return uid, gid, true
}
