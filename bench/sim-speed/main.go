// Command sim-speed measures the model's speed on the example labs
// against issue 14's target, at least 10 M simulated wire segments per
// CPU second on every cell, and with -base against another revision of
// the tree in the same run, so a change's effect is a ratio taken on one
// machine under one load.
//
//	go run ./bench/sim-speed [-base REV [-same SEEDS]] [-rounds N] [-benchtime 3x] [-cells REGEX] [-instr CELL] [-pgo auto|off|FILE]
//
// It builds engine/sim's test binary from this tree (and, with -base,
// from REV in a temporary git worktree) and runs BenchmarkExamples and
// BenchmarkStream10G -rounds times, the trees alternately and each first
// in turn, each binary in its own tree so that it reads its own example
// labs. It prints, per cell, each tree's median segments per CPU second
// (engine/sim's benchRun: user and system time of the process) and
// events per segment, the median of the per-round ratios new/base, and
// their geometric mean over the cells both trees have. The cells below
// the target are listed, and the exit status is 1 when there are any.
//
// -same SEEDS (with -base; e.g. -same 0,1,2,7) first builds tsolab in
// both trees and runs every example lab of this tree with each, `tsolab
// test -engine sim -seed S -json`, at each seed, and names the labs whose
// results differ in anything but the git commit they record (and the
// first field that does): a change meant to leave the model's results
// alone must pass it. -rounds 0 runs only that.
//
// -pgo says which profile the test binaries are built with (go test
// -pgo): auto, each tree's cmd/tsolab/default.pgo when it has one (the
// profile `go build ./cmd/tsolab` builds the tsolab users run with),
// off, none, or a file for both trees.
//
// -instr CELL (a sub-benchmark name under Examples, e.g.
// 'neterion-2005/tso=true,mtu=1500') runs that cell once more per tree
// under valgrind's cachegrind (GOGC=off GOMAXPROCS=1) and prints the
// instructions per segment the model's code ran (the functions of
// engine/sim), in all and by source file (events.go is the queue, sim.go
// the loop, world.go the wire and the NAPI poll, tcp.go, app.go, output.go
// and profile.go the stack, cpu.go the cores): a count the machine's load
// does not move, for changes smaller than the noise of the rounds. It
// needs valgrind.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// target is issue 14's: simulated wire segments per CPU second.
const target = 10e6

// tree is one build of engine/sim's tests: where it runs (its own
// engine/sim directory) and its binary.
type tree struct {
	name, dir, bin string
	segs, events   map[string][]float64 // by cell, one value a round
}

func main() {
	base := flag.String("base", "", "git revision to measure against in the same run (a temporary worktree)")
	rounds := flag.Int("rounds", 3, "rounds; each runs every cell once per tree")
	benchtime := flag.String("benchtime", "3x", "go test -benchtime of each run")
	cells := flag.String("cells", "", "regexp of the cells under BenchmarkExamples (default: all, and BenchmarkStream10G)")
	instr := flag.String("instr", "", "a cell to count the model's instructions per segment of under cachegrind")
	pgo := flag.String("pgo", "auto", "profile to build the test binaries with: auto (each tree's cmd/tsolab/default.pgo, if any), off, or a file")
	sameSeeds := flag.String("same", "", "with -base: comma-separated seeds at which every example's results must be the same from both trees")
	flag.Parse()
	if *sameSeeds != "" && *base == "" {
		fmt.Fprintln(os.Stderr, "sim-speed: -same compares with -base REV: name the revision")
		os.Exit(2)
	}
	work, err := os.MkdirTemp("", "sim-speed")
	check(err)
	cleanups = append(cleanups, func() { os.RemoveAll(work) })
	trees := build(work, *base, *pgo)
	differ := 0
	if *sameSeeds != "" {
		differ = same(work, *pgo, trees, seedList(*sameSeeds))
	}
	pattern := "Examples|Stream10G"
	if *cells != "" {
		pattern = cellPattern(*cells)
	}
	for r := range *rounds {
		for i := range trees {
			t := trees[(i+r)%len(trees)]
			t.record(run(t, "-test.bench", pattern, "-test.benchtime", *benchtime))
		}
	}
	missed := 0
	if *rounds > 0 {
		missed = report(trees)
	}
	if *instr != "" {
		for _, t := range trees {
			total, byFile := instructions(work, t, *instr)
			fmt.Printf("%s: %s: %.0f instructions per segment in engine/sim (cachegrind)\n", t.name, *instr, total)
			fmt.Printf("%s: by source file:%s\n", t.name, fileShares(byFile))
		}
	}
	if missed > 0 {
		fmt.Printf("%d cells below %.0f M segments per CPU second\n", missed, target/1e6)
	}
	if missed > 0 || differ > 0 {
		exit(1)
	}
	exit(0)
}

// cleanups undo what the run made (the worktree, the temporary
// directory), last first, before it exits.
var cleanups []func()

func exit(code int) {
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	os.Exit(code)
}

// build compiles the test binaries: this tree's (the module root is the
// working directory), and base's in a worktree that the cleanups remove,
// each with the profile pgo names (-pgo).
func build(work, base, pgo string) []*tree {
	root, err := os.Getwd()
	check(err)
	trees := []*tree{newTree("new", root, work)}
	if base != "" {
		src := filepath.Join(work, "base-src")
		sh(root, "git", "worktree", "add", "-q", "--detach", src, base)
		cleanups = append(cleanups, func() { exec.Command("git", "-C", root, "worktree", "remove", "--force", src).Run() })
		trees = append(trees, newTree("base", src, work))
	}
	for _, t := range trees {
		root := filepath.Dir(filepath.Dir(t.dir))
		prof := profileOf(root, pgo)
		fmt.Fprintf(os.Stderr, "sim-speed: %s: go test -c -pgo=%s ./engine/sim\n", t.name, prof)
		sh(root, "go", "test", "-c", "-pgo="+prof, "-o", t.bin, "./engine/sim")
	}
	return trees
}

// profileOf is the go test -pgo value for the tree at root: with auto,
// its cmd/tsolab/default.pgo, or off when it has none.
func profileOf(root, pgo string) string {
	if pgo != "auto" {
		if pgo == "off" {
			return pgo
		}
		abs, err := filepath.Abs(pgo)
		check(err)
		return abs
	}
	p := filepath.Join(root, "cmd", "tsolab", "default.pgo")
	if _, err := os.Stat(p); err != nil {
		return "off"
	}
	return p
}

func newTree(name, root, work string) *tree {
	return &tree{name: name, dir: filepath.Join(root, "engine", "sim"), bin: filepath.Join(work, name+".test"),
		segs: map[string][]float64{}, events: map[string][]float64{}}
}

// run runs t's benchmarks with args and returns their output.
func run(t *tree, args ...string) []byte {
	cmd := exec.Command(t.bin, append([]string{"-test.run", "^$"}, args...)...)
	cmd.Dir = t.dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s", out)
	}
	check(err)
	return out
}

// record adds a run's segments per CPU second and events per segment.
func (t *tree) record(out []byte) {
	for _, b := range benchmarks(out) {
		t.segs[b.cell] = append(t.segs[b.cell], b.metrics["segments/cpu-s"])
		t.events[b.cell] = append(t.events[b.cell], b.metrics["events/segment"])
	}
}

// result is one line of benchmark output: the cell (the name without
// "Benchmark" and the GOMAXPROCS suffix) and its metrics by unit.
type result struct {
	cell    string
	metrics map[string]float64
}

func benchmarks(out []byte) []result {
	var rs []result
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > strings.LastIndexByte(name, '/') {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // GOMAXPROCS
			}
		}
		r := result{cell: name, metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				r.metrics[f[i+1]] = v
			}
		}
		rs = append(rs, r)
	}
	return rs
}

// report prints the table and returns how many cells of this tree miss
// the target.
func report(trees []*tree) (missed int) {
	cur := trees[0]
	cells := slices.Sorted(maps.Keys(cur.segs))
	fmt.Printf("%-72s %9s %8s", "cell", "M seg/s", "ev/seg")
	if len(trees) > 1 {
		fmt.Printf(" %9s %8s", "base M", "new/base")
	}
	fmt.Println(" (segments per CPU second, medians)")
	var logs []float64
	for _, c := range cells {
		s := median(cur.segs[c])
		mark := ""
		if s < target {
			missed++
			mark = "  < target"
		}
		fmt.Printf("%-72s %9.2f %8.2f", c, s/1e6, median(cur.events[c]))
		if len(trees) > 1 {
			if b, ok := trees[1].segs[c]; ok {
				r := ratio(cur.segs[c], b)
				logs = append(logs, math.Log(r))
				fmt.Printf(" %9.2f %8.3f", median(b)/1e6, r)
			}
		}
		fmt.Println(mark)
	}
	if len(logs) > 0 {
		var sum float64
		for _, l := range logs {
			sum += l
		}
		fmt.Printf("new/base geometric mean over %d cells: %.3f\n", len(logs), math.Exp(sum/float64(len(logs))))
	}
	return missed
}

// ratio is the median of the per-round ratios new/base.
func ratio(cur, base []float64) float64 {
	var rs []float64
	for i := range min(len(cur), len(base)) {
		rs = append(rs, cur[i]/base[i])
	}
	return median(rs)
}

// instructions runs one cell of t under cachegrind and returns the
// instructions per wire segment spent in engine/sim's functions, in all
// and by the source file of their lines (code inlined from another file
// counts to that file: cg_annotate's file:function pairs).
func instructions(work string, t *tree, cell string) (float64, map[string]float64) {
	out := filepath.Join(work, t.name+".cg")
	cmd := exec.Command("valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file="+out,
		t.bin, "-test.run", "^$", "-test.bench", "^BenchmarkExamples$/"+cell+"$", "-test.benchtime", "1x")
	cmd.Dir = t.dir
	cmd.Env = append(os.Environ(), "GOGC=off", "GOMAXPROCS=1")
	res, err := cmd.Output()
	check(err)
	rs := benchmarks(res)
	if len(rs) != 1 {
		check(fmt.Errorf("cell %q matched %d benchmarks, not one", cell, len(rs)))
	}
	// segments/s is of the wall clock, like ns/op: their product is
	// the segments of the one run.
	segs := rs[0].metrics["segments/s"] * rs[0].metrics["ns/op"] / 1e9
	ann, err := exec.Command("cg_annotate", out).Output()
	check(err)
	var ir float64
	byFile := map[string]float64{}
	for _, line := range strings.Split(string(ann), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.Contains(f[len(f)-1], "tsolab/engine/sim.") {
			continue
		}
		if v, err := strconv.ParseFloat(strings.ReplaceAll(f[0], ",", ""), 64); err == nil {
			ir += v
			file, _, _ := strings.Cut(f[len(f)-1], ":")
			byFile[filepath.Base(file)] += v / segs
		}
	}
	return ir / segs, byFile
}

// fileShares lists instructions per segment by source file, most first.
func fileShares(byFile map[string]float64) string {
	files := slices.SortedFunc(maps.Keys(byFile), func(a, b string) int { return cmp.Compare(byFile[b], byFile[a]) })
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, " %s %.0f", f, byFile[f])
	}
	return b.String()
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// sh runs a command in dir, its output to stderr.
func sh(dir, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	check(cmd.Run())
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "sim-speed:", err)
		exit(2)
	}
}

// cellPattern is the -test.bench pattern of the cells regexp. go test
// takes a '|' outside parentheses and brackets as separating whole
// patterns and splits each at its '/' outside them, one regexp a level
// of sub-benchmark, so 'Examples/a|b' ran a's cells only: each
// alternative is prefixed ('Examples/a|Examples/b'). A '/' inside
// parentheses splits nothing: '(a|b/c)' is one regexp of the lab's name.
func cellPattern(cells string) string {
	var alts []string
	brackets, parens, start := 0, 0, 0
	for i := 0; i < len(cells); i++ {
		switch c := cells[i]; {
		case c == '\\':
			i++
		case c == '[':
			brackets++
		case c == ']' && brackets > 0:
			brackets--
		case c == '(' && brackets == 0:
			parens++
		case c == ')' && brackets == 0:
			parens--
		case c == '|' && brackets == 0 && parens == 0:
			alts = append(alts, cells[start:i])
			start = i + 1
		}
	}
	alts = append(alts, cells[start:])
	for i, a := range alts {
		alts[i] = "Examples/" + a
	}
	return strings.Join(alts, "|")
}
