package planner

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/tsolab/tsolab/provider"
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
	Scenario  string          `json:"scenario"`
	Resources []ResourceState `json:"resources"`
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

// remove drops the record of addr.
func (s *State) remove(addr provider.Addr) {
	for i := range s.Resources {
		if s.Resources[i].Addr == addr {
			s.Resources = append(s.Resources[:i], s.Resources[i+1:]...)
			return
		}
	}
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
	if a.Lab != b.Lab || a.Scenario != b.Scenario || len(a.Resources) != len(b.Resources) {
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

// ReadState reads the state of the lab in dir. A lab never applied has no
// state file: ReadState returns (nil, nil).
func ReadState(dir string) (*State, error) {
	path := StatePath(dir)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s is not a tsolab state file: %v", path, err)
	}
	if s.FormatVersion != StateFormatVersion {
		return nil, fmt.Errorf("%s has format_version %d; this tsolab reads %d", path, s.FormatVersion, StateFormatVersion)
	}
	for i := range s.Resources {
		if s.Resources[i].Status == "" {
			s.Resources[i].Status = StatusReady
		}
	}
	return &s, nil
}

// writeState writes s to the state file of dir atomically: a temporary
// file in the same directory, fsync, rename over the old file, fsync of
// the directory. A reader sees the old state or the new one, never a mix.
func writeState(dir string, s *State) error {
	sdir := filepath.Join(dir, StateDir)
	if err := os.MkdirAll(sdir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	f, err := os.CreateTemp(sdir, "state.json.tmp*")
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
		err = os.Rename(tmp, StatePath(dir))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write state: %w", err)
	}
	d, err := os.Open(sdir)
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	return nil
}
