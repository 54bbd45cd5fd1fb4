# Seed 000 (netdev, June 2005): "TCP: The Road to Super TSO", nine patches
# to the 2.6.12 output path. linux-2.6.12 is the stack before them,
# linux-2.6.13 after; one lab, three workloads, one per fixed behaviour:
#
#   2/9 quick-ack decremented by pcount: a TSO frame of N segments counts
#       N packets against tp->ack.quick, not one. In the model this changes
#       no ACK of a request/response flow: a side that sends data within
#       the ATO of receiving enters pingpong mode, which switches quickack
#       off before the count matters (tcp_event_data_sent).
#   6/9 no extra cwnd validation in __tcp_push_pending_frames: 2.6.12
#       validated the cwnd on every push, sending or not, so a sender
#       pushing small writes shrank its cwnd (RFC 2861) far more often.
#   9/9 nonagle handling: 2.6.12 pushed the whole queue with
#       TCP_NAGLE_PUSH whenever the send head was not the tail, so the
#       small tail buffer escaped Nagle; 2.6.13 holds it.
# The 2.6.13 profile also has the series' TSO deferral and 64 KB size
# goal, which is what the request/response workload shows.
#
# cwnd_mean_segments and acks_quick are metrics of the sim engine only.
lab "super-tso-patches" {
  description = "linux-2.6.12 vs linux-2.6.13: what each fixed behaviour of the Super TSO series changes (seed 000)"
  engine      = "sim"
}

matrix {
  stack = ["linux-2.6.12", "linux-2.6.13"]
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
    tso     = true
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

# Patch 2/9 and the TSO deferral: 64 KB requests as TSO frames.
workload "rr_quickack" {
  kind          = "rr"
  client        = host.tx
  servers       = [nic.rx0]
  concurrency   = 1
  request_size  = 65000
  response_size = 3000
  duration      = "1s"
}

# Patch 9/9: small writes that leave a partial buffer at the tail.
workload "small_writes" {
  kind       = "stream"
  client     = host.tx
  servers    = [nic.rx0]
  write_size = 1000
  duration   = "1s"
}

expect "tail_held_by_nagle" {
  workload  = workload.small_writes
  when      = matrix.stack == "linux-2.6.13"
  condition = result.send_units < scenario({ stack = "linux-2.6.12" }).send_units
  message   = "patch 9/9: with Nagle applied to the tail buffer the NIC gets fewer, larger sends"
}

expect "cwnd_not_shrunk_by_pushes" {
  workload  = workload.small_writes
  when      = matrix.stack == "linux-2.6.13"
  condition = result.cwnd_mean_segments > scenario({ stack = "linux-2.6.12" }).cwnd_mean_segments * 1.2
  message   = "patch 6/9: validating the cwnd only when something was sent keeps it larger"
}

expect "quickack_unchanged_for_rr" {
  workload  = workload.rr_quickack
  when      = matrix.stack == "linux-2.6.13"
  condition = result.acks_quick == scenario({ stack = "linux-2.6.12" }).acks_quick
  message   = "patch 2/9: pingpong mode turns quickack off for request/response before the count matters"
}

expect "deferral_builds_tso_frames" {
  workload  = workload.rr_quickack
  when      = matrix.stack == "linux-2.6.13"
  condition = result.avg_send_bytes > 2 * scenario({ stack = "linux-2.6.12" }).avg_send_bytes
  message   = "Super TSO: deferral and the 64 KB size goal hand the NIC larger frames than 2.6.12's cwnd/8 goal"
}
