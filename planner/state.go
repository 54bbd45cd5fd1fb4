package planner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/sudouser"
)

// StateFormatVersion is the format_version of state files this package
// writes and reads.
const StateFormatVersion = 1

// StateDir is the directory inside a lab directory holding the state and
// its lock.
const StateDir = ".tsolab"

// StatePath returns the state file of the lab in dir.
func StatePath(dir string) string { return filepath.Join(dir, StateDir, "state.json") }

// State records what tsolab made for one lab: the resources as read back
// after the last change to each.
type State struct {
	FormatVersion int `json:"format_version"`
	// Serial is incremented by every write of the state file.
	Serial uint64 `json:"serial"`
	// Lineage is a random identifier chosen when the state is first
	// written; a state with another lineage is a different history.
	Lineage string `json:"lineage"`
	// Lab is the name of the lab whose naming made the resources.
	Lab string `json:"lab"`
	// Scenario is the name of the scenario last applied ("" after destroy).
	Scenario string `json:"scenario"`
	// Machines records how to reach the other machines its resources
	// live on (provider.AttrMachine names one), as their machine blocks
	// said when last applied: destroy, and a plan of a lab that no longer
	// declares the machine, reach it from the state alone. A machine no
	// record names any more is dropped. No secret is ever recorded.
	Machines  map[string]config.Reach `json:"machines,omitempty"`
	Resources []ResourceState         `json:"resources"`
}

// Status says whether a recorded resource is known to be complete.
type Status string

const (
	// StatusReady: the last change to the resource succeeded.
	StatusReady Status = "ready"
	// StatusCreating: recorded before Create was called and not (yet)
	// confirmed. A refresh reads it like any other resource; the next
	// apply completes it and destroy deletes it, so an apply killed during
	// Create leaves nothing behind that tsolab does not know about.
	StatusCreating Status = "creating"
)

func (s Status) String() string { return string(s) }

// ResourceState is one recorded resource.
type ResourceState struct {
	Addr   provider.Addr `json:"addr"`
	Status Status        `json:"status"`
	// Attrs are the attributes as read back after the last change, or the
	// desired ones for a resource still being created.
	Attrs provider.Attrs `json:"attrs"`
	// DependsOn are the resources it was created after, and must be
	// deleted before.
	DependsOn []provider.Addr `json:"depends_on"`
}

// Resource returns the recorded resource at addr, or nil.
func (s *State) Resource(addr provider.Addr) *ResourceState {
	if s == nil {
		return nil
	}
	for i := range s.Resources {
		if s.Resources[i].Addr == addr {
			return &s.Resources[i]
		}
	}
	return nil
}

// Clone deep-copies s; nil stays nil.
func (s *State) Clone() *State {
	if s == nil {
		return nil
	}
	c := *s
	c.Machines = cloneReaches(s.Machines)
	c.Resources = make([]ResourceState, len(s.Resources))
	for i, r := range s.Resources {
		c.Resources[i] = ResourceState{
			Addr:      r.Addr,
			Status:    r.Status,
			Attrs:     r.Attrs.Clone(),
			DependsOn: append([]provider.Addr(nil), r.DependsOn...),
		}
	}
	return &c
}

// set records r, replacing any earlier record of the same address.
func (s *State) set(r ResourceState) {
	for i := range s.Resources {
		if s.Resources[i].Addr == r.Addr {
			s.Resources[i] = r
			return
		}
	}
	s.Resources = append(s.Resources, r)
}

// remove drops the record of addr, and returns the machine it was on
// ("" for this one, or when there was no record).
func (s *State) remove(addr provider.Addr) (machine string) {
	for i := range s.Resources {
		if s.Resources[i].Addr == addr {
			m := s.Resources[i].Attrs[provider.AttrMachine]
			s.Resources = append(s.Resources[:i], s.Resources[i+1:]...)
			return m
		}
	}
	return ""
}

// Reaches returns the machines s records; nil for a nil state.
func (s *State) Reaches() map[string]config.Reach {
	if s == nil {
		return nil
	}
	return s.Machines
}

// dropMachine forgets how to reach machine m when no record names it.
func (s *State) dropMachine(m string) {
	if m == "" || s.Machines[m] == (config.Reach{}) {
		return
	}
	for _, r := range s.Resources {
		if r.Attrs[provider.AttrMachine] == m {
			return
		}
	}
	delete(s.Machines, m)
	if len(s.Machines) == 0 {
		s.Machines = nil
	}
}

// withMachines returns the recorded machines with the declared ones laid
// over them: a machine block of the lab wins over the state's record.
func withMachines(recorded, declared map[string]config.Reach) map[string]config.Reach {
	out := cloneReaches(recorded)
	for name, r := range declared {
		if out == nil {
			out = map[string]config.Reach{}
		}
		out[name] = r
	}
	return out
}

func cloneReaches(m map[string]config.Reach) map[string]config.Reach {
	if m == nil {
		return nil
	}
	c := make(map[string]config.Reach, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// sortResources orders the records by address, so state files diff well.
func (s *State) sortResources() {
	sort.Slice(s.Resources, func(i, j int) bool {
		return s.Resources[i].Addr.String() < s.Resources[j].Addr.String()
	})
}

// sameContent reports whether a and b record the same lab, scenario and
// resources, ignoring serial and lineage.
func sameContent(a, b *State) bool {
	if a.Lab != b.Lab || a.Scenario != b.Scenario || len(a.Resources) != len(b.Resources) || !maps.Equal(a.Machines, b.Machines) {
		return false
	}
	for _, r := range a.Resources {
		o := b.Resource(r.Addr)
		if o == nil || o.Status != r.Status || !o.Attrs.Equal(r.Attrs) || fmt.Sprint(o.DependsOn) != fmt.Sprint(r.DependsOn) {
			return false
		}
	}
	return true
}

// NewLineage returns a random UUID-shaped lineage.
func NewLineage() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// BackupPath returns where apply keeps the state as it was before its
// first write (Terraform's terraform.tfstate.backup).
func BackupPath(dir string) string { return StatePath(dir) + ".backup" }

// StateError says a state file cannot be used: it is not JSON, was cut
// short, was edited into something tsolab did not write, was written by a
// newer tsolab, or this user may not read it. Error says what is wrong
// and what to do.
type StateError struct {
	Path    string
	Problem string
	// Newer: format_version is newer than this tsolab reads.
	Newer bool
	// Denied: this user may not read it (EACCES: an apply under sudo
	// wrote it as root, mode 0600); Owner is the file's uid (-1: unknown).
	Denied bool
	Owner  int
	// Backup is the backup state file, when one exists and reads well;
	// BackupSerial is its serial.
	Backup       string
	BackupSerial uint64
}

func (e *StateError) Error() string {
	msg := fmt.Sprintf("%s cannot be read: %s.", e.Path, e.Problem)
	switch {
	case e.Denied && e.Owner == 0:
		return msg + " root owns it (tsolab apply ran under sudo): run this command with sudo too."
	case e.Denied && e.Owner > 0:
		return msg + fmt.Sprintf(" User %d owns it: run this command as that user.", e.Owner)
	case e.Denied:
		return msg + " Run this command as the user that applied the lab."
	case e.Newer:
		return msg + " Run a tsolab as new as the one that wrote it: this one would lose what it does not know."
	case e.Backup != "":
		return msg + fmt.Sprintf(" The state as it was before the last apply is in %s (serial %d). If that is the lab as you know it, restore it (cp %s %s) and run tsolab plan: it shows what differs. Otherwise repair the file by hand.",
			e.Backup, e.BackupSerial, e.Backup, e.Path)
	}
	return msg + " Repair the file by hand (tsolab writes it as indented JSON: see tsolab show -json of a good lab), or move it away: tsolab then no longer knows what it made for this lab, and never touches what its state does not record."
}

// ReadState reads the state of the lab in dir. A lab never applied has no
// state file: ReadState returns (nil, nil). A file that cannot be used is
// a *StateError.
func ReadState(dir string) (*State, error) {
	path := StatePath(dir)
	s, err := readStateFile(path)
	var se *StateError
	if errors.As(err, &se) && !se.Newer && !se.Denied {
		if b, berr := readStateFile(BackupPath(dir)); berr == nil && b != nil {
			se.Backup, se.BackupSerial = BackupPath(dir), b.Serial
		}
	}
	return s, err
}

// readStateFile reads and checks one state file; (nil, nil) when it does
// not exist.
func readStateFile(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, fs.ErrPermission) {
		return nil, &StateError{Path: path, Problem: "permission denied", Denied: true, Owner: sudouser.OwnerOf(path)}
	}
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return &StateError{Path: path, Problem: fmt.Sprintf(format, args...)}
	}
	var s State
	derr := json.Unmarshal(b, &s)
	if derr != nil || s.FormatVersion != StateFormatVersion {
		// The version first: a newer format may not decode into this
		// one, and its error is the one to give.
		var v struct {
			FormatVersion *int `json:"format_version"`
		}
		if err := json.Unmarshal(b, &v); err != nil {
			if len(bytes.TrimSpace(b)) == 0 {
				return nil, bad("it is empty")
			}
			return nil, bad("it is not a tsolab state file (%v)", err)
		}
		switch {
		case v.FormatVersion == nil:
			return nil, bad("it has no format_version: it is not a tsolab state file")
		case *v.FormatVersion > StateFormatVersion:
			return nil, &StateError{Path: path, Newer: true,
				Problem: fmt.Sprintf("it was written by a newer tsolab (state format %d; this tsolab reads format %d)", *v.FormatVersion, StateFormatVersion)}
		case *v.FormatVersion != StateFormatVersion:
			return nil, bad("it has format_version %d; tsolab has only ever written format %d", *v.FormatVersion, StateFormatVersion)
		}
		return nil, bad("it is not a tsolab state file (%v)", derr)
	}
	if err := s.check(); err != nil {
		return nil, bad("%v", err)
	}
	for i := range s.Resources {
		if s.Resources[i].Status == "" {
			s.Resources[i].Status = StatusReady
		}
	}
	return &s, nil
}

// check finds what tsolab never writes: a resource without an address,
// one recorded twice, an unknown status, resources without a lab, a
// dependency cycle (destroy could not order the deletes).
func (s *State) check() error {
	if s.Lab == "" && len(s.Resources) > 0 {
		return errors.New(`it records resources but no "lab" (the name that named them)`)
	}
	seen := map[provider.Addr]int{}
	for i, r := range s.Resources {
		if r.Addr == (provider.Addr{}) {
			return fmt.Errorf("resources[%d] has no addr", i)
		}
		if j, ok := seen[r.Addr]; ok {
			return fmt.Errorf("%s is recorded twice (resources[%d] and [%d])", r.Addr, j, i)
		}
		seen[r.Addr] = i
		switch r.Status {
		case "", StatusReady, StatusCreating:
		default:
			return fmt.Errorf("%s has status %q; tsolab writes %q or %q", r.Addr, r.Status, StatusReady, StatusCreating)
		}
	}
	if cycle := s.dependencyCycle(); cycle != nil {
		names := make([]string, len(cycle))
		for i, a := range cycle {
			names[i] = a.String()
		}
		return fmt.Errorf("its depends_on form a cycle (%s), so no order of deletes exists", strings.Join(names, " -> "))
	}
	return nil
}

// dependencyCycle returns one cycle of the recorded depends_on, first
// resource repeated at the end, or nil. Dependencies on resources not
// recorded (forgotten with tsolab state rm) are no edges.
func (s *State) dependencyCycle() []provider.Addr {
	const (
		unseen = iota
		onPath
		done
	)
	deps := make(map[provider.Addr][]provider.Addr, len(s.Resources))
	for _, r := range s.Resources {
		deps[r.Addr] = r.DependsOn
	}
	mark := map[provider.Addr]int{}
	var path []provider.Addr
	var visit func(a provider.Addr) []provider.Addr
	visit = func(a provider.Addr) []provider.Addr {
		mark[a] = onPath
		path = append(path, a)
		for _, d := range deps[a] {
			if _, recorded := deps[d]; !recorded {
				continue
			}
			switch mark[d] {
			case onPath:
				for i, p := range path {
					if p == d {
						return append(append([]provider.Addr(nil), path[i:]...), d)
					}
				}
			case unseen:
				if c := visit(d); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		mark[a] = done
		return nil
	}
	for _, r := range s.Resources {
		if mark[r.Addr] == unseen {
			if c := visit(r.Addr); c != nil {
				return c
			}
		}
	}
	return nil
}

// writeState writes s to the state file of dir atomically.
func writeState(dir string, s *State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := writeStateFile(dir, StatePath(dir), append(b, '\n')); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}

// backupState copies the state file of dir, if there is one, to
// BackupPath: the state as it was before a command changed it.
func backupState(dir string) error {
	b, err := os.ReadFile(StatePath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = writeStateFile(dir, BackupPath(dir), b)
	}
	if err != nil {
		return fmt.Errorf("back up the state: %w", err)
	}
	return nil
}

// writeStateFile writes b to path in the state directory of dir: a
// temporary file in the same directory, fsync, rename over the old file,
// fsync of the directory. A reader sees the old file or the new one,
// never a mix. Under sudo, the file is the invoking user's
// (sudouser.Give).
func writeStateFile(dir, path string, b []byte) error {
	sdir, err := makeStateDir(dir)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(sdir, filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = sudouser.Give(dir, tmp)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	d, err := os.Open(sdir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// NotRecordedError says addresses given to Forget are not in the state.
type NotRecordedError struct {
	Dir   string
	Addrs []provider.Addr
}

func (e *NotRecordedError) Error() string {
	names := make([]string, len(e.Addrs))
	for i, a := range e.Addrs {
		names[i] = a.String()
	}
	return fmt.Sprintf("the state of %s records no %s: nothing was removed. tsolab state list %s shows what it records.",
		e.Dir, strings.Join(names, ", "), e.Dir)
}

// Forget removes the records of addrs from the state of the lab in dir
// and touches nothing else: what they name stays on the machine, and
// tsolab no longer manages it (Terraform's state rm). It takes the lab's
// lock (a *LockError when another process holds it), and removes all or
// nothing (a *NotRecordedError names the addresses not recorded). The
// state before is kept as BackupPath. It returns the state written.
func Forget(dir string, addrs []provider.Addr) (*State, error) {
	st, err := ReadState(dir)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, &NotRecordedError{Dir: dir, Addrs: addrs}
	}
	lock, err := LockState(dir, st.Lab)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	// Read again under the lock: another command may have written since.
	if st, err = ReadState(dir); err != nil {
		return nil, err
	}
	if st == nil {
		return nil, &NotRecordedError{Dir: dir, Addrs: addrs}
	}
	var missing []provider.Addr
	for _, a := range addrs {
		if st.Resource(a) == nil {
			missing = append(missing, a)
		}
	}
	if len(missing) > 0 {
		return nil, &NotRecordedError{Dir: dir, Addrs: missing}
	}
	for _, a := range addrs {
		st.dropMachine(st.remove(a))
	}
	st.Serial++
	if err := backupState(dir); err != nil {
		return nil, err
	}
	if err := writeState(dir, st); err != nil {
		return nil, err
	}
	return st, nil
}
