lab "two-receivers" {
  description = "one sender, two receivers through a switch"
  engine      = "kernel"   # "kernel" (real namespaces) or "sim" (the model); -engine overrides
}

variable "mtu" {
  type    = number
  default = 1500
}

matrix {                   # every combination is one scenario; absent = one scenario
  tso = [true, false]
}

host "tx" {
  sysctl = { "net.ipv4.tcp_wmem" = "4096 1048576 4194304" }
}
host "rx1" {}
host "rx2" {}

switch "sw" {}             # a Linux bridge in a namespace of its own

nic "tx0" {
  host    = host.tx
  connect = switch.sw      # a veth to the switch; `peer = nic.X` makes a back-to-back pair instead
  address = "10.77.0.1/24"
  mtu     = var.mtu
  rate    = "2gbit"        # optional egress shaping (tbf)
  offload = {
    tso     = matrix.tso
    gso     = true
    gro     = true
    sg      = true
    tx_csum = true
  }
}
nic "rx1" {
  host    = host.rx1
  connect = switch.sw
  address = "10.77.0.2/24"
  mtu     = var.mtu
}
nic "rx2" {
  host    = host.rx2
  connect = switch.sw
  address = "10.77.0.3/24"
  mtu     = var.mtu
}

workload "bulk" {
  kind        = "stream"   # stream | rr | sendfile
  client      = host.tx
  servers     = [nic.rx1, nic.rx2]
  connections = 4          # per server
  write_size  = 65536
  duration    = "3s"       # or bytes = "100MB"
}

expect "floor" {
  workload  = workload.bulk
  condition = result.throughput_bps >= 1e8
  message   = "the lab should carry at least 100 Mb/s"
}
expect "tso_helps" {
  workload  = workload.bulk
  when      = matrix.tso
  condition = result.cpu_tx_pct <= scenario({ tso = false }).cpu_tx_pct * 1.5
}
