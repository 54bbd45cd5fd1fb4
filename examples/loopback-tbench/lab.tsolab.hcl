# Seed 004 (2008): tbench, 8 threads over loopback, TSO/GSO on 354.6 MB/s
# against off 361.4 — segmentation offload on loopback bought nothing and
# cost ~2 %. An rr workload with 8 concurrent connections stands in for
# tbench's clients; responses larger than the loopback MSS make TSO matter.
#
# The loopback device of a namespace host is declared as an adopted device
# (`device = "lo"`) so the lab can set its offloads; it exists in every
# namespace, is never created or deleted, and the sim engine reads the same
# declaration.
lab "loopback-tbench" {
  description = "request/response over loopback, TSO/GSO on vs off (seed 004)"
  engine      = "kernel"
  # 8 runs a scenario: its comparisons are judged on medians with
  # Mann-Whitney, not on one noisy run each.
  repeat = 8
}

matrix {
  tso = [true, false]
}

host "tb" {
  stack = "linux-2.6.27" # the sim engine's profile; the kernel engine notes it runs this kernel
}

nic "loop" {
  host   = host.tb
  device = "lo"
  offload = {
    tso = matrix.tso
    gso = matrix.tso
  }
}

workload "tbench" {
  kind          = "rr"
  client        = host.tb
  servers       = [host.tb]
  loopback      = true
  concurrency   = 8
  request_size  = 256
  response_size = 100000
  nodelay       = true
  duration      = "2s"
}

expect "floor" {
  workload  = workload.tbench
  condition = result.transactions_per_s >= 1000
  message   = "the loopback should answer at least 1000 transactions/s"
}

# Neither engine shows seed 004's direction today, and the tests say so.
# Linux 6.18 (2-core VM): on/off = 0.93-1.03 over 6 pairs of single runs,
# 0.996 as medians of 5 runs each (93004 against 93362 transactions/s):
# five runs cannot tell that from noise, so the verdict is inconclusive
# (cmd/tsolab's kernel-examples.txtar asserts it). The sim engine's
# linux-2.6.27 profile gives TSO on ~5% more with these 100 KB responses
# (issue 11; engine/sim's TestExamples asserts that this fails there).
expect "tso_costs_on_loopback" {
  workload  = workload.tbench
  when      = matrix.tso
  condition = result.transactions_per_s < scenario({ tso = false }).transactions_per_s
  message   = "seed 004: TSO/GSO on loopback made tbench slower (354.6 against 361.4 MB/s)"
}

expect "tso_costs_little_on_loopback" {
  workload  = workload.tbench
  when      = matrix.tso
  condition = result.transactions_per_s >= scenario({ tso = false }).transactions_per_s * 0.75
  message   = "TSO/GSO on loopback should not cost more than 25% of tbench's rate (one run each on a shared VM varies by ~10%)"
}
