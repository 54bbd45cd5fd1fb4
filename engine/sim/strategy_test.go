package sim

import (
	"strings"
	"testing"

	"github.com/tsolab/tsolab/config"
)

func TestTrim(t *testing.T) {
	const mss = 1448
	tests := []struct {
		name               string
		trim               tsoTrim
		length, off, avail int64
		wantLen            int64
		wantTSO            bool
	}{
		{"before: 1.5 MSS, more queued -> one MSS without TSO", trimBefore{}, 2172, 0, 10000, mss, false},
		{"before: 1.5 MSS empties the buffer -> sent whole", trimBefore{}, 2172, 0, 2172, 2172, true},
		{"before: 3.5 MSS, more queued -> 3 MSS", trimBefore{}, 5068, 0, 10000, 3 * mss, true},
		{"after: 1.5 MSS, more queued -> sent whole as TSO", trimAfter{}, 2172, 0, 10000, 2172, true},
		{"after: 3.5 MSS -> 3 MSS", trimAfter{}, 5068, 0, 10000, 3 * mss, true},
		{"after: 2 MSS exactly -> kept", trimAfter{}, 2 * mss, 0, 10000, 2 * mss, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotLen, gotTSO := tt.trim.trim(tt.length, tt.off, tt.avail, mss)
			if gotLen != tt.wantLen || gotTSO != tt.wantTSO {
				t.Errorf("trim(%d) = %d, %v; want %d, %v", tt.length, gotLen, gotTSO, tt.wantLen, tt.wantTSO)
			}
		})
	}
}

func TestResolveOffloads(t *testing.T) {
	tests := []struct {
		name string
		set  map[config.Offload]bool
		want string
	}{
		{"defaults: all on but lro", nil, "{tso,gso,gro,sg,tx_csum,rx_csum}"},
		{"tso without sg is dropped, gso too", map[config.Offload]bool{config.SG: false}, "{gro,tx_csum,rx_csum}"},
		{"tso without tx_csum is dropped", map[config.Offload]bool{config.TxCsum: false}, "{gso,gro,sg,rx_csum}"},
		{"lro on when asked", map[config.Offload]bool{config.LRO: true, config.TSO: false}, "{gso,gro,lro,sg,tx_csum,rx_csum}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolveOffloads(offloads(tt.set)).String(); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNewProfileOptions(t *testing.T) {
	tests := []struct {
		stack   string
		opts    map[string]string
		wantErr string
	}{
		{"linux-2.6.27", map[string]string{"size_goal_modulo": "false"}, ""},
		{"linux-2.6.27", map[string]string{"size_goal_modulo": "maybe"}, `write "true" or "false"`},
		{"linux-2.6.27", map[string]string{"nagle": "false"}, `has no option "nagle": use one of size_goal_modulo, tso_defer`},
		{"linux-2.6.12", map[string]string{"tso_defer": "false"}, "takes no stack_options"},
		{"linux-3", nil, "unknown stack"},
	}
	for _, tt := range tests {
		t.Run(tt.stack, func(t *testing.T) {
			_, err := newProfile(tt.stack, tt.opts)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("got error %v, want none", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestSizeGoal(t *testing.T) {
	tests := []struct {
		name   string
		goal   sizeGoal
		cwnd   int64
		gso    bool
		maxWnd int64
		want   int64
	}{
		{"2.6.12: cwnd/8 segments", largeMSS2612{winDivisor: 8}, 80, true, 1 << 20, 10 * 1448},
		{"2.6.12: at most 64 KB", largeMSS2612{winDivisor: 8}, 1000, true, 1 << 20, 45 * 1448},
		{"2.6.12: no TSO -> MSS", largeMSS2612{winDivisor: 8}, 1000, false, 1 << 20, 1448},
		{"2.6.13: 64 KB rounded to MSS", xmitSizeGoal{gsoMax: 65535, modulo: true}, 10, true, 1 << 20, 45 * 1448},
		{"2.6.27 without modulo", xmitSizeGoal{gsoMax: 65535, modulo: false}, 10, true, 1 << 20, 65535 - 52},
		{"half the peer's window", xmitSizeGoal{gsoMax: 65535, modulo: true}, 10, true, 20000, 6 * 1448},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ep := &endpoint{mss: 1448}
			ep.snd.cwnd, ep.snd.gso, ep.snd.maxWnd = tt.cwnd, tt.gso, tt.maxWnd
			if got := tt.goal.goal(ep); got != tt.want {
				t.Errorf("goal = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestEventQueueOrder(t *testing.T) {
	var q eventQueue
	at := []int64{50, 10, 30, 10, 40, 20, 10}
	for i, a := range at {
		q.push(a, evAppRun, int32(i))
	}
	var got []int32
	for q.len() > 0 {
		got = append(got, q.pop().id)
	}
	want := []int32{1, 3, 6, 5, 2, 4, 0} // by time, ties in insertion order
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pop order = %v, want %v", got, want)
		}
	}
}
