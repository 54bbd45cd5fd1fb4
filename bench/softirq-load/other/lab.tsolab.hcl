# Another job's traffic for bench/softirq-load's BESIDE mode: one paced
# stream (BBR paces in TCP without fq: a pacing timer in HRTIMER softirq
# every few tens of µs, in this lab's own threads) on a veth pair of its
# own, long enough to cover a run of the measured cell started 2 s in.
#
#   BESIDE="bench/softirq-load/other tso=true" bench/softirq-load/run.sh LAB CELL BIN...
lab "softirq-other" {
  description = "one BBR stream on its own veth pair, 8 s: another lab's traffic beside a measured run"
  engine      = "kernel"
  repeat      = 1
}

matrix {
  tso = [true, false]
}

host "tx" {}
host "rx" {}

nic "tx0" {
  host    = host.tx
  peer    = nic.rx0
  address = "10.77.56.1/24"
  mtu     = 1500
  offload = {
    tso     = matrix.tso
    gso     = true
    sg      = true
    tx_csum = true
  }
}

nic "rx0" {
  host    = host.rx
  address = "10.77.56.2/24"
  mtu     = 1500
}

workload "bulk" {
  kind        = "stream"
  client      = host.tx
  servers     = [nic.rx0]
  connections = 1
  write_size  = 131072
  duration    = "8s"
  cc          = "bbr"
}
