package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tsolab/tsolab/config"
)

// build resolves the scenario into hosts, NICs and connections, for
// repetition rep of the run (which seeds the random source with the
// engine's seed).
func (e *Engine) build(sc *config.Scenario, wl *config.Workload, rep int) (*world, error) {
	w := &world{e: e, rep: rep}
	w.q.hop = w
	if e.checks {
		w.checks = &checker{budget: e.eventBudget}
	}
	b := &builder{e: e, w: w, sc: sc, hosts: map[string]*host{}, nics: map[string]*nicState{}}
	client, err := b.host(wl.Client)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	w.client = client
	if len(wl.Servers) == 0 {
		return nil, fmt.Errorf("the workload has no servers")
	}
	for _, srv := range wl.Servers {
		if err := b.connectServer(wl, client, srv); err != nil {
			return nil, err
		}
	}
	for _, nc := range sc.NICs {
		if nc.Device == "lo" {
			continue
		}
		if _, err := b.nic(nc); err != nil {
			return nil, err
		}
	}
	if len(w.eps) > maxEventID || len(w.rxqs) > maxEventID {
		return nil, fmt.Errorf("%d connections: the model runs at most %d", len(w.eps)/2, maxEventID/2)
	}
	w.startApps(wl)
	w.stats.hist = make([]int64, 0, 64)
	w.notes = append(w.notes, buildNotes(w, sc, wl)...)
	return w, nil
}

// builder makes the world's hosts and NICs from the scenario, each once,
// in the order the workload first needs them.
type builder struct {
	e     *Engine
	w     *world
	sc    *config.Scenario
	hosts map[string]*host
	nics  map[string]*nicState
	lanes int // wait lanes given to cores so far (core.lane)
}

// host is the named host with its stack and CPU profiles.
func (b *builder) host(name string) (*host, error) {
	if h := b.hosts[name]; h != nil {
		return h, nil
	}
	hc := b.sc.Host(name)
	if hc == nil {
		return nil, fmt.Errorf("no host %q in the scenario", name)
	}
	stack := hc.Stack
	if stack == "" {
		stack = b.e.defaultStack
	}
	prof, err := newProfile(stack, hc.StackOptions)
	if err != nil {
		return nil, fmt.Errorf("host.%s: %w", name, err)
	}
	if b.e.editProfile != nil {
		b.e.editProfile(prof)
	}
	cp, err := b.e.cpuOf(hc, stack)
	if err != nil {
		return nil, fmt.Errorf("host.%s: %w", name, err)
	}
	cores := hc.Cores
	if cores <= 0 {
		cores = max(cp.Cores, 1)
	}
	var owner *host
	if hc.CoresOf != "" {
		if owner, err = b.host(hc.CoresOf); err != nil {
			return nil, err
		}
		cores = len(owner.cores)
	}
	run, err := cp.scheduler(hc.Scheduler)
	if err != nil {
		return nil, fmt.Errorf("%shost.%s: %w", attrPlace(hc, "scheduler"), name, err)
	}
	h := &host{name: name, cpu: cp, prof: prof, cores: make([]core, cores), queues: make([]int32, cores), delayedAck: hc.DelayedAck,
		slice: prof.slice.of(cores)}
	if run != nil {
		h.sched = &sched{Scheduler: *run, rnd: b.w.random(), wake: b.e.wakeTables[wakeKey(cp.Name, run.Name)]}
		if prof.ithreads {
			h.ithread = h.sched
		}
	}
	for i := range h.queues {
		h.queues[i] = -1
		h.cores[i].id = i
		h.cores[i].lane = -1
		if owner != nil {
			h.cores[i].lane = owner.cores[i].lane
		} else if b.lanes < waitLanes {
			h.cores[i].lane = int8(b.lanes)
			b.lanes++
		}
	}
	if owner != nil {
		shareCores(h, owner)
		owner.machine, h.machine = owner, owner
	}
	if hc.Bus > 0 {
		h.busNs = 8e9 / float64(hc.Bus)
	}
	b.hosts[name] = h
	b.w.hosts = append(b.w.hosts, h)
	return h, nil
}

// nic is the NIC nc declares, on its host.
func (b *builder) nic(nc *config.NIC) (*nicState, error) {
	if n := b.nics[nc.Name]; n != nil {
		return n, nil
	}
	h, err := b.host(nc.Host)
	if err != nil {
		return nil, err
	}
	n := &nicState{name: nc.Name, host: h, mtu: nc.MTU, switched: nc.Connect != "", l2: ethOverhead, shaped: nc.Rate != 0}
	_, n.groSet = nc.Offload.Get(offGRO)
	if n.mtu == 0 {
		n.mtu = 1500
	}
	n.off = resolveOffloads(nc.Offload)
	rate := nc.Rate
	if rate == 0 {
		rate = b.e.lineRate
	}
	queue := nc.Queue
	if queue == 0 {
		queue = 1000 * int64(n.mtu+ethOverhead)
	}
	// rate shapes the NIC's egress, as tbf on the NIC does on the
	// kernel engine; the switch's port toward the NIC runs at line
	// rate (docs/language.md: rate).
	n.egress = serializer{nsPerByte: 8e9 / float64(rate), limit: float64(queue)}
	n.port = serializer{nsPerByte: 8e9 / float64(b.e.lineRate), limit: float64(queue)}
	n.delay = int64(nc.Delay)
	b.nics[nc.Name] = n
	b.w.nics = append(b.w.nics, n)
	return n, nil
}

// loopback is h's loopback device, as a NIC of h that adopts "lo" (or is
// named lo) declares it, else the profile's.
func (b *builder) loopback(h *host) *nicState {
	if h.lo != nil {
		return h.lo
	}
	n := &nicState{name: "lo", host: h, mtu: h.prof.loMTU, loopback: true}
	n.off = resolveOffloads(config.Offloads{}).Without(offGRO).Without(offLRO)
	for _, nc := range b.sc.NICs {
		if nc.Host == h.name && (nc.Device == "lo" || nc.Name == "lo") {
			n.name = nc.Name
			if nc.MTU > 0 {
				n.mtu = nc.MTU
			}
			n.off = resolveOffloads(nc.Offload)
		}
	}
	h.lo = n
	b.w.nics = append(b.w.nics, n)
	return n
}

// connectServer makes the workload's connections from client to server
// srv: over loopback, or from the client's NIC that reaches the server's
// (config.Scenario.Route).
func (b *builder) connectServer(wl *config.Workload, client *host, srv string) error {
	var cn, sn *nicState
	var sh *host
	var err error
	if wl.Loopback {
		if sh, err = b.host(srv); err != nil {
			return fmt.Errorf("server: %w", err)
		}
		if sh != client {
			return fmt.Errorf("a loopback workload runs on one host: client %s, server %s", client.name, sh.name)
		}
		cn = b.loopback(sh)
		sn = cn
	} else {
		snc := b.sc.NIC(srv)
		if snc == nil {
			return fmt.Errorf("no nic %q in the scenario (servers name NICs; with loopback = true, hosts)", srv)
		}
		if sn, err = b.nic(snc); err != nil {
			return err
		}
		sh = sn.host
		cnc := b.sc.Route(wl.Client, snc)
		if cnc == nil {
			return fmt.Errorf("host %s has no NIC that reaches nic.%s (on its switch or pair, in its subnet)", wl.Client, srv)
		}
		if cn, err = b.nic(cnc); err != nil {
			return err
		}
	}
	w := b.w
	found := false
	for _, h := range w.servers {
		found = found || h == sh
	}
	if !found {
		w.servers = append(w.servers, sh)
	}
	conns := max(wl.Connections, 1)
	if wl.Kind == config.RR && wl.Concurrency > 0 {
		conns = wl.Concurrency
	}
	for range conns {
		if err := w.connect(wl, client, cn, sh, sn); err != nil {
			return err
		}
	}
	return nil
}

// startApps sets up the applications and schedules the first writes.
func (w *world) startApps(wl *config.Workload) {
	w.configureApps(wl)
	for _, ep := range w.eps {
		if ep.app.want > 0 {
			w.readers++
		}
		if ep.app.pending > 0 {
			ep.app.ev, ep.app.woken = true, wokeNone
			w.q.push(0, evAppRun, ep.idx)
		}
	}
	// Held turns (holdTurn) on hosts without a scheduler or a machine:
	// on application cores, which no receive queue or interrupt charges,
	// or on guarded ones, which the loop looks at after each event.
	type hostCore struct {
		h *host
		c int
	}
	apps := map[hostCore][]*endpoint{}
	for _, ep := range w.eps {
		k := hostCore{ep.host, ep.core}
		apps[k] = append(apps[k], ep)
	}
	shared := map[hostCore]bool{}
	for i := range w.rxqs {
		k := hostCore{w.rxqs[i].host, w.rxqs[i].core}
		shared[k] = true
	}
	for _, ep := range w.eps {
		h := ep.host
		k := hostCore{h, ep.core}
		if h.sched != nil || h.machine != nil || w.e.noHold {
			continue
		}
		ep.canHold = true
		if shared[k] || ep.core == h.irqCore {
			// A guarded core (unholdGuarded).
			c := &h.cores[ep.core]
			if len(c.holders) == 0 {
				w.heldOn = append(w.heldOn, c)
			}
			c.holders = append(c.holders, ep)
			continue
		}
		eps := apps[k]
		ep.appCore = true
		for _, o := range eps {
			if o != ep {
				ep.coreMates = append(ep.coreMates, o)
			}
		}
	}
	// Room for every guarded core: tryHold lists one without allocating.
	w.heldOn = w.heldOn[:0]
}

// buildNotes says what of the lab the model does not apply.
func buildNotes(w *world, sc *config.Scenario, wl *config.Workload) []string {
	var notes []string
	if wl.Kind == config.Sendfile && wl.FileSize > 0 {
		notes = append(notes, "file_size: the model sends from the page cache; the file's size does not change the run")
	}
	notes = append(notes, w.offloadNotes()...)
	for _, h := range sc.Hosts {
		if len(h.Sysctl) > 0 {
			keys := make([]string, 0, len(h.Sysctl))
			for k := range h.Sysctl {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			notes = append(notes, fmt.Sprintf("host.%s: sysctl %s is applied by the kernel engine; the model takes its socket buffers from the workload (sndbuf, rcvbuf) and the stack profile (stack_options)",
				h.Name, strings.Join(keys, ", ")))
		}
	}
	return notes
}
