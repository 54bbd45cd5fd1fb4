lab "tso-basics" {
  description = "back-to-back veth, TSO on and off at MTU 1500 and 9000, 8 streams (the seed 001 table on this machine)"
  engine      = "kernel"
  # The comparisons between scenarios use 8 runs a scenario (Mann-Whitney;
  # bench/stability, docs/status.md). On session 9's main (af91cec) 10
  # runs of the lab gave 0 flips over its 10 verdicts at load 6-28 on the
  # 2-core VM, 1m07s-1m15s a run. On session 12's (435ac4e), before the
  # workload named cc (so under the machine's BBR), 5 runs at load 14-29
  # (bench/stability -n 5 -lock): 0 flips, 1m06s-1m08s a run; the spread
  # of each verdict's margin is beside it below. Under CUBIC (this file
  # at 04723d6), 3 runs at load 6-21: 0 flips, 1m08s-1m11s a run, TSO on
  # 89-102 Gb/s, TSO off 19-21 (MTU 1500) and 57-69 (MTU 9000).
  repeat = 8
}

matrix {
  tso = [true, false]
  mtu = [1500, 9000]
}

host "tx" {}
host "rx" {}

nic "tx0" {
  host    = host.tx
  peer    = nic.rx0
  address = "10.77.1.1/24"
  mtu     = matrix.mtu
  offload = {
    tso     = matrix.tso
    gso     = true
    sg      = true
    tx_csum = true
  }
}

nic "rx0" {
  host    = host.rx
  address = "10.77.1.2/24"
  mtu     = matrix.mtu
}

# cc: CUBIC, Linux's built-in default and the congestion control of the
# model's linux-6 profile. Without it the kernel engine runs this
# machine's net.ipv4.tcp_congestion_control, which new namespaces inherit
# (BBR on the VM the docs' figures come from: it paces in TCP without fq,
# engine/kernel doc.go, What HRTIMER is here), so the lab would measure a
# setting it does not name.
workload "bulk" {
  kind        = "stream"
  client      = host.tx
  servers     = [nic.rx0]
  connections = 8
  write_size  = 65536
  duration    = "2s"
  cc          = "cubic"
}

expect "floor" {
  workload  = workload.bulk
  condition = result.throughput_bps >= 1e9
  message   = "back-to-back veth should carry at least 1 Gb/s"
}

# Both ends of a back-to-back veth run on this machine's cores, and on a
# veth the context that sends also runs much of the receive path, so the
# split between sender and receiver CPU moves from run to run: on the
# 2-core CI VM at MTU 9000 the sender's share alone gave 2.97 ±0.37
# against 3.22 ±0.40 %/Gbps with TSO on and off (8+8 runs, p=0.065, not
# significant). What TSO saves shows in the whole path's CPU per Gb/s
# (cpu_per_gbit: sender + receiver); the same runs gave 6.9 against 12.9
# at MTU 1500, both ends near the two cores' 200%.
expect "tso_cuts_cpu" {
  workload  = workload.bulk
  when      = matrix.tso && matrix.mtu == 1500
  condition = result.cpu_per_gbit < scenario({ tso = false }).cpu_per_gbit
  message   = "TSO should cut the CPU per Gb/s carried (sender and receiver together)"
}

# At MTU 9000 a 64 KB send unit is 7 frames, not 45: the CI runs above gave
# 7.1 against 8.3 %/Gbps, a gap that 8 runs a side showed significant in
# 8 of 10 tries on a loaded 2-core machine (bench/stability). A strict
# "cuts" there would be a coin toss now and then, so the lab claims what
# holds every time: TSO costs no more (<= passes on a significant drop
# and on noise, and fails only on a significant rise). Session 9's engine
# (af91cec) gave 7.2-7.7 against 8.4-9.0, significant (p <= 0.0006) in
# each of the 4 tries it logged, and 6.9-7.3 against 12.9-13.9 at MTU 1500.
# Session 12 (5 runs under BBR, load 14-29): at MTU 9000 6.5-7.0 against 7.8-8.2,
# on/off 0.82-0.86, p=0.00016 each time; at MTU 1500 6.3-6.8 against
# 11.9-12.6, on/off 0.52-0.55. Under CUBIC (3 runs, load 6-21): at MTU
# 9000 1.65-1.70 against 2.45-2.62 (0.65-0.69), at MTU 1500 1.71-1.77
# against 7.90-8.26 (0.22).
expect "tso_no_dearer_at_9000" {
  workload  = workload.bulk
  when      = matrix.tso && matrix.mtu == 9000
  condition = result.cpu_per_gbit <= scenario({ tso = false }).cpu_per_gbit
  message   = "at MTU 9000 TSO should cost no more CPU per Gb/s than TSO off"
}

# Send units are counted where TCP hands them to the device layer
# (eBPF at TCX egress, before software GSO). On Linux >= 4.19 TCP
# builds GSO super-packets whatever the NIC offers ("tcp: switch to GSO
# being always on"), so with TSO off the units are as large as with it
# on (~53 kB on Linux 6.18, ~37 MSS at MTU 1500, ~6 at 9000); TSO only
# decides whether the NIC or the device layer cuts them, which is what
# tso_cuts_cpu measures. (An AF_PACKET tap on the NIC, the
# engine's fallback, sees the software-cut MSS segments instead.)
expect "tcp_builds_super_packets" {
  workload  = workload.bulk
  condition = result.data_packets >= 4 * result.send_units
  message   = "TCP should hand the device layer GSO super-packets several MSS long, with TSO on or off"
}
