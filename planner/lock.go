package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tsolab/tsolab/sudouser"
)

// Lock is an exclusive, advisory lock on a lab's state (flock on
// .tsolab/lock). The kernel releases it when the process dies, so a
// killed apply never leaves a stale lock behind.
type Lock struct {
	f *os.File
}

// LockInfo is who holds a lock, as its holder wrote it in the lock file.
type LockInfo struct {
	PID     int       `json:"pid"`
	Command string    `json:"command"` // the holder's command line
	Host    string    `json:"host"`
	Since   time.Time `json:"since"` // when it took the lock
}

// LockError says another process holds the lock.
type LockError struct {
	Lab  string
	Path string // the lock file
	// Info is what the holder wrote; its PID is 0 when the holder had not
	// written it yet (it took the lock a moment ago).
	Info LockInfo
	// Now is when the lock was found held, to say for how long.
	Now time.Time
}

func (e *LockError) Error() string {
	if e.Info.PID == 0 {
		return fmt.Sprintf("another tsolab holds the lock on lab %q (%s); it took it a moment ago and has not yet said who it is. Wait for it to finish and run the command again.",
			e.Lab, e.Path)
	}
	who := fmt.Sprintf("pid %d", e.Info.PID)
	if e.Info.Command != "" {
		who += fmt.Sprintf(" (%s)", e.Info.Command)
	}
	if e.Info.Host != "" {
		who += " on " + e.Info.Host
	}
	if !e.Info.Since.IsZero() {
		who += fmt.Sprintf(", since %s (%s ago)", e.Info.Since.UTC().Format(time.RFC3339),
			e.Now.Sub(e.Info.Since).Round(time.Second))
	}
	return fmt.Sprintf("another tsolab holds the lock on lab %q (%s): %s. Wait for it to finish and run the command again, or stop it (kill %d): the lock is released when that process exits, so there is nothing to remove by hand.",
		e.Lab, e.Path, who, e.Info.PID)
}

// LockState takes the lock of the lab in dir without waiting; lab names
// the lab in the error when another process holds it. The lock file then
// says who holds it (LockInfo).
func LockState(dir, lab string) (*Lock, error) {
	sdir, err := makeStateDir(dir)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(sdir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := sudouser.Give(dir, f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := os.ReadFile(f.Name())
			return nil, &LockError{Lab: lab, Path: f.Name(), Info: parseLockInfo(b), Now: time.Now()}
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	host, _ := os.Hostname()
	args := append([]string{filepath.Base(os.Args[0])}, os.Args[1:]...)
	b, _ := json.Marshal(LockInfo{PID: os.Getpid(), Command: strings.Join(args, " "), Host: host, Since: time.Now().UTC().Truncate(time.Second)})
	if err := f.Truncate(0); err == nil {
		f.WriteAt(append(b, '\n'), 0)
	}
	return &Lock{f: f}, nil
}

// parseLockInfo reads a lock file: LockInfo as JSON, or a bare pid (what
// tsolab wrote before it said more).
func parseLockInfo(b []byte) LockInfo {
	var info LockInfo
	if json.Unmarshal(b, &info) == nil {
		return info
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return LockInfo{PID: pid}
}

// Unlock releases the lock. The lock file stays: removing it would let a
// process that opened the old file and one that creates a new one both
// believe they hold the lock.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	l.f.Truncate(0)
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
