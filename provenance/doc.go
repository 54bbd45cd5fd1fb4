// Package provenance says where a result came from: which tsolab (version
// and VCS revision), which lab (a hash of its files, its git commit and
// whether its files differ from it), which variables, which machine
// (kernel release, CPU model and count), and, filled in by the engine that
// ran, every NIC's driver, firmware, bus and features as read back, the TCP
// sysctls that shape a result, or the model's stack and CPU profiles.
//
// It owns the collecting and the comparing: New (the tool from its build
// information, the lab from its files, git commit and variables, the
// machine), HashFiles (files named with their SHA-256: the lab's, and the
// model's profile files), ReadTCPSysctls, and Compare and CompareRun,
// which list what differs between two records (a baseline from another
// kernel, driver or lab revision). The records it fills in and compares
// (result.Provenance, result.Run and their parts) live in package result,
// beside the results that carry them, so that result is a leaf.
//
// It reads files and /proc and the lab's git repository (with go-git,
// never by running git); it never touches a lab's namespaces, which the
// kernel engine reads itself.
package provenance
