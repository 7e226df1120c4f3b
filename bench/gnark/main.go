// Command gnark-msm times BLS12-377 G1 multi-scalar multiplication with
// gnark-crypto and prints one JSON line, for comparison against our own MSM.
//
// Only the MultiExp call is timed; point and scalar generation is not.
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls12377 "github.com/consensys/gnark-crypto/ecc/bls12-377"
	"github.com/consensys/gnark-crypto/ecc/bls12-377/fr"
)

const gnarkModule = "github.com/consensys/gnark-crypto"

// result is the single JSON line written to stdout.
type result struct {
	N                  int       `json:"n"`
	Threads            int       `json:"threads"`
	Scalars            string    `json:"scalars"`
	SecsMedian         float64   `json:"secs_median"`
	SecsAll            []float64 `json:"secs_all"`
	GnarkCryptoVersion string    `json:"gnark_crypto_version"`
	GoVersion          string    `json:"go_version"`
}

func main() {
	n := flag.Int("n", 65536, "number of points")
	threads := flag.Int("threads", 1, "goroutines for MultiExp (NbTasks); also caps GOMAXPROCS while timing")
	reps := flag.Int("reps", 5, "timed repetitions after one warm-up")
	kind := flag.String("scalars", "uniform", `scalar distribution: "uniform" or "skewed"`)
	seed := flag.Uint64("seed", 1, "PRNG seed")
	flag.Parse()

	switch {
	case flag.NArg() != 0:
		fail(2, "unexpected arguments: %v", flag.Args())
	case *n < 1:
		fail(2, "--n must be >= 1")
	case *threads < 1 || *threads > 1024:
		fail(2, "--threads must be in [1, 1024]")
	case *reps < 1:
		fail(2, "--reps must be >= 1")
	case *kind != "uniform" && *kind != "skewed":
		fail(2, "--scalars must be \"uniform\" or \"skewed\", got %q", *kind)
	}

	rng := rand.New(rand.NewPCG(*seed, 0x9e3779b97f4a7c15))

	// Points: distinct random multiples of the generator (not timed).
	pointScalars := make([]fr.Element, *n)
	for i := range pointScalars {
		pointScalars[i] = uniformFr(rng)
	}
	_, _, g1, _ := bls12377.Generators()
	points := bls12377.BatchScalarMultiplicationG1(&g1, pointScalars)

	scalars := make([]fr.Element, *n)
	for i := range scalars {
		if *kind == "uniform" {
			scalars[i] = uniformFr(rng)
		} else {
			scalars[i] = skewedFr(rng)
		}
	}

	// Inputs are generated on all cores; the timed part then runs with at most
	// T threads. NbTasks alone is not a hard cap in gnark-crypto (split halves
	// and overweight chunks may run extra goroutines), so GOMAXPROCS caps the
	// number of OS threads running Go code as well.
	runtime.GOMAXPROCS(*threads)
	cfg := ecc.MultiExpConfig{NbTasks: *threads}
	var want bls12377.G1Jac
	secs := make([]float64, 0, *reps)
	for r := 0; r <= *reps; r++ { // r == 0 is the warm-up
		var got bls12377.G1Jac
		start := time.Now()
		_, err := got.MultiExp(points, scalars, cfg)
		elapsed := time.Since(start).Seconds()
		if err != nil {
			fail(1, "MultiExp: %v", err)
		}
		if r == 0 {
			want = got
			continue
		}
		if !got.Equal(&want) { // sanity check: every run must agree
			fail(1, "MultiExp result differs between repetitions")
		}
		secs = append(secs, elapsed)
	}

	out, err := json.Marshal(result{
		N:                  *n,
		Threads:            *threads,
		Scalars:            *kind,
		SecsMedian:         median(secs),
		SecsAll:            secs,
		GnarkCryptoVersion: moduleVersion(gnarkModule),
		GoVersion:          runtime.Version(),
	})
	if err != nil {
		fail(1, "json: %v", err)
	}
	fmt.Println(string(out))
}

// uniformFr returns a uniformly random element of Fr by rejection sampling
// 253-bit big-endian integers against the modulus.
func uniformFr(rng *rand.Rand) fr.Element {
	var buf [fr.Bytes]byte
	var e fr.Element
	for {
		for i := 0; i < fr.Bytes; i += 8 {
			binary.BigEndian.PutUint64(buf[i:], rng.Uint64())
		}
		buf[0] &= 0xff >> (8*fr.Bytes - fr.Bits) // keep the top fr.Bits bits
		if e.SetBytesCanonical(buf[:]) == nil {
			return e
		}
	}
}

// skewedFr draws from a mix typical of real proving workloads:
// 50% zero, 25% one, 15% small (< 2^16), 10% uniform.
func skewedFr(rng *rand.Rand) fr.Element {
	var e fr.Element
	switch p := rng.IntN(100); {
	case p < 50:
		e.SetZero()
	case p < 75:
		e.SetOne()
	case p < 90:
		e.SetUint64(rng.Uint64N(1 << 16))
	default:
		e = uniformFr(rng)
	}
	return e
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

// moduleVersion reports the version of a dependency compiled into the binary.
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				if dep.Replace != nil {
					return dep.Replace.Version
				}
				return dep.Version
			}
		}
	}
	return "unknown"
}

func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gnark-msm: "+format+"\n", args...)
	os.Exit(code)
}
