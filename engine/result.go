package engine

import "github.com/tsolab/tsolab/result"

// The result vocabulary lives in package result; these names keep the
// engines (engine/kernel, engine/sim) and the commands that build results
// reading as before.

type (
	WorkloadResult = result.WorkloadResult
	Results        = result.Results
	Sample         = result.Sample
	CaptureFile    = result.CaptureFile
	Observation    = result.Observation
)

const (
	MetricThroughputBps    = result.MetricThroughputBps
	MetricBytes            = result.MetricBytes
	MetricDurationS        = result.MetricDurationS
	MetricTransactionsPerS = result.MetricTransactionsPerS
	MetricLatencyP50us     = result.MetricLatencyP50us
	MetricLatencyP99us     = result.MetricLatencyP99us
	MetricCPUTxPct         = result.MetricCPUTxPct
	MetricCPURxPct         = result.MetricCPURxPct
	MetricCPUTxPerGbit     = result.MetricCPUTxPerGbit
	MetricSendUnits        = result.MetricSendUnits
	MetricAvgSendBytes     = result.MetricAvgSendBytes
	MetricDataPackets      = result.MetricDataPackets
	MetricSingleMSSFrac    = result.MetricSingleMSSFrac
	MetricRetransmits      = result.MetricRetransmits
	MetricCaptureLoss      = result.MetricCaptureLoss
	MetricCwndMeanSegments = result.MetricCwndMeanSegments
)

// AckKinds is result.AckKinds.
var AckKinds = result.AckKinds

// MetricNames is result.Names: the metrics every engine reports.
func MetricNames() []string { return result.Names() }

// MetricAcks is result.MetricAcks.
func MetricAcks(kind string) string { return result.MetricAcks(kind) }
