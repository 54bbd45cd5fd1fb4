// Package planner turns desired resources into changes and makes them: it
// owns the state file (.tsolab/state.json in the lab directory) and its
// lock, refresh (reading back what exists and reporting drift), the diff
// between desired and refreshed resources (create, update in place,
// replace, delete), saved plan files, the dependency-ordered parallel
// apply and destroy, and the DOT dependency graph. Run as root through
// sudo in a lab directory the invoking user owns, it gives .tsolab/ and
// the files it writes there (and a -out plan file in a directory of
// theirs) to that user: package sudouser holds that rule.
//
// The flow the CLI drives is:
//
//	p := planner.New(planner.Options{Dir, Lab, Providers, ...})
//	plan, err := p.Plan(ctx, scenarioName, desired) // load state, refresh, diff, validate
//	res, err := p.Apply(ctx, plan)                   // lock, stale check, walk, save state
//	plan, err := p.PlanDestroy(ctx)                  // then Apply(plan) to destroy
//	WritePlanFile(path, plan); plan, err = ReadPlanFile(path) // -out FILE, apply FILE
//	                                                 // (New(Options{Dir: plan.Dir, Lab: plan.Lab, ...}))
//	st, err := ReadState(dir)                        // show
//	DOT(desired, machines), PlanDOT(plan)            // graph
//
// Where a 1000-host plan's CPU goes on session 15's AMD EPYC guest (perf
// record -e cpu-clock -g of one `tsolab plan` of bench/provision-1000's
// lab with nothing to change, main bc54f03, load 3.3, 4291 samples): Go
// 52%, the kernel 47%. Page faults 19% (the heap's first touch of its
// pages: GOGC is Go's 100 since, cmd/tsolab's main), loading the lab
// 16.7% (hcl's lexer 10.7%: growing its token slice is 19 MB of the 38
// MB that loading allocates, TSOLAB_MEMPROFILE), refresh's NIC reads
// 25.8% (each NIC's link 15.9%, its switch port 7.5%) and host reads
// 11.7% (lo 8.6%), the state file 6.2%, Diff 5.3%, opening netlink
// sockets 4.9%. Refresh's reads share one provider.Snapshot, through
// which a switch's ports come from one dump of its links: a plan's
// requests 4018 -> 3011 (perf stat -e syscalls:sys_enter_sendto), its
// CPU unchanged within the noise (mean 0.82 s both, 8 plans each
// alternating at load 2.5-3; 0.98 against 1.00 s, 6 each at load 8.5).
// With GOGC back at 100 too, `flock /work/.netns.lock env BASE=main
// ROUNDS=3 SETTLE=3 bench/provision-1000/run.sh` (this tree against
// bc54f03, load 10-13): CPU medians apply 2.54 against 2.77 s, plan 0.73
// against 0.98 (lower in each of the 3 pairs), destroy 1.00 against 1.20
// (each pair), peak RSS 67 against 89 MB; the wall times followed the
// load (apply 3.4-7.9 s both, plan 0.9-2.3, destroy 1.2-2.8), against
// the floor's 2.9 s for the apply in that run: no target met on this
// machine at that load.
//
// It never touches the system itself: every read and change goes through a
// provider.Interface chosen by resource kind. It does not render anything
// either; package view turns plans, events and state into text or JSON.
// It must not know what a namespace or an offload is beyond the attribute
// names in package provider.
package planner
