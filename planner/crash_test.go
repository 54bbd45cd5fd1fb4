package planner_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/tsolab/tsolab/planner"
	"github.com/tsolab/tsolab/provider"
	"github.com/tsolab/tsolab/provider/providertest"
)

// Environment of the child process of TestKill9: the lab directory and
// name it applies the 100-host lab to.
const (
	childDirEnv = "TSOLAB_PLANNER_TEST_CHILD_DIR"
	childLabEnv = "TSOLAB_PLANNER_TEST_CHILD_LAB"
	crashPoint  = "host.h50"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		os.Exit(applyUntilKilled(dir, os.Getenv(childLabEnv)))
	}
	os.Exit(m.Run())
}

// applyUntilKilled is the child of TestKill9: it applies the 100-host lab
// with the real providers; the create of crashPoint, already recorded as
// being created, tells the parent on stdout and never returns, while the
// other changes go on until the parent kills the process.
func applyUntilKilled(dir, lab string) int {
	provs := realProviders()
	hosts := &providertest.Fake{
		ValidateFn: func(req provider.ValidateRequest) provider.ValidateResponse {
			return provs[provider.KindHost].Validate(context.Background(), req)
		},
		CreateFn: func(req provider.CreateRequest) provider.CreateResponse {
			if req.Addr.String() == crashPoint {
				fmt.Println("crash-point")
				io.ReadAll(os.Stdin) // the parent keeps stdin open until it kills us
				os.Exit(1)
			}
			return provs[provider.KindHost].Create(context.Background(), req)
		},
	}
	provs2 := map[provider.Kind]provider.Interface{provider.KindHost: hosts, provider.KindSwitch: provs[provider.KindSwitch], provider.KindNIC: provs[provider.KindNIC]}
	p := planner.New(planner.Options{Dir: dir, Lab: lab, Providers: provs2})
	sc := hundredHosts()
	plan, err := p.Plan(context.Background(), sc.Name, provider.Desired(sc, provider.NewNaming(lab)))
	if err != nil || plan.Diagnostics.HasErrors() {
		fmt.Fprintln(os.Stderr, "plan:", err, plan.Diagnostics)
		return 1
	}
	res, err := p.Apply(context.Background(), plan)
	fmt.Fprintln(os.Stderr, "apply returned, it should have been killed:", err, res.Summary())
	return 1
}

// TestKill9 kills an apply of real namespaces with SIGKILL in the middle,
// then checks that the next apply converges and destroy leaves nothing.
func TestKill9(t *testing.T) {
	p, lab, dir := realLab(t)

	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), childDirEnv+"="+dir, childLabEnv+"="+lab)
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if line != "crash-point\n" {
		child.Process.Kill()
		child.Wait()
		t.Fatalf("child said %q (%v), want crash-point", line, err)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()

	st, err := planner.ReadState(dir)
	if err != nil || st == nil {
		t.Fatalf("state after kill -9: %v, %v", st, err)
	}
	if r := st.Resource(addr(crashPoint)); r == nil || r.Status != planner.StatusCreating {
		t.Errorf("%s after kill -9: %+v, want recorded as being created", crashPoint, r)
	}
	t.Logf("state after kill -9: serial %d, %d resources recorded", st.Serial, len(st.Resources))

	sc := hundredHosts()
	plan, err := p.Plan(context.Background(), sc.Name, provider.Desired(sc, provider.NewNaming(lab)))
	if err != nil || plan.Diagnostics.HasErrors() {
		t.Fatalf("plan after kill -9: %v %v", err, plan.Diagnostics)
	}
	if !plan.HasChanges() {
		t.Fatal("plan after kill -9 has no changes: the child finished?")
	}
	res := mustApply(t, p, plan)
	t.Logf("resume: %s", res.Summary())
	plan, err = p.Plan(context.Background(), sc.Name, provider.Desired(sc, provider.NewNaming(lab)))
	if err != nil || plan.Diagnostics.HasErrors() || plan.HasChanges() {
		t.Errorf("plan after resuming: %v %v %s", err, plan.Diagnostics, plan.Summary())
	}
	if res := mustDestroy(t, p); res.Destroyed != 201 {
		t.Errorf("destroyed %d, want 201", res.Destroyed)
	}
}
