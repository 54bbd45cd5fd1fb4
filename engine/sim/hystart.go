package sim

import "math"

// hyStart is CUBIC's hybrid slow start as net/ipv4/tcp_cubic.c of Linux
// 6.x has it (linux-6 here; Linux 2.6.29 brought it, 2.6.27 and before
// had none). cubictcp_acked passes each ACK's RTT sample (the sample of
// the last buffer it acknowledged, ack_sample.rtt_us) to hystart_update
// while in slow start and no exit point is found yet. Samples are grouped
// in rounds: a round ends when snd_una passes the snd_nxt of the round's
// start (bictcp_hystart_reset). Two detectors end slow start by setting
// ssthresh to cwnd, both only once cwnd reaches hystart_low_window (16):
//
//   - ACK train (HYSTART_ACK_TRAIN): while ACKs come at most
//     hystart_ack_delta_us (2 ms) apart, the train is "long" when it has
//     lasted more than delay_min plus hystart_ack_delay (the time of four
//     GSO frames at the pacing rate, at most 1 ms), halved when the socket
//     is not paced (SK_PACING_NONE: no SO_MAX_PACING_RATE, no fq).
//   - Delay increase (HYSTART_DELAY): the least of the round's first
//     HYSTART_MIN_SAMPLES (8) samples and every later one exceeds
//     delay_min by clamp(delay_min/8, 4 ms, 16 ms) (HYSTART_DELAY_THRESH).
//
// Linux counts in microseconds; the model in nanoseconds, so its
// thresholds are not rounded to the microsecond.
type hyStart struct {
	found      bool  // the exit point is found (ca->found)
	roundStart int64 // ns, when the round began (ca->round_start)
	lastAck    int64 // ns, the last ACK of the current train (ca->last_ack)
	endSeq     int64 // snd_nxt when the round began (ca->end_seq)
	currRTT    int64 // ns, least sample of the round (ca->curr_rtt)
	sampleCnt  int   // samples counted this round, up to hystartMinSamples (ca->sample_cnt)
	delayMin   int64 // ns, CUBIC's least RTT sample (ca->delay_min); 0 = none yet
}

// tcp_cubic.c's HyStart constants, in ns where they are times.
const (
	hystartMinSamples = 8    // HYSTART_MIN_SAMPLES
	hystartDelayMin   = 4e6  // HYSTART_DELAY_MIN, 4 ms
	hystartDelayMax   = 16e6 // HYSTART_DELAY_MAX, 16 ms
	hystartLowWindow  = 16   // hystart_low_window, segments
	hystartAckDelta   = 2e6  // hystart_ack_delta_us, 2 ms
)

// reset is bictcp_hystart_reset: a new round from now, ending when
// snd_una passes sndNxt.
func (h *hyStart) reset(now, sndNxt int64) {
	h.roundStart, h.lastAck = now, now
	h.endSeq = sndNxt
	h.currRTT = math.MaxInt64
	h.sampleCnt = 0
}

// acked is cubictcp_acked for an ACK with RTT sample rtt (ns) at now;
// epochStart is CUBIC's epoch (ns, 0 = none): samples within a second of
// it, right after a recovery, are not taken.
func (h *hyStart) acked(ep *endpoint, now, rtt, epochStart int64) {
	if epochStart != 0 && now-epochStart < 1e9 {
		return
	}
	delay := max(rtt, 1)
	if h.delayMin == 0 || h.delayMin > delay {
		h.delayMin = delay
	}
	if s := &ep.snd; !h.found && s.cwnd < s.ssthresh {
		h.update(ep, now, delay)
	}
}

// update is hystart_update.
func (h *hyStart) update(ep *endpoint, now, delay int64) {
	s := &ep.snd
	if s.sndUna > h.endSeq {
		h.reset(now, s.sndNxt)
	}
	if s.cwnd < hystartLowWindow {
		return
	}
	if now-h.lastAck <= hystartAckDelta {
		h.lastAck = now
		// The threshold is at least delay_min (halved unpaced): the ACK
		// delay, a division, only counts past that.
		paced := s.paceBps > 0
		train := now - h.roundStart
		if paced && train > h.delayMin || !paced && train > h.delayMin>>1 {
			threshold := h.delayMin + ackDelay(s, ep.mss)
			if !paced {
				threshold >>= 1 // SK_PACING_NONE
			}
			if train > threshold {
				h.exit(s)
			}
		}
	}
	h.currRTT = min(h.currRTT, delay)
	if h.sampleCnt < hystartMinSamples {
		h.sampleCnt++
	} else if h.currRTT > h.delayMin+min(max(h.delayMin>>3, hystartDelayMin), hystartDelayMax) {
		h.exit(s)
	}
}

// exit ends slow start: ssthresh = cwnd.
func (h *hyStart) exit(s *sender) {
	h.found = true
	s.ssthresh = s.cwnd
}

// ackDelay is hystart_ack_delay, ns: four GSO frames (sk_gso_max_size)
// at the pacing rate (already doubled in slow start), at most 1 ms; 0
// without a rate.
func ackDelay(s *sender, mss int64) int64 {
	rate := s.pacingRate(mss) / 8 // bytes/s
	if rate <= 0 {
		return 0
	}
	return min(1e6, int64(skGSOMaxSize*4*1e9/rate))
}
