package planner

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
)

// TestStateGoesToSudoUser: run as root through sudo (SUDO_UID and
// SUDO_GID set) in a lab directory the invoking user owns, the state
// directory and every file tsolab writes in it are that user's; in a lab
// directory root owns, or without sudo's variables, they stay root's.
func TestStateGoesToSudoUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: giving files to another user needs CAP_CHOWN")
	}
	const user = 64123 // no user of this machine needs to have it
	for _, tc := range []struct {
		name     string
		sudo     bool // SUDO_UID and SUDO_GID set to user
		dirOwner int
		want     int // owner of .tsolab and its files
	}{
		{"sudo, the user's lab", true, user, user},
		{"sudo, root's lab", true, 0, 0},
		{"no sudo, the user's lab", false, user, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Chown(dir, tc.dirOwner, tc.dirOwner); err != nil {
				t.Fatal(err)
			}
			id := ""
			if tc.sudo {
				id = strconv.Itoa(user)
			}
			t.Setenv("SUDO_UID", id)
			t.Setenv("SUDO_GID", id)
			lock, err := LockState(dir, "owner")
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Unlock()
			s := &State{Lab: "owner", Lineage: NewLineage()}
			for range 2 { // the second write makes the backup
				if err := backupState(dir); err != nil {
					t.Fatal(err)
				}
				if err := writeState(dir, s); err != nil {
					t.Fatal(err)
				}
			}
			sdir := filepath.Join(dir, StateDir)
			for _, p := range []string{sdir, filepath.Join(sdir, "lock"), StatePath(dir), BackupPath(dir)} {
				var st syscall.Stat_t
				if err := syscall.Lstat(p, &st); err != nil {
					t.Fatal(err)
				}
				if int(st.Uid) != tc.want || int(st.Gid) != tc.want {
					t.Errorf("%s: owner %d:%d, want %d:%d", p, st.Uid, st.Gid, tc.want, tc.want)
				}
			}
		})
	}
}
