lab "two-machines" {
  description = "a sender on this machine, a receiver on machine r1 reached over SSH, joined by a cable between two ports"
  engine      = "sim"
}

# The model runs it as it is (tsolab test examples/two-machines). On the
# real machines, `sudo tsolab test -engine kernel examples/two-machines`
# applies each scenario on both, runs every workload with each side on
# its host's machine (rx's in r1's agent) and destroys the lab; the
# results name each side's machine (runs[].sides).
#
# Set these to reach your receiver machine: TSOLAB_VAR_r1_address=10.1.2.3
# (or -var r1_address=10.1.2.3), and the same for the others. The default
# address is this machine's loopback, which reaches nothing unless an SSH
# server listens there.
variable "r1_address" {
  type        = string
  default     = "127.0.0.1"
  description = "r1's address"
}

variable "r1_identity" {
  type        = string
  default     = "~/.ssh/id_ed25519"
  description = "the private key r1 accepts for root"
}

variable "r1_known_hosts" {
  type        = string
  default     = "~/.ssh/known_hosts"
  description = "the known_hosts file that records r1's host key"
}

variable "tx_port" {
  type        = string
  default     = "cable0"
  description = "this machine's port on the cable"
}

variable "rx_port" {
  type        = string
  default     = "cable0"
  description = "r1's port on the cable"
}

matrix {
  tso = [true, false]
}

machine "r1" {
  address       = var.r1_address
  user          = "root"
  identity_file = var.r1_identity
  known_hosts   = var.r1_known_hosts
}

host "tx" {}

host "rx" {
  machine = machine.r1
}

nic "tx0" {
  host    = host.tx
  device  = var.tx_port
  address = "10.78.0.1/24"
  mtu     = 9000
  offload = { tso = matrix.tso, sg = true, tx_csum = true }
}

nic "rx0" {
  host    = host.rx
  device  = var.rx_port
  address = "10.78.0.2/24"
  mtu     = 9000
}

# cc: CUBIC, Linux's built-in default and the congestion control of the
# model's linux-6 profile. Without it each machine's sender runs that
# machine's net.ipv4.tcp_congestion_control (BBR on the VM the docs'
# figures come from: it paces in TCP without fq, engine/kernel doc.go,
# What HRTIMER is here), so the lab would measure a setting it does not
# name, and one that may differ between the two machines.
#
# Each side runs where its host is: the kernel engine sends from tx on
# this machine and receives in rx on r1, through r1's agent.
workload "bulk" {
  kind     = "stream"
  client   = host.tx
  servers  = [nic.rx0]
  duration = "2s"
  cc       = "cubic"
}

# The other way: rx on r1 sends, in its agent there, where the eBPF
# counter counts its send units; tx here receives.
workload "bulk_back" {
  kind     = "stream"
  client   = host.rx
  servers  = [nic.tx0]
  duration = "2s"
  cc       = "cubic"
}

workload "ping_pong" {
  kind          = "rr"
  client        = host.tx
  servers       = [nic.rx0]
  request_size  = 64
  response_size = 64
  duration      = "1s"
  cc            = "cubic"
}

# The model's claim; on this machine's veth cable the CPU TSO saves is
# within the noise of a loaded machine (examples/tso-basics measures it).
expect "tso_cuts_sender_cpu" {
  workload  = workload.bulk
  when      = matrix.tso && engine == "sim"
  condition = result.cpu_tx_pct < scenario({ tso = false }).cpu_tx_pct
  message   = "TSO should cut the sender's CPU"
}

# What the kernel engine measures across the machines: the eBPF counter
# on tx's machine sees TCP hand its device GSO super-packets, TSO on or
# off (Linux >= 4.19), and the cable carries the stream and the
# transactions.
expect "tcp_builds_super_packets" {
  workload  = workload.bulk
  when      = engine == "kernel"
  condition = result.data_packets >= 4 * result.send_units
  message   = "TCP on tx should hand the device layer super-packets several MSS long"
}

expect "r1_builds_super_packets" {
  workload  = workload.bulk_back
  when      = engine == "kernel"
  condition = result.data_packets >= 4 * result.send_units
  message   = "TCP on rx (machine r1) should hand the device layer super-packets several MSS long"
}

expect "stream_crosses" {
  workload  = workload.bulk
  when      = engine == "kernel"
  condition = result.throughput_bps >= 1e8
  message   = "the stream from tx to rx on r1 should carry at least 100 Mb/s"
}

expect "transactions_cross" {
  workload  = workload.ping_pong
  when      = engine == "kernel"
  condition = result.transactions_per_s >= 100
  message   = "rr between tx and rx on r1 should make at least 100 transactions a second"
}
