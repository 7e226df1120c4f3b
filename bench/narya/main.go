// Command narya-bench times Ed25519 verification with Narya
// (github.com/Overclock-Validator/narya-ed25519, dalek verify_strict
// verdicts) on a file of wirespeed's binary records and prints one JSON line,
// for comparison against our own verifier on the same records.
//
// Record format, back to back, no header:
//
//	u32 msg_len (little-endian) | msg[msg_len] | sig[64] | pk[32]
//
// Modes:
//
//   - many: VerifyBatchStrict over chunks of --chunk records; --threads
//     goroutines each take one contiguous share of the records (GOMAXPROCS is
//     set to --threads). A pass is timed from the start of the first goroutine
//     to the end of the last.
//   - single: VerifyStrict, one signature per call, on one goroutine with
//     GOMAXPROCS=1; every call is timed on its own for the percentiles, and a
//     pass (all calls) for the rate.
//
// Each mode makes one untimed warm-up pass, whose verdicts become the
// reference: every timed pass must give the same verdict for every record. By
// default every record must be valid (files written by `wirespeed gen sigs`
// without --bad-frac); with --allow-invalid the verdicts are only counted.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	narya "github.com/Overclock-Validator/narya-ed25519/ed25519"
)

const naryaModule = "github.com/Overclock-Validator/narya-ed25519"

// result is the single JSON line written to stdout.
type result struct {
	Mode         string    `json:"mode"`
	Backend      string    `json:"backend"`
	Threads      int       `json:"threads"`
	Chunk        int       `json:"chunk"`
	Reps         int       `json:"reps"`
	N            int       `json:"n"`
	Calls        int       `json:"calls_per_pass"`
	Valid        int       `json:"valid"`
	Invalid      int       `json:"invalid"`
	SigsPerSec   float64   `json:"sigs_per_sec"`
	SigsPerSecs  []float64 `json:"sigs_per_sec_all"`
	SecsMedian   float64   `json:"secs_median"`
	P50us        *float64  `json:"p50_us"`
	P99us        *float64  `json:"p99_us"`
	Fallbacks    uint64    `json:"internal_fault_fallbacks"`
	NaryaVersion string    `json:"narya_version"`
	NaryaSource  string    `json:"narya_source"`
	GoVersion    string    `json:"go_version"`
}

// records holds the parsed file: slices into one buffer.
type records struct {
	pubs []*[32]byte
	pubB [][]byte
	msgs [][]byte
	sigs [][]byte
}

func main() {
	file := flag.String("file", "", "record file (binary format), required")
	count := flag.Int("n", 0, "use only the first N records of the file (0: all)")
	threads := flag.Int("threads", 1, "goroutines in many mode (and GOMAXPROCS); single mode needs 1")
	mode := flag.String("mode", "many", `"many" (VerifyBatchStrict in chunks) or "single" (VerifyStrict per signature)`)
	reps := flag.Int("reps", 5, "timed passes after one warm-up pass")
	chunk := flag.Int("chunk", 64, "signatures per VerifyBatchStrict call in many mode")
	samples := flag.Int("samples", 0, "single mode: calls per pass, cycling through the records (0: one per record)")
	backend := flag.String("backend", "r51", `Narya backend to force ("r51", "generic", "stdlib", ...; "" keeps Narya's default)`)
	allowInvalid := flag.Bool("allow-invalid", false, "count invalid signatures instead of failing on them")
	verdicts := flag.String("verdicts", "", "write the warm-up verdicts to FILE, one byte per record ('1' valid, '0' invalid)")
	flag.Parse()

	switch {
	case flag.NArg() != 0:
		fail(2, "unexpected arguments: %v", flag.Args())
	case *file == "":
		fail(2, "--file is required")
	case *mode != "many" && *mode != "single":
		fail(2, "--mode must be \"many\" or \"single\", got %q", *mode)
	case *threads < 1 || *threads > 1024:
		fail(2, "--threads must be in [1, 1024]")
	case *mode == "single" && *threads != 1:
		fail(2, "single mode runs on one thread: --threads must be 1")
	case *reps < 1:
		fail(2, "--reps must be >= 1")
	case *chunk < 1:
		fail(2, "--chunk must be >= 1")
	case *samples < 0:
		fail(2, "--samples must be >= 0")
	case *count < 0:
		fail(2, "--n must be >= 0")
	}

	if *backend != "" {
		if err := narya.SetBackend(*backend); err != nil {
			fail(1, "%v", err)
		}
	}
	data, err := os.ReadFile(*file)
	if err != nil {
		fail(1, "%v", err)
	}
	recs, err := parse(data)
	if err != nil {
		fail(1, "%s: %v", *file, err)
	}
	if *count > 0 {
		if *count > len(recs.msgs) {
			fail(1, "%s: --n %d but the file holds %d records", *file, *count, len(recs.msgs))
		}
		recs.pubs, recs.pubB = recs.pubs[:*count], recs.pubB[:*count]
		recs.msgs, recs.sigs = recs.msgs[:*count], recs.sigs[:*count]
	}
	n := len(recs.msgs)
	if n == 0 {
		fail(1, "%s: no records", *file)
	}

	runtime.GOMAXPROCS(*threads)
	res := result{
		Mode:         *mode,
		Backend:      narya.ActiveBackend(),
		Threads:      *threads,
		Chunk:        *chunk,
		Reps:         *reps,
		N:            n,
		NaryaVersion: moduleVersion(naryaModule),
		NaryaSource:  moduleSource(naryaModule),
		GoVersion:    runtime.Version(),
	}

	var want []bool
	var secs []float64
	if *mode == "many" {
		res.Calls = n
		want, secs = runMany(&recs, *threads, *chunk, *reps)
	} else {
		calls := n
		if *samples > 0 {
			calls = *samples
		}
		res.Calls = calls
		var lat []float64
		want, secs, lat = runSingle(&recs, calls, *reps)
		slices.Sort(lat)
		p50, p99 := quantile(lat, 0.50), quantile(lat, 0.99)
		res.P50us, res.P99us = &p50, &p99
	}

	for _, ok := range want {
		if ok {
			res.Valid++
		}
	}
	res.Invalid = n - res.Valid
	if *verdicts != "" {
		buf := make([]byte, n)
		for i, ok := range want {
			buf[i] = '0'
			if ok {
				buf[i] = '1'
			}
		}
		if err := os.WriteFile(*verdicts, buf, 0o644); err != nil {
			fail(1, "%v", err)
		}
	}
	if res.Invalid != 0 && !*allowInvalid {
		first := slices.Index(want, false)
		fail(1, "rejected %d of %d signatures expected valid (first: record %d); pass --allow-invalid to count them", res.Invalid, n, first)
	}

	for _, s := range secs {
		res.SigsPerSecs = append(res.SigsPerSecs, float64(res.Calls)/s)
	}
	res.SecsMedian = median(secs)
	res.SigsPerSec = median(res.SigsPerSecs)
	res.Fallbacks = narya.ActiveBackendStats().InternalFaultFallbacks
	out, err := json.Marshal(res)
	if err != nil {
		fail(1, "json: %v", err)
	}
	fmt.Println(string(out))
}

// parse splits a binary record file into slices of data (nothing is copied).
func parse(data []byte) (records, error) {
	var r records
	off := 0
	for i := 0; off < len(data); i++ {
		if len(data)-off < 4 {
			return r, fmt.Errorf("record %d: truncated length prefix at byte %d", i, off)
		}
		ml := int(binary.LittleEndian.Uint32(data[off:]))
		off += 4
		if ml > len(data)-off || len(data)-off-ml < 96 {
			return r, fmt.Errorf("record %d: truncated at byte %d (message length %d)", i, off, ml)
		}
		msg := data[off : off+ml : off+ml]
		off += ml
		sig := data[off : off+64 : off+64]
		off += 64
		pk := data[off : off+32 : off+32]
		off += 32
		r.msgs = append(r.msgs, msg)
		r.sigs = append(r.sigs, sig)
		r.pubB = append(r.pubB, pk)
		r.pubs = append(r.pubs, (*[32]byte)(pk))
	}
	return r, nil
}

// runMany returns the warm-up verdicts and the seconds of each timed pass.
func runMany(r *records, threads, chunk, reps int) ([]bool, []float64) {
	n := len(r.msgs)
	ok := make([]bool, n)
	pass := func() time.Duration {
		clear(ok)
		var wg sync.WaitGroup
		start := time.Now()
		for t := 0; t < threads; t++ {
			lo, hi := n*t/threads, n*(t+1)/threads
			wg.Add(1)
			go func(lo, hi int) {
				defer wg.Done()
				for c := lo; c < hi; c += chunk {
					e := min(c+chunk, hi)
					narya.VerifyBatchStrict(r.pubs[c:e], r.msgs[c:e], r.sigs[c:e], ok[c:e])
				}
			}(lo, hi)
		}
		wg.Wait()
		return time.Since(start)
	}
	pass() // warm-up
	want := slices.Clone(ok)
	secs := make([]float64, 0, reps)
	for i := 0; i < reps; i++ {
		secs = append(secs, pass().Seconds())
		checkSame(want, ok, i)
	}
	return want, secs
}

// runSingle returns the verdict of every record (from an untimed pass), the
// seconds of each timed pass of `calls` single calls, and every call's
// latency in microseconds.
func runSingle(r *records, calls, reps int) ([]bool, []float64, []float64) {
	n := len(r.msgs)
	want := make([]bool, n)
	for i := range want { // warm-up and reference verdicts
		want[i] = narya.VerifyStrict(r.pubB[i], r.msgs[i], r.sigs[i])
	}
	got := make([]bool, calls)
	lat := make([]float64, 0, calls*reps)
	secs := make([]float64, 0, reps)
	for rep := 0; rep < reps; rep++ {
		start := time.Now()
		prev := start
		for c := 0; c < calls; c++ {
			i := c % n
			got[c] = narya.VerifyStrict(r.pubB[i], r.msgs[i], r.sigs[i])
			now := time.Now()
			lat = append(lat, float64(now.Sub(prev).Nanoseconds())/1e3)
			prev = now
		}
		secs = append(secs, time.Since(start).Seconds())
		for c := 0; c < calls; c++ {
			if got[c] != want[c%n] {
				fail(1, "pass %d: verdict of record %d differs from the warm-up pass", rep+1, c%n)
			}
		}
	}
	return want, secs, lat
}

func checkSame(want, got []bool, rep int) {
	if i := firstDiff(want, got); i >= 0 {
		fail(1, "pass %d: verdict of record %d differs from the warm-up pass", rep+1, i)
	}
}

func firstDiff(a, b []bool) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// median of a non-empty slice (mean of the two middle values when even).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 0 {
		return (s[m-1] + s[m]) / 2
	}
	return s[m]
}

// quantile of a sorted non-empty slice (nearest rank).
func quantile(sorted []float64, q float64) float64 {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// moduleVersion reports the version of a dependency compiled into the binary.
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// moduleSource reports where a replaced dependency was built from ("" if not replaced).
func moduleSource(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path && dep.Replace != nil {
				return dep.Replace.Path
			}
		}
	}
	return ""
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "narya-bench: "+format+"\n", args...)
	os.Exit(code)
}
