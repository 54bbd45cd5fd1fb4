# Seed 000 (netdev, June 2005): "TCP: The Road to Super TSO", nine patches
# to the 2.6.12 output path. linux-2.6.12 is the stack before them,
# linux-2.6.13 after, with the series' new send test, TSO deferral and 64 KB
# size goal; engine/sim's patches_test.go applies each patch to 2.6.12 on
# its own. Of the nine, three change behaviour the model has:
#
#   9/9 nonagle handling: 2.6.12 pushed the whole queue with
#       TCP_NAGLE_PUSH whenever the send head was not the tail, so the
#       small tail buffer escaped Nagle; 2.6.13 holds it. With TSO off,
#       where deferral and the size goal do not apply, this is all that
#       tells the two stacks apart on small writes.
#   6/9 no extra cwnd validation in __tcp_push_pending_frames: on its own
#       it moves the mean cwnd by under 1% in the model (tcp_write_xmit
#       validates at its next send anyway), so no expectation claims it;
#       the larger cwnd of 2.6.13 with TSO on comes from the series' output
#       path, and the lab says so.
#   2/9 quick-ack decremented by pcount: no workload here can show it. A
#       side that sends data within the ATO of receiving enters pingpong
#       mode, which switches quickack off before the count matters, and a
#       receiver that sends nothing never decrements it.
#
# The others move code (3/9, 4/9), re-indent it (7/9) or change what the
# model does not have (skb layout 1/9, driver header sharing 5/9, one
# tcp_current_mss call fewer 8/9).
#
# cwnd_mean_segments is a metric of the sim engine only.
lab "super-tso-patches" {
  description = "linux-2.6.12 vs linux-2.6.13: what each fixed behaviour of the Super TSO series changes (seed 000)"
  engine      = "sim"
}

matrix {
  stack = ["linux-2.6.12", "linux-2.6.13"]
  tso   = [true, false]
}

host "tx" {
  stack = matrix.stack
  cpu   = "opteron-2005"
  cores = 2
}

host "rx" {
  stack = matrix.stack
  cpu   = "opteron-2005"
  cores = 2
}

nic "tx0" {
  host    = host.tx
  peer    = nic.rx0
  address = "10.0.0.1/24"
  mtu     = 1500
  rate    = "1gbit"
  delay   = "50us"
  offload = {
    tso     = matrix.tso
    sg      = true
    tx_csum = true
  }
}

nic "rx0" {
  host    = host.rx
  address = "10.0.0.2/24"
  mtu     = 1500
  rate    = "1gbit"
  delay   = "50us"
}

# cc: Reno, the congestion control of the model's linux-2.6.12 and linux-2.6.13 profiles,
# named so that a kernel run (`-engine kernel,sim`) runs what the model
# runs; without it the kernel engine runs this machine's
# net.ipv4.tcp_congestion_control (BBR on the VM the docs' figures come
# from, which paces in TCP without fq).
#
# The TSO deferral and the size goal: 64 KB requests as TSO frames.
workload "rr_tso" {
  kind          = "rr"
  client        = host.tx
  servers       = [nic.rx0]
  concurrency   = 1
  request_size  = 65000
  response_size = 3000
  duration      = "1s"
  cc            = "reno"
}

# Patch 9/9: small writes that leave a partial buffer at the tail.
workload "small_writes" {
  kind       = "stream"
  client     = host.tx
  servers    = [nic.rx0]
  write_size = 1000
  duration   = "1s"
  cc         = "reno"
}

expect "tail_held_by_nagle" {
  workload  = workload.small_writes
  when      = matrix.stack == "linux-2.6.13" && !matrix.tso
  condition = result.send_units < scenario({ stack = "linux-2.6.12" }).send_units
  message   = "patch 9/9: with Nagle applied to the tail buffer the NIC gets fewer, fuller packets"
}

expect "series_keeps_cwnd_larger" {
  workload  = workload.small_writes
  when      = matrix.stack == "linux-2.6.13" && matrix.tso
  condition = result.cwnd_mean_segments > scenario({ stack = "linux-2.6.12" }).cwnd_mean_segments * 1.2
  message   = "the series' TSO output path (send test, deferral, size goal) uses a larger cwnd than 2.6.12's cwnd/8 large MSS"
}

expect "deferral_builds_tso_frames" {
  workload  = workload.rr_tso
  when      = matrix.stack == "linux-2.6.13" && matrix.tso
  condition = result.avg_send_bytes > 2 * scenario({ stack = "linux-2.6.12" }).avg_send_bytes
  message   = "Super TSO: deferral and the 64 KB size goal hand the NIC larger frames than 2.6.12's cwnd/8 goal"
}
