# ci.awk: a distribution-free confidence interval of the median of n
# numbers, one a line, sorted (sort -g): prints "lo hi coverage%", the
# order statistics x(k) and x(n+1-k), k the largest with
# P(Binomial(n, 1/2) < k) <= 2.5%, so that the interval covers the true
# median with >= 95%. Below 6 numbers no k does, and the interval is the
# lowest to the highest with less coverage (93.8% at 5, 87.5% at 4).
#
# The benchmarks that compare two runs in pairs (bench/iperf-compare,
# bench/capture-cost) decide their targets on it: met when the whole
# interval of the median of the per-pair ratios is on the target's side,
# missed when it is all on the other side, unresolved otherwise.
#
#   sort -g | awk -f bench/pairs/ci.awk
{ x[NR] = $1 }
END {
	n = NR; k = 0; c = 0; p = 0.5 ^ n
	for (i = 0; i < n; i++) { if (c + p > 0.025) break; c += p; k = i + 1; p = p * (n - i) / (i + 1) }
	if (k < 1) { k = 1; c = 0.5 ^ n }
	printf "%.1f %.1f %.1f", x[k], x[n + 1 - k], 100 * (1 - 2 * c)
}
