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
// It never touches the system itself: every read and change goes through a
// provider.Interface chosen by resource kind. It does not render anything
// either; package view turns plans, events and state into text or JSON.
// It must not know what a namespace or an offload is beyond the attribute
// names in package provider.
package planner
