package main

import (
	"testing"

	"github.com/tsolab/tsolab/config"
	"github.com/tsolab/tsolab/outcome"
)

func TestJudgeCommand(t *testing.T) {
	lab := &config.Lab{Scenarios: []*config.Scenario{{Name: "tso=true"}, {Name: "tso=false"}, {Name: "tso=off"}}}
	notRun := []outcome.Verdict{{Scenario: "tso=true", Status: outcome.Inconclusive, NotRun: "tso=false"}}
	tests := []struct {
		name     string
		cmd      string
		args     []string
		kind     config.EngineKind
		verdicts []outcome.Verdict
		want     string
	}{
		{"all judged", "run", []string{"lab"}, config.EngineKernel, []outcome.Verdict{{Scenario: "tso=true"}}, ""},
		{"kernel run keeps the lab applied", "run", []string{"lab"}, config.EngineKernel, notRun,
			"tsolab test -keep -scenario tso=true -scenario tso=false lab"},
		{"sim run", "run", []string{"-engine", "sim", "lab"}, config.EngineSim, notRun,
			"tsolab test -scenario tso=true -scenario tso=false -engine sim lab"},
		{"every spelling of -scenario is replaced", "test",
			[]string{"-scenario", "tso=true", "--scenario=tso=true", "-var", "x=a b", "my lab"}, config.EngineKernel, notRun,
			"tsolab test -scenario tso=true -scenario tso=false -var 'x=a b' 'my lab'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := judgeCommand(tt.cmd, tt.args, lab, tt.kind, []string{"tso=true"}, tt.verdicts)
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
