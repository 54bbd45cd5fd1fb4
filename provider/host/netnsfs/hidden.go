package netnsfs

import (
	"fmt"
	"strings"
)

// HiddenError says that a namespace is bound at Path(Name) in a
// directory hidden by a mount made over Dir later: what `ip netns add`
// does (binds Dir over itself) when Dir is no mount point, on a machine
// whose / is private, to namespaces bound in Dir before it. The name is
// still listed, but what is bound there can be neither unmounted nor
// removed through it (EBUSY), and the namespace lives on.
type HiddenError struct {
	Name  string
	Mount uint64 // mount ID of the hidden nsfs mount (/proc/self/mountinfo)
	Over  uint64 // mount ID of the mount at Dir that hides it
}

func (e *HiddenError) Error() string {
	return fmt.Sprintf("namespace %s is hidden: it is bound on %s (mount %d in /proc/self/mountinfo) in the directory "+
		"that a later bind of %s over itself (mount %d; `ip netns add` makes one when %s is no mount point) covers, "+
		"so it can be neither unmounted nor removed through its name. "+
		"Uncover it with `sudo umount %s` (refused while namespaces made since that bind are bound in it: remove them first, "+
		"or `sudo umount -l %s` unbinds them too), then run this again",
		e.Name, Path(e.Name), e.Mount, Dir, e.Over, Dir, Dir, Dir)
}

// Hidden returns the *HiddenError of name when a namespace is bound at
// Path(name) where the mount on top at Dir hides it, nil when none is;
// err when that cannot be told.
func Hidden(name string) (*HiddenError, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	all, err := HiddenAll()
	return all[name], err
}

// HiddenAll returns the *HiddenError of every namespace bound in Dir
// where the mount on top at Dir hides it, by name (Hidden of each), from
// one read of /proc/self/mountinfo.
func HiddenAll() (map[string]*HiddenError, error) {
	top, err := mountID(Dir)
	if err != nil {
		return nil, err
	}
	all, err := readMounts()
	if err != nil {
		return nil, err
	}
	byName := map[string][]mount{}
	var names []string // in mountinfo's order
	for _, m := range all {
		if name, ok := strings.CutPrefix(m.point, Dir+"/"); ok && !strings.Contains(name, "/") {
			if byName[name] == nil {
				names = append(names, name)
			}
			byName[name] = append(byName[name], m)
		}
	}
	out := map[string]*HiddenError{}
	for _, name := range names {
		for _, m := range hiddenOf(byName[name], top) {
			if m.fstype == "nsfs" {
				out[name] = &HiddenError{Name: name, Mount: m.id, Over: top}
				break
			}
		}
	}
	return out, nil
}

// hiddenOf returns the mounts of at (all at one mount point in Dir) that
// are not reached from the mount top, the mount on top at Dir: neither
// mounted on it nor on one of them that is reached (stacked).
func hiddenOf(at []mount, top uint64) []mount {
	reached := map[uint64]bool{top: true}
	for grew := true; grew; {
		grew = false
		for _, m := range at {
			if !reached[m.id] && reached[m.parent] {
				reached[m.id], grew = true, true
			}
		}
	}
	var out []mount
	for _, m := range at {
		if !reached[m.id] {
			out = append(out, m)
		}
	}
	return out
}
