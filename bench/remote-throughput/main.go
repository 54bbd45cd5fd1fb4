// Command remote-throughput compares a stream between two namespaces run
// through a machine's agent with the same stream run locally (issue 10:
// the control path must not slow the data path). See run.sh.
//
// It starts a real OpenSSH server in a namespace of its own that stands
// for machine r1 (package remotetest), and applies two labs from the
// controller's namespace: "remote", a sender tx here and a receiver rx on
// r1 joined by the cable (a veth pair, one end moved into each host), and
// "local", the same two hosts both here joined by a veth pair tsolab
// makes. Both data paths are one veth pair between two namespaces of this
// kernel, at the same MTU and offloads; only where each side's threads
// run differs (the receiver in r1's agent, driven over SSH). Each round
// runs `tsolab run` on both, the order alternating by round, and the
// ratio remote/local of that round's throughput is one pair; the median
// over the rounds is printed with the target.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tsolab/tsolab/provider/host/netnsfs"
	"github.com/tsolab/tsolab/remote/remotetest"
)

// target is the least median ratio remote/local the issue accepts.
const target = 0.95

// workload is the stream every lab runs (connections, duration).
const workload = `
workload "bulk" {
  kind        = "stream"
  client      = host.tx
  servers     = [nic.rx0]
  connections = %d
  duration    = "%s"
}
`

// machineR1 declares machine r1, reached through the lab's variables.
const machineR1 = `
variable "r1_address" { type = string }
variable "r1_identity" { type = string }
variable "r1_known_hosts" { type = string }

machine "r1" {
  address       = var.r1_address
  user          = "root"
  identity_file = var.r1_identity
  known_hosts   = var.r1_known_hosts
}
`

const labCommon = `
host "tx" {}
` + workload

const remoteLab = `
lab "rthru-remote" {}
` + machineR1 + `
host "rx" {
  machine = machine.r1
}

nic "tx0" {
  host    = host.tx
  device  = "cable0"
  address = "10.79.0.1/24"
  mtu     = %d
  offload = { tso = true, sg = true, tx_csum = true }
}

nic "rx0" {
  host    = host.rx
  device  = "cable0"
  address = "10.79.0.2/24"
  mtu     = %d
}
`

// agentLab has both hosts on r1, joined by a veth pair its agent makes:
// the whole stream runs in the agent, as the local lab runs in tsolab.
const agentLab = `
lab "rthru-agent" {}
` + machineR1 + `
host "tx" {
  machine = machine.r1
}

host "rx" {
  machine = machine.r1
}

nic "tx0" {
  host    = host.tx
  peer    = nic.rx0
  address = "10.79.2.1/24"
  mtu     = %d
  offload = { tso = true, sg = true, tx_csum = true }
}

nic "rx0" {
  host    = host.rx
  address = "10.79.2.2/24"
  mtu     = %d
}
` + workload

const localLab = `
lab "rthru-local" {}

host "rx" {}

nic "tx0" {
  host    = host.tx
  peer    = nic.rx0
  address = "10.79.1.1/24"
  mtu     = %d
  offload = { tso = true, sg = true, tx_csum = true }
}

nic "rx0" {
  host    = host.rx
  address = "10.79.1.2/24"
  mtu     = %d
}
`

func main() {
	rounds := flag.Int("r", 10, "rounds (pairs of runs)")
	mtu := flag.Int("mtu", 9000, "MTU of both labs' veth")
	conns := flag.Int("c", 1, "connections of the stream")
	dur := flag.String("d", "3s", "duration of each run")
	bin := flag.String("tsolab", "", "the tsolab binary (built by run.sh)")
	agent := flag.Bool("agent", false, "also run the stream wholly in r1's agent (both hosts there): apart from the agent's own cost, does splitting the sides between two processes cost?")
	flag.Parse()
	if err := bench(*bin, *rounds, *mtu, *conns, *dur, *agent); err != nil {
		fmt.Fprintln(os.Stderr, "remote-throughput:", err)
		os.Exit(1)
	}
}

func bench(bin string, rounds, mtu, conns int, dur string, agent bool) (err error) {
	work, err := os.MkdirTemp("", "rthru-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	s, err := remotetest.StartIn(filepath.Join(work, "sshd"))
	if err != nil {
		return err
	}
	defer s.Close()
	env := append(os.Environ(),
		"TSOLAB_VAR_r1_address="+s.Addr.String(),
		"TSOLAB_VAR_r1_identity="+s.IdentityFile,
		"TSOLAB_VAR_r1_known_hosts="+s.KnownHosts)
	labs := map[string]string{
		"remote": fmt.Sprintf(remoteLab, mtu, mtu) + fmt.Sprintf(labCommon, conns, dur),
		"local":  fmt.Sprintf(localLab, mtu, mtu) + fmt.Sprintf(labCommon, conns, dur),
	}
	names := []string{"local", "remote"}
	if agent {
		labs["agent"] = fmt.Sprintf(agentLab, mtu, mtu, conns, dur)
		names = append(names, "agent")
	}
	tsolab := func(args ...string) ([]byte, error) {
		cmd := exec.Command("nsenter", append([]string{"--net=" + netnsfs.Path(s.ClientNS), "--", bin}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil {
			return out, fmt.Errorf("tsolab %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out, nil
	}
	for _, name := range names {
		src := labs[name]
		dir := filepath.Join(work, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "lab.tsolab.hcl"), []byte(src), 0o644); err != nil {
			return err
		}
		if _, err := tsolab("apply", "-auto-approve", dir); err != nil {
			return err
		}
		defer func() {
			if _, derr := tsolab("destroy", "-auto-approve", dir); derr != nil && err == nil {
				err = derr
			}
		}()
	}
	run := func(name string, round int) (float64, error) {
		out := filepath.Join(work, fmt.Sprintf("%s-%d.json", name, round))
		if _, err := tsolab("run", "-engine", "kernel", "-json", out, filepath.Join(work, name)); err != nil {
			return 0, err
		}
		return throughput(out)
	}
	fmt.Printf("# stream tx -> rx, %d connection(s), %s, MTU %d, TSO on; %d rounds, the order rotating by round\n", conns, dur, mtu, rounds)
	ratios, err := measure(names, rounds, run)
	if err != nil {
		return err
	}
	if agent {
		med, lo, hi := median(ratios["agent"])
		fmt.Printf("median ratio agent/local %.3f (min %.3f, max %.3f): both sides in r1's agent\n", med, lo, hi)
	}
	med, lo, hi := median(ratios["remote"])
	verdict := "met"
	if med < target {
		verdict = "MISSED"
	}
	fmt.Printf("median ratio remote/local %.3f (min %.3f, max %.3f): target >= %.2f %s\n", med, lo, hi, target, verdict)
	if med < target {
		return fmt.Errorf("target missed")
	}
	return nil
}

// measure runs every lab once a round, the order rotating by round, and
// prints each round's throughputs and their ratios to the local lab's,
// which it returns by lab.
func measure(names []string, rounds int, run func(name string, round int) (float64, error)) (map[string][]float64, error) {
	fmt.Printf("%-6s", "round")
	for _, n := range names {
		fmt.Printf(" %11s", n+" Gb/s")
	}
	for _, n := range names[1:] {
		fmt.Printf(" %8s", n+"/l")
	}
	fmt.Println()
	ratios := map[string][]float64{}
	for r := range rounds {
		// Each round rotates the order, so none is always first.
		order := append(append([]string(nil), names[r%len(names):]...), names[:r%len(names)]...)
		got := map[string]float64{}
		for _, name := range order {
			bps, err := run(name, r)
			if err != nil {
				return nil, err
			}
			got[name] = bps
		}
		fmt.Printf("%-6d", r+1)
		for _, n := range names {
			fmt.Printf(" %11.2f", got[n]/1e9)
		}
		for _, n := range names[1:] {
			ratios[n] = append(ratios[n], got[n]/got["local"])
			fmt.Printf(" %8.3f", got[n]/got["local"])
		}
		fmt.Println()
	}
	return ratios, nil
}

// median returns the median, the least and the greatest of xs.
func median(xs []float64) (med, lo, hi float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	med = s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return med, s[0], s[len(s)-1]
}

// throughput reads the one run's throughput from a results file.
func throughput(path string) (float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var res struct {
		Runs []struct {
			Metrics map[string]float64 `json:"metrics"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return 0, err
	}
	if len(res.Runs) != 1 {
		return 0, fmt.Errorf("%s: %d runs, want 1", path, len(res.Runs))
	}
	return res.Runs[0].Metrics["throughput_bps"], nil
}
