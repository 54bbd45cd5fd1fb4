package sudouser

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Owner returns the user and group that ran tsolab through sudo
// (SUDO_UID and SUDO_GID, which sudo sets) when tsolab runs as root, that
// user is not root, and it owns the directory dir; ok is false otherwise.
func Owner(dir string) (uid, gid int, ok bool) {
	if os.Geteuid() != 0 {
		return 0, 0, false
	}
	uid, err1 := strconv.Atoi(os.Getenv("SUDO_UID"))
	gid, err2 := strconv.Atoi(os.Getenv("SUDO_GID"))
	if err1 != nil || err2 != nil || uid <= 0 || gid < 0 || OwnerOf(dir) != uid {
		return 0, 0, false
	}
	return uid, gid, true
}

// OwnerOf is the uid that owns path (-1 when it cannot be told).
func OwnerOf(path string) int {
	fi, err := os.Stat(path)
	if err != nil {
		return -1
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// Give gives paths to the user who ran tsolab through sudo when that
// user owns dir (Owner), and leaves them as they are otherwise. It does
// not follow symbolic links.
func Give(dir string, paths ...string) error {
	uid, gid, ok := Owner(dir)
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

// GiveFile gives path to the user who ran tsolab through sudo when that
// user owns the directory path is in (Give).
func GiveFile(path string) error { return Give(filepath.Dir(path), path) }

// MkdirAll makes the directory path and the parents it lacks, like
// os.MkdirAll, and gives each directory it made to the user who ran
// tsolab through sudo when that user owns the nearest directory that
// already existed above them (Give).
func MkdirAll(path string, perm os.FileMode) error {
	path = filepath.Clean(path)
	var made []string // missing directories, deepest first
	top := path
	for {
		_, err := os.Lstat(top)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		made = append(made, top)
		parent := filepath.Dir(top)
		if parent == top {
			break
		}
		top = parent
	}
	if err := os.MkdirAll(path, perm); err != nil {
		return err
	}
	return Give(top, made...)
}
