package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/host/netnsfs"
)

// Provider manages provider.KindHost resources. It is safe for
// concurrent calls. Its only memory between calls is the namespaces whose
// marks Read found or Create wrote (checked), for Delete and for the
// NIC provider (Marks).
type Provider struct {
	checked Checked
	hidden  hiddenAtFirstRead
}

// Marks is what the provider knows of its namespaces' marks, for the NIC
// provider (nic.Provider.HostMarks): a NIC in a namespace this provider
// made or read in the same process need not ask the kernel for its mark.
func (p *Provider) Marks() *Checked { return &p.checked }

// New returns the host provider.
func New() *Provider { return &Provider{} }

var _ provider.Interface = (*Provider)(nil)

// prefixRestoreSysctl records, for a local host, the value a sysctl had
// before tsolab wrote it: "restore.sysctl.net.ipv4.tcp_wmem".
const prefixRestoreSysctl = provider.PrefixRestore + provider.PrefixSysctl

// Validate checks the kind, the namespace name and that every sysctl is a
// net.* key the target namespace has.
func (p *Provider) Validate(ctx context.Context, req provider.ValidateRequest) provider.ValidateResponse {
	var diags hcl.Diagnostics
	bad := func(summary, detail string) {
		d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: req.Addr.String() + ": " + summary, Detail: detail}
		if req.Range.Filename != "" {
			r := req.Range
			d.Subject = &r
		}
		diags = append(diags, d)
	}
	kind, ns := req.Desired[provider.AttrHostKind], req.Desired[provider.AttrNetNS]
	switch config.HostKind(kind) {
	case config.HostNamespace:
		if !req.Naming.OwnsNS(ns) {
			bad(fmt.Sprintf("namespace %q is not one of lab %s's", ns, req.Naming.LabID),
				fmt.Sprintf("A host's namespace must be named %s; this is a bug in tsolab.", req.Naming.HostNS(req.Addr.Name)))
		} else if d := ForeignNamespace(req.Naming, req.Addr, ns, ""); d != nil {
			if req.Range.Filename != "" {
				r := req.Range
				d.Subject = &r
			}
			diags = append(diags, d)
		}
	case config.HostLocal:
		if ns != "" {
			bad(fmt.Sprintf("a local host has no namespace of its own, got %q", ns), "This is a bug in tsolab.")
		}
	default:
		bad(fmt.Sprintf("unknown host kind %q", kind), `Use kind = "netns" (a namespace tsolab creates) or "local" (this machine).`)
	}
	keys := sysctlKeys(req.Desired)
	var missing []string
	check := func() error {
		for _, k := range keys {
			if _, err := os.Stat(sysctlPath(k)); err != nil {
				missing = append(missing, k)
			}
		}
		return nil
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "net.") {
			bad(fmt.Sprintf("sysctl %q is not a net.* key", k),
				"Only network sysctls (net.*) belong to a host's namespace; set others on the machine itself.")
		}
	}
	if len(keys) > 0 && !diags.HasErrors() {
		var err error
		if config.HostKind(kind) == config.HostLocal {
			err = check()
		} else {
			// A fresh namespace shows which net.* keys exist per namespace
			// (some, like net.ipv4.tcp_mem, exist only in the initial one).
			err = netnsfs.Scratch(check)
		}
		if err != nil {
			bad("cannot check sysctls", err.Error())
		}
		for _, k := range missing {
			where := "a network namespace"
			if config.HostKind(kind) == config.HostLocal {
				where = "this machine"
			}
			bad(fmt.Sprintf("sysctl %q does not exist in %s", k, where),
				"Check the spelling (see /proc/sys/net); some keys exist only in the machine's own namespace: use a host with kind = \"local\" for those.")
		}
	}
	return provider.ValidateResponse{Diagnostics: diags}
}

// Create makes the namespace (completing one an interrupted apply left),
// brings lo up and writes the sysctls; for a local host it records the
// original sysctl values first.
func (p *Provider) Create(ctx context.Context, req provider.CreateRequest) provider.CreateResponse {
	d := newDiags(req.Addr)
	want := req.Desired
	ns := want[provider.AttrNetNS]
	newAttrs := provider.Attrs{provider.AttrHostKind: want[provider.AttrHostKind], provider.AttrNetNS: ns}
	if isLocal(want) {
		err := netnsfs.Do("", func() error {
			recordOriginals(d, want, newAttrs)
			writeSysctls(d, want, newAttrs)
			return nil
		})
		if err != nil {
			d.errorf("configure the local host", err)
		}
		return provider.CreateResponse{New: newAttrs, Diagnostics: d.diags}
	}
	// The namespace is configured before it is bound to its name: its lo
	// came up in the request that marked it (netnsfs.CreateMarked), which
	// the kernel acknowledged, so lo.up is recorded without asking again.
	// One an interrupted apply left is configured where it is, lo brought
	// up and read back.
	made := netns.None() // the namespace fresh ran in, for p.checked
	fresh := func() error {
		d.diags = nil // a namespace dropped for one bound meanwhile said nothing
		made.Close()
		made, _ = netns.Get()
		if _, ok := want[provider.AttrLoUp]; ok {
			newAttrs[provider.AttrLoUp] = "true"
		}
		writeSysctls(d, want, newAttrs)
		return nil
	}
	created, diags := CreateNamespace(req.Naming, req.Addr, ns, fresh)
	if created {
		p.checked.keep(ns, made, req.Naming.OwnerMark())
	} else {
		made.Close()
	}
	if diags.HasErrors() {
		return provider.CreateResponse{Diagnostics: diags}
	}
	if !created {
		err := withNetlink(ns, func(nh *netlink.Handle) error {
			if err := setLoUp(nh); err != nil {
				return err
			}
			if _, ok := want[provider.AttrLoUp]; ok {
				readLoUp(nh, d, newAttrs)
			}
			writeSysctls(d, want, newAttrs)
			return nil
		})
		if err != nil {
			d.errorf("configure namespace %s", err, ns)
		}
	}
	return provider.CreateResponse{New: newAttrs, Diagnostics: d.diags}
}

// Read reports whether the namespace still exists, whether its lo is up
// and the sysctls' values now; restore.* entries are carried over from
// Recorded.
func (p *Provider) Read(ctx context.Context, req provider.ReadRequest) provider.ReadResponse {
	d := newDiags(req.Addr)
	ns := req.Recorded[provider.AttrNetNS]
	if !isLocal(req.Recorded) {
		p.checked.forget(ns)
		if r := namespaceMissing(req.Addr, ns); r != nil {
			return *r
		}
		if h := p.hidden.of(ns); h != nil {
			d.warnf("namespace %s is read through a copy, and destroy will fail until it is uncovered", h, ns)
		}
	}
	actual := req.Recorded.Clone()
	keys := sysctlKeys(req.Recorded)
	// A record made before tsolab watched lo has no lo.up: report it all
	// the same. The namespace's mark is lo's alias, read with it.
	hasLo := !isLocal(req.Recorded)
	var mark string
	markRead := false
	if len(keys) > 0 || hasLo {
		h, err := netnsfs.Open(ns)
		if err == nil {
			err = netnsfs.DoHandle(h, func() error {
				if hasLo {
					err := withHandle(func(nh *netlink.Handle) error {
						if lo := readLoUp(nh, d, actual); lo != nil {
							mark, markRead = lo.Alias, true
						}
						return nil
					})
					if err != nil {
						d.errorf("read lo", err)
					}
				}
				for _, k := range keys {
					v, err := readSysctl(k)
					if err != nil {
						d.warnf("read sysctl %s", err, k)
						v = ""
					}
					actual[provider.PrefixSysctl+k] = v
				}
				return nil
			})
			if markRead {
				p.checked.keep(ns, h, mark)
			} else {
				h.Close()
			}
		}
		if errors.Is(err, os.ErrNotExist) {
			return provider.ReadResponse{Gone: true}
		}
		if err != nil {
			d.errorf("read namespace %s", err, ns)
		}
	}
	if markRead {
		if w := ForeignMark(req.Naming, req.Addr, ns, mark, "read"); w != nil {
			return provider.ReadResponse{Gone: true, Diagnostics: hcl.Diagnostics{w}}
		}
	}
	return provider.ReadResponse{Actual: actual, Diagnostics: d.diags}
}

// Update brings a namespace host's lo up and writes the desired sysctls.
// On a local host a sysctl seen for the first time has its original
// recorded, and one no longer declared is put back to its original.
func (p *Provider) Update(ctx context.Context, req provider.UpdateRequest) provider.UpdateResponse {
	d := newDiags(req.Addr)
	want := req.Desired
	ns := want[provider.AttrNetNS]
	newAttrs := provider.Attrs{provider.AttrHostKind: want[provider.AttrHostKind], provider.AttrNetNS: ns}
	local := isLocal(want)
	err := netnsfs.Do(ns, func() error {
		if local {
			for k, v := range req.Prior {
				if strings.HasPrefix(k, prefixRestoreSysctl) {
					newAttrs[k] = v
				}
			}
			for _, k := range sysctlKeys(req.Prior) {
				if _, still := want[provider.PrefixSysctl+k]; still {
					continue
				}
				if orig, ok := newAttrs[prefixRestoreSysctl+k]; ok {
					if err := writeSysctl(k, orig); err != nil {
						d.errorf("restore sysctl %s", err, k)
						newAttrs[provider.PrefixSysctl+k] = req.Prior[provider.PrefixSysctl+k]
						continue
					}
					delete(newAttrs, prefixRestoreSysctl+k)
				}
			}
			recordOriginals(d, want, newAttrs)
		}
		if _, ok := want[provider.AttrLoUp]; ok && !local {
			err := withHandle(func(nh *netlink.Handle) error {
				if err := setLoUp(nh); err != nil {
					d.errorf("configure namespace %s", err, ns)
				}
				readLoUp(nh, d, newAttrs)
				return nil
			})
			if err != nil {
				d.errorf("configure namespace %s", err, ns)
			}
		}
		writeSysctls(d, want, newAttrs)
		return nil
	})
	if err != nil {
		d.errorf("configure namespace %s", err, ns)
	}
	return provider.UpdateResponse{New: newAttrs, Diagnostics: d.diags}
}

// recordOriginals records in attrs, as restore.* entries, the value each
// sysctl of want has before a local host first writes it, so Delete and
// Update can give it back; a sysctl already recorded keeps its original.
func recordOriginals(d *diags, want, attrs provider.Attrs) {
	for _, k := range sysctlKeys(want) {
		if _, ok := attrs[prefixRestoreSysctl+k]; ok {
			continue
		}
		orig, err := readSysctl(k)
		if err != nil {
			d.errorf("read sysctl %s", err, k)
			continue
		}
		attrs[prefixRestoreSysctl+k] = orig
	}
}

// Delete removes the namespace if it carries the lab's prefix (a local
// host gets its original sysctls back instead).
func (p *Provider) Delete(ctx context.Context, req provider.DeleteRequest) provider.DeleteResponse {
	d := newDiags(req.Addr)
	ns := req.Recorded[provider.AttrNetNS]
	if isLocal(req.Recorded) {
		for _, k := range req.Recorded.Keys() {
			if !strings.HasPrefix(k, prefixRestoreSysctl) {
				continue
			}
			key := strings.TrimPrefix(k, prefixRestoreSysctl)
			if err := writeSysctl(key, req.Recorded[k]); err != nil {
				d.errorf("restore sysctl %s", err, key)
			}
		}
		return provider.DeleteResponse{Diagnostics: d.diags}
	}
	if !req.Naming.OwnsNS(ns) {
		d.diags = append(d.diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("%s: refusing to delete namespace %q", req.Addr, ns),
			Detail: fmt.Sprintf("It does not carry lab %s's prefix %s, so tsolab did not create it. Remove it by hand if it is really yours.",
				req.Naming.LabID, provider.NamespacePrefix+req.Naming.LabID+"."),
		})
		return provider.DeleteResponse{Diagnostics: d.diags}
	}
	w, release := p.checked.Foreign(req.Naming, req.Addr, ns)
	defer release()
	if w != nil {
		return provider.DeleteResponse{Diagnostics: hcl.Diagnostics{w}}
	}
	if err := netnsfs.Remove(ns); err != nil {
		d.errorf("delete namespace", err)
	}
	return provider.DeleteResponse{Diagnostics: d.diags}
}

// CreateNamespace makes ns, the namespace of resource a, for n's state,
// marked as that state's (provider.Naming.OwnerMark) and configured by
// setup (nil: nothing more) before it is bound to its name
// (netnsfs.CreateSetUp), or finds it when an interrupted apply of that
// state left it (marked; a file with no namespace on it is made again);
// created says which. The caller completes one it found. It refuses a
// name without the lab's prefix, and a namespace that is not n's:
// another copy of the lab's, or an unmarked one, which tsolab did not
// make. Hosts use it, and so do switches (provider/nic), whose bridges
// live in namespaces of their own.
func CreateNamespace(n provider.Naming, a provider.Addr, ns string, setup func() error) (created bool, _ hcl.Diagnostics) {
	d := newDiags(a)
	if !n.OwnsNS(ns) {
		d.errorf("refusing to create namespace %q", errors.New("it does not carry the lab's prefix"), ns)
		return false, d.diags
	}
	// A namespace bound at ns by another process between the look and the
	// binding is looked at again; a name bound and unbound that often is
	// an error.
	for range 3 {
		mark, exists, err := netnsfs.Mark(ns)
		switch {
		case err != nil:
			d.errorf("create namespace", err)
			return false, d.diags
		case exists && !n.Ours(mark):
			return false, append(d.diags, n.ForeignOwnerDiagnostic(a, ns, mark))
		case exists:
			return false, nil
		case n.OwnerMark() == "":
			d.errorf("create namespace %s", errors.New("no state owns it (this is a bug in tsolab: apply runs as a state)"), ns)
			return false, d.diags
		}
		created, err := netnsfs.CreateSetUp(ns, n.OwnerMark(), setup)
		if err != nil {
			d.errorf("create namespace", err)
			return false, d.diags
		}
		if created {
			return true, nil
		}
	}
	d.errorf("create namespace %s", errors.New("another process keeps binding and removing a namespace of that name"), ns)
	return false, d.diags
}

// ForeignNamespace returns a diagnostic when ns exists and is not n's
// state's (another copy of the lab made it, or it is unmarked: tsolab did
// not make it), so that n's state must neither take it for its own (op
// "read": a warning, it is gone for this state), nor remove it (op
// "delete": a warning, it is left alone), nor change or plan anything in
// it (op "": the error naming the owner and the fix); nil otherwise. When
// its mark cannot be read, for any op, it returns an error: nothing is
// touched in a namespace whose owner is unknown.
func ForeignNamespace(n provider.Naming, a provider.Addr, ns, op string) *hcl.Diagnostic {
	mark, ok, err := netnsfs.Mark(ns)
	if err != nil {
		// Whose it is cannot be told: touch nothing.
		d := newDiags(a)
		d.errorf("namespace %s", err, ns)
		return d.diags[0]
	}
	if !ok {
		return nil
	}
	return ForeignMark(n, a, ns, mark, op)
}

// ForeignMark is ForeignNamespace for the namespace ns, which exists and
// carries mark (read by the caller through a socket it has there).
func ForeignMark(n provider.Naming, a provider.Addr, ns, mark, op string) *hcl.Diagnostic {
	if n.Ours(mark) {
		return nil
	}
	if op == "" {
		return n.ForeignOwnerDiagnostic(a, ns, mark)
	}
	what := "namespace %s is gone for this lab's state"
	if op == "delete" {
		what = "left namespace %s alone"
	}
	why := fmt.Errorf("it carries another state's mark %q: another copy of the lab made it", mark)
	if mark == "" {
		why = errors.New("it carries no tsolab mark: it was made outside tsolab (ip netns add?), and what is inside is not tsolab's")
	}
	d := newDiags(a)
	d.warnf(what, why, ns)
	return d.diags[0]
}

// namespaceMissing is Checked.ReadNamespace's read of a namespace not bound at
// ns (gone, with Remains for a file left there; an error saying what to
// run when a namespace is bound there under a later mount over
// netnsfs.Dir, netnsfs.HiddenError), nil when it is bound.
func namespaceMissing(a provider.Addr, ns string) *provider.ReadResponse {
	ok, err := netnsfs.Exists(ns)
	if err != nil {
		d := newDiags(a)
		d.errorf("read namespace %s", err, ns)
		return &provider.ReadResponse{Diagnostics: d.diags}
	}
	if !ok {
		left, err := netnsfs.Leftover(ns)
		if err == nil && left {
			if h, _ := netnsfs.Hidden(ns); h != nil {
				err = h // not a left-over: a plan would bind another over it
			}
		}
		if err != nil {
			d := newDiags(a)
			d.errorf("read namespace %s", err, ns)
			return &provider.ReadResponse{Diagnostics: d.diags}
		}
		return &provider.ReadResponse{Gone: true, Remains: left}
	}
	return nil
}

func isLocal(a provider.Attrs) bool {
	return config.HostKind(a[provider.AttrHostKind]) == config.HostLocal
}

// setLoUp brings up the namespace's lo (ifindex 1 in every namespace)
// through nh, a socket there.
func setLoUp(nh *netlink.Handle) error {
	if err := nh.LinkSetUp(&netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: 1, Name: "lo"}}); err != nil {
		return fmt.Errorf("set lo up: %w", err)
	}
	return nil
}

// readLoUp records in out whether the namespace's lo is up, read through
// nh, a socket there, and returns lo's attributes (nil when it cannot be
// read).
func readLoUp(nh *netlink.Handle, d *diags, out provider.Attrs) *netlink.LinkAttrs {
	lo, err := nh.LinkByIndex(1)
	if err != nil {
		d.errorf("read lo", err)
		return nil
	}
	out[provider.AttrLoUp] = strconv.FormatBool(lo.Attrs().Flags&unix.IFF_UP != 0)
	return lo.Attrs()
}

// withNetlink runs fn on a thread in namespace ns ("" = the machine's
// own) with a route netlink socket there, closed afterwards.
func withNetlink(ns string, fn func(nh *netlink.Handle) error) error {
	return netnsfs.Do(ns, func() error { return withHandle(fn) })
}

// withHandle runs fn with a route netlink socket in the calling thread's
// namespace, closed afterwards.
func withHandle(fn func(nh *netlink.Handle) error) error {
	nh, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netlink socket: %w", err)
	}
	defer nh.Close()
	return fn(nh)
}

// sysctlKeys returns the sysctl names ("net.ipv4.tcp_wmem") declared in a,
// sorted.
func sysctlKeys(a provider.Attrs) []string {
	var keys []string
	for k := range a {
		if strings.HasPrefix(k, provider.PrefixSysctl) {
			keys = append(keys, strings.TrimPrefix(k, provider.PrefixSysctl))
		}
	}
	sort.Strings(keys)
	return keys
}

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

// normalize joins a sysctl value's fields with single spaces, the way the
// kernel's tab-separated vectors ("4096\t16384\t4194304") compare equal to
// what a lab writes.
func normalize(v string) string { return strings.Join(strings.Fields(v), " ") }

// readSysctl reads a sysctl in the calling thread's namespace.
func readSysctl(key string) (string, error) {
	b, err := os.ReadFile(sysctlPath(key))
	if err != nil {
		return "", err
	}
	return normalize(string(b)), nil
}

// writeSysctl writes a sysctl in the calling thread's namespace.
func writeSysctl(key, value string) error {
	if !strings.HasPrefix(key, "net.") {
		return fmt.Errorf("%s is not a net.* sysctl", key)
	}
	f, err := os.OpenFile(sysctlPath(key), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, unix.EINVAL) {
		err = fmt.Errorf("the kernel refused %q", value)
	}
	return err
}

// writeSysctls writes every sysctl want declares and records in out what
// the kernel holds afterwards. It runs on a thread inside the namespace.
func writeSysctls(d *diags, want, out provider.Attrs) {
	for _, k := range sysctlKeys(want) {
		v := want[provider.PrefixSysctl+k]
		if err := writeSysctl(k, v); err != nil {
			d.errorf("set sysctl %s=%q", err, k, v)
		}
		got, err := readSysctl(k)
		if err != nil {
			d.errorf("read sysctl %s", err, k)
		}
		out[provider.PrefixSysctl+k] = got
		if err == nil && got != normalize(v) {
			d.errorf("set sysctl %s=%q", fmt.Errorf("the kernel holds %q", got), k, v)
		}
	}
}

// diags collects diagnostics about one resource.
type diags struct {
	addr  provider.Addr
	diags hcl.Diagnostics
}

func newDiags(a provider.Addr) *diags { return &diags{addr: a} }

// errorf adds an error "ADDR: WHAT: ERR"; what is a format with args.
func (d *diags) errorf(what string, err error, args ...any) {
	d.add(hcl.DiagError, what, err, args...)
}

func (d *diags) warnf(what string, err error, args ...any) {
	d.add(hcl.DiagWarning, what, err, args...)
}

func (d *diags) add(sev hcl.DiagnosticSeverity, what string, err error, args ...any) {
	d.diags = append(d.diags, &hcl.Diagnostic{
		Severity: sev,
		Summary:  fmt.Sprintf("%s: %s: %v", d.addr, fmt.Sprintf(what, args...), err),
	})
}
