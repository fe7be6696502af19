package bench

import (
	"sort"
	"time"
)

// minTimesPerPrb is benchdnn's minimum number of timed executes when the
// time budget ends the loop.
const minTimesPerPrb = 5

// sampleFloor is the shortest sample: executes faster than this are timed
// in back-to-back groups (the sample is the group's mean) so that the
// clock's resolution and cost do not dominate.
const sampleFloor = 20 * time.Microsecond

// measure times run after one untimed warm-up call. With fixTimes > 0 it
// times exactly fixTimes executes; otherwise it runs until maxMs has
// passed and at least minTimesPerPrb executes were timed.
func measure(run func() error, maxMs float64, fixTimes int) (Timing, error) {
	t0 := time.Now()
	if err := run(); err != nil {
		return Timing{}, err
	}
	group := 1
	if one := time.Since(t0); one < sampleFloor {
		group = int(sampleFloor / max(one, 50*time.Nanosecond))
	}
	if fixTimes > 0 && group > fixTimes {
		group = fixTimes
	}
	budget := time.Duration(maxMs * float64(time.Millisecond))
	var samples []float64 // ms per execute
	var total time.Duration
	times := 0
	start := time.Now()
	for {
		n := group
		if fixTimes > 0 && times+n > fixTimes {
			n = fixTimes - times
		}
		s := time.Now()
		for i := 0; i < n; i++ {
			if err := run(); err != nil {
				return Timing{}, err
			}
		}
		d := time.Since(s)
		total += d
		times += n
		samples = append(samples, float64(d)/float64(time.Millisecond)/float64(n))
		if fixTimes > 0 {
			if times >= fixTimes {
				break
			}
			continue
		}
		if times >= minTimesPerPrb && time.Since(start) >= budget {
			break
		}
	}
	return summarize(samples, float64(total)/float64(time.Millisecond)/float64(times), times), nil
}

// summarize computes min, max and median of samples; avg is passed in
// (total time over executes, which weights groups correctly).
func summarize(samples []float64, avg float64, times int) Timing {
	s := append([]float64(nil), samples...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Timing{Times: times, Min: s[0], Avg: avg, Max: s[len(s)-1], Median: med}
}
