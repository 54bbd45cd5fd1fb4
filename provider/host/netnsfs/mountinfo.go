package netnsfs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// mount is a mount of the calling process's mount namespace, from its
// line of /proc/self/mountinfo (proc(5)).
type mount struct {
	id, parent uint64 // mount ID and the parent mount's
	point      string // mount point, unescaped
	fstype     string // file system type ("nsfs" for a bound namespace)
}

// boundUnder returns the mounts of the calling process's mount
// namespace whose mount point is in the directory dir.
func boundUnder(dir string) ([]mount, error) {
	all, err := readMounts()
	if err != nil {
		return nil, err
	}
	var out []mount
	for _, m := range all {
		if strings.HasPrefix(m.point, dir+"/") {
			out = append(out, m)
		}
	}
	return out, nil
}

// readMounts returns the mounts of the calling process's mount namespace.
func readMounts() ([]mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m, err := parseMount(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("/proc/self/mountinfo: %w", err)
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// parseMount reads one line of mountinfo: "ID PARENT MAJ:MIN ROOT POINT
// OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS".
func parseMount(line string) (mount, error) {
	f := strings.Fields(line)
	sep := -1
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			sep = i
			break
		}
	}
	if len(f) < 5 || sep < 0 || sep+1 >= len(f) {
		return mount{}, fmt.Errorf("malformed line %q", line)
	}
	id, err1 := strconv.ParseUint(f[0], 10, 64)
	parent, err2 := strconv.ParseUint(f[1], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return mount{}, fmt.Errorf("line %q: %w", line, err)
	}
	return mount{id: id, parent: parent, point: unescapeOctal(f[4]), fstype: f[sep+1]}, nil
}

// unescapeOctal undoes mountinfo's escapes of space, tab, newline and
// backslash (\040, \011, \012, \134).
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountID returns the ID of the mount path is on: the topmost mount at
// path when it is a mount point.
func mountID(path string) (uint64, error) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &st); err != nil {
		return 0, fmt.Errorf("statx %s: %w", path, err)
	}
	if st.Mask&unix.STATX_MNT_ID == 0 {
		return 0, fmt.Errorf("statx %s: the kernel gave no mount ID (before Linux 5.8)", path)
	}
	return st.Mnt_id, nil
}
