package kernel

import (
	"fmt"
	"sort"

	"github.com/safchain/ethtool"

	"github.com/tsolab/tsolab/result"
)

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
