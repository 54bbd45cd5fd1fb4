package netnsfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

// Start starts cmd inside the named network namespace, as `ip netns exec`
// does: the command also gets a mount namespace of its own in which /sys
// is the namespace's sysfs, so /sys/class/net lists its devices, and each
// file in /etc/netns/NAME is bound over its namesake in /etc (a resolv.conf
// or hosts of the namespace's own). The
// thread that forks the command enters both namespaces and is ended
// afterwards (its goroutine exits locked), so no other goroutine ever
// runs there. The caller waits for cmd as usual.
func Start(name string, cmd *exec.Cmd) error {
	target, err := Open(name)
	if err != nil {
		return err
	}
	defer target.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the runtime ends the thread
		errc <- func() error {
			if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
				return fmt.Errorf("unshare the mount namespace: %w", err)
			}
			// What is mounted from here on stays in this namespace.
			if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("make / a slave mount: %w", err)
			}
			if err := unix.Setns(int(target), unix.CLONE_NEWNET); err != nil {
				return fmt.Errorf("setns %s: %w", name, err)
			}
			if err := unix.Unmount("/sys", unix.MNT_DETACH); err != nil && err != unix.EINVAL {
				return fmt.Errorf("unmount /sys: %w", err)
			}
			if err := unix.Mount(name, "/sys", "sysfs", 0, ""); err != nil {
				return fmt.Errorf("mount the namespace's sysfs on /sys: %w", err)
			}
			if err := bindEtc(name); err != nil {
				return err
			}
			return cmd.Start()
		}()
	}()
	return <-errc
}

// EtcDir is where per-namespace files for /etc live, as iproute2 keeps them.
const EtcDir = "/etc/netns"

// bindEtc binds each entry of /etc/netns/NAME over /etc/ENTRY in the
// calling thread's mount namespace, as `ip netns exec` does. No such
// directory is no binding; an entry whose namesake is missing in /etc is
// an error naming both, since the command would run without it.
func bindEtc(name string) error {
	dir := filepath.Join(EtcDir, name)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		src, dst := filepath.Join(dir, e.Name()), filepath.Join("/etc", e.Name())
		if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind %s over %s: %w (create %s first, or remove %s)", src, dst, err, dst, src)
		}
	}
	return nil
}
