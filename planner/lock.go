package planner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Lock is an exclusive, advisory lock on a lab's state (flock on
// .tsolab/lock). The kernel releases it when the process dies, so a
// killed apply never leaves a stale lock behind.
type Lock struct {
	f *os.File
}

// LockError says another process holds the lock.
type LockError struct {
	Lab string
	PID int // 0 when the holder did not write its pid yet
}

func (e *LockError) Error() string {
	return fmt.Sprintf("another tsolab holds the lock on %s (pid %d)", e.Lab, e.PID)
}

// LockState takes the lock of the lab in dir without waiting; lab names
// the lab in the error when another process holds it.
func LockState(dir, lab string) (*Lock, error) {
	sdir := filepath.Join(dir, StateDir)
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(sdir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := os.ReadFile(f.Name())
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &LockError{Lab: lab, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
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
