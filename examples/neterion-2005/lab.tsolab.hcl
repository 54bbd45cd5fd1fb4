# Seed 001 (netdev, June 2005): Neterion's numbers from "The Road to Super
# TSO". A four-way Opteron sends 8 nttcp streams to each of two dual
# Opteron receivers through a switch, on PCI-X 1.0 (~7.5 Gb/s of TCP
# traffic), writes of 65535 bytes at MTU 1500 and 300000 at MTU 9000.
# 2.6.12-rc4: TSO off 2.5 Gb/s @ 55% / on 4.0 @ 47% (1500);
#             off 5.3 @ 40% / on 6.1 @ 35% (9000).
# The seed's CPU is a share of the whole 4-CPU machine; cpu_tx_pct is % of
# one core, so the expectations divide by 4. The sender's cpu profile is
# calibrated on the TSO-off rows; the TSO-on rows are the model's
# predictions (docs/engine.md shows both tables).
lab "neterion-2005" {
  description = "TSO on/off x MTU 1500/9000, 16 streams to two receivers, linux-2.6.12 (seed 001)"
  engine      = "sim"
}

matrix {
  tso = [false, true]
  mtu = [1500, 9000]
}

host "tx" {
  stack = "linux-2.6.12"
  cpu   = "opteron-2005"
  cores = 4
  bus   = "7.5gbit"
}

host "rx1" {
  stack = "linux-2.6.12"
  cpu   = "opteron-2005-rx"
  cores = 2
}

host "rx2" {
  stack = "linux-2.6.12"
  cpu   = "opteron-2005-rx"
  cores = 2
}

switch "sw" {}

nic "tx0" {
  host    = host.tx
  connect = switch.sw
  address = "10.5.0.1/24"
  mtu     = matrix.mtu
  offload = {
    tso     = matrix.tso
    sg      = true
    tx_csum = true
  }
}

nic "rx1" {
  host    = host.rx1
  connect = switch.sw
  address = "10.5.0.2/24"
  mtu     = matrix.mtu
}

nic "rx2" {
  host    = host.rx2
  connect = switch.sw
  address = "10.5.0.3/24"
  mtu     = matrix.mtu
}

workload "nttcp" {
  kind        = "stream"
  client      = host.tx
  servers     = [nic.rx1, nic.rx2]
  connections = 8
  write_size  = matrix.mtu == 1500 ? 65535 : 300000
  duration    = "2s"
}

# The seed's table, cell by cell, within 20%.
expect "off_1500" {
  workload  = workload.nttcp
  when      = !matrix.tso && matrix.mtu == 1500
  condition = abs(result.throughput_bps / 2.5e9 - 1) <= 0.2 && abs(result.cpu_tx_pct / 4 / 55 - 1) <= 0.2
  message   = "seed: TSO off, MTU 1500: 2.5 Gb/s at 55% CPU (calibration row)"
}

expect "on_1500" {
  workload  = workload.nttcp
  when      = matrix.tso && matrix.mtu == 1500
  condition = abs(result.throughput_bps / 4.0e9 - 1) <= 0.2 && abs(result.cpu_tx_pct / 4 / 47 - 1) <= 0.2
  message   = "seed: TSO on, MTU 1500: 4.0 Gb/s at 47% CPU (prediction)"
}

expect "off_9000" {
  workload  = workload.nttcp
  when      = !matrix.tso && matrix.mtu == 9000
  condition = abs(result.throughput_bps / 5.3e9 - 1) <= 0.2 && abs(result.cpu_tx_pct / 4 / 40 - 1) <= 0.2
  message   = "seed: TSO off, MTU 9000: 5.3 Gb/s at 40% CPU (calibration row)"
}

expect "on_9000" {
  workload  = workload.nttcp
  when      = matrix.tso && matrix.mtu == 9000
  condition = abs(result.throughput_bps / 6.1e9 - 1) <= 0.2 && abs(result.cpu_tx_pct / 4 / 35 - 1) <= 0.2
  message   = "seed: TSO on, MTU 9000: 6.1 Gb/s at 35% CPU (prediction)"
}

expect "tso_helps" {
  workload  = workload.nttcp
  when      = matrix.tso
  condition = result.throughput_bps > scenario({ tso = false }).throughput_bps && result.cpu_tx_per_gbit < scenario({ tso = false }).cpu_tx_per_gbit
  message   = "TSO should carry more per CPU cycle at either MTU"
}
