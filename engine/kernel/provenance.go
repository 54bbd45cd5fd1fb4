package kernel

import (
	"fmt"
	"sort"

	"github.com/safchain/ethtool"

	"github.com/tsolab/tsolab/engine"
	"github.com/tsolab/tsolab/provenance"
	"github.com/tsolab/tsolab/result"
)

// readProvenance reads what a run ran on: every NIC's driver, firmware,
// bus and features in force (the ethtool driver-info and features
// ioctls), and every host's TCP sysctls, each inside its namespace. What
// it cannot read it leaves out and names in a note.
func readProvenance(req engine.RunRequest) (*result.Run, []string) {
	run := &result.Run{Sysctls: map[string]map[string]string{}}
	var notes []string
	for _, n := range req.Scenario.NICs {
		nic, err := nicProvenance(hostNS(req, n.Host), ifName(n))
		if err != nil {
			notes = append(notes, fmt.Sprintf("nic.%s: provenance: %v", n.Name, err))
			continue
		}
		nic.Name, nic.Host = n.Name, n.Host
		run.NICs = append(run.NICs, nic)
	}
	sort.Slice(run.NICs, func(i, j int) bool { return run.NICs[i].Name < run.NICs[j].Name })
	for _, h := range req.Scenario.Hosts {
		var vals map[string]string
		err := inNamespace(hostNS(req, h.Name), func() error {
			vals = provenance.ReadTCPSysctls()
			return nil
		})
		if err != nil {
			notes = append(notes, fmt.Sprintf("host.%s: provenance: %v", h.Name, err))
			continue
		}
		run.Sysctls[h.Name] = vals
	}
	return run, notes
}

// nicProvenance reads one interface's driver information and features.
func nicProvenance(ns, ifname string) (result.NIC, error) {
	nic := result.NIC{Interface: ifname}
	err := inNamespace(ns, func() error {
		e, err := ethtool.NewEthtool()
		if err != nil {
			return err
		}
		defer e.Close()
		info, err := e.DriverInfo(ifname)
		if err != nil {
			return fmt.Errorf("driver info of %s: %w", ifname, err)
		}
		nic.Driver, nic.DriverVersion = info.Driver, info.Version
		nic.Firmware, nic.Bus = info.FwVersion, info.BusInfo
		feats, err := e.Features(ifname)
		if err != nil {
			return fmt.Errorf("features of %s: %w", ifname, err)
		}
		for f, on := range feats {
			if on {
				nic.Features = append(nic.Features, f)
			}
		}
		sort.Strings(nic.Features)
		return nil
	})
	return nic, err
}
