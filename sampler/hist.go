package sampler

import (
	"math"
	"math/bits"
)

// Histogram is a log-linear histogram of int64 values (nanoseconds, usually)
// with a relative error under 1/64 (≈1.6 %), fixed memory, and exact min,
// max, count and mean. Negative values (lags between two streams can be
// negative) have their own buckets.
type Histogram struct {
	pos, neg [nBuckets]uint64
	n        uint64
	sum      float64
	min, max int64
}

const (
	subBits  = 7
	subCount = 1 << subBits // values below this are exact
	nBuckets = subCount + (64-subBits)*(subCount/2)
)

func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	e := bits.Len64(v) - subBits // ≥ 1
	top := v >> uint(e)          // in [subCount/2, subCount)
	return subCount + (e-1)*(subCount/2) + int(top-subCount/2)
}

// bucketRange is the [lo, hi] of values that fall into bucket i.
func bucketRange(i int) (lo, hi uint64) {
	if i < subCount {
		return uint64(i), uint64(i)
	}
	e := (i-subCount)/(subCount/2) + 1
	top := uint64((i-subCount)%(subCount/2) + subCount/2)
	lo = top << uint(e)
	return lo, lo + (1 << uint(e)) - 1
}

// Add records v.
func (h *Histogram) Add(v int64) {
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if h.n == 0 || v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
	if v >= 0 {
		h.pos[bucketOf(uint64(v))]++
	} else {
		h.neg[bucketOf(uint64(-(v+1))+1)]++
	}
}

// Count is the number of values added.
func (h *Histogram) Count() uint64 { return h.n }

// Min and Max are exact; 0 when empty.
func (h *Histogram) Min() int64 { return h.min }

// Max is the largest value added.
func (h *Histogram) Max() int64 { return h.max }

// Mean is exact up to float64 rounding; 0 when empty.
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}

// Quantile returns an estimate of the q-quantile (0 ≤ q ≤ 1): the midpoint
// of the bucket holding it, clamped to [Min, Max]; Quantile(0) is Min and
// Quantile(1) is Max exactly.
func (h *Histogram) Quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	if q <= 0 {
		return h.min
	}
	if q >= 1 {
		return h.max
	}
	rank := uint64(math.Ceil(q * float64(h.n))) // 1-based
	var seen uint64
	for i := nBuckets - 1; i >= 0; i-- { // most negative first
		if seen += h.neg[i]; seen >= rank && h.neg[i] > 0 {
			lo, hi := bucketRange(i)
			return h.clamp(neg(lo + (hi-lo)/2))
		}
	}
	for i := range nBuckets {
		if seen += h.pos[i]; seen >= rank && h.pos[i] > 0 {
			lo, hi := bucketRange(i)
			return h.clamp(pos(lo + (hi-lo)/2))
		}
	}
	return h.max
}

// pos and neg turn a bucket magnitude into a value, saturating at the int64
// range (the outermost buckets reach past it).
func pos(m uint64) int64 { return int64(min(m, math.MaxInt64)) }
func neg(m uint64) int64 {
	if m >= 1<<63 {
		return math.MinInt64
	}
	return -int64(m)
}

func (h *Histogram) clamp(v int64) int64 { return min(max(v, h.min), h.max) }

// Merge adds every value of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if h.n == 0 || o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
	for i := range nBuckets {
		h.pos[i] += o.pos[i]
		h.neg[i] += o.neg[i]
	}
}

// Buckets calls f for each non-empty bucket in ascending value order with
// the bucket's value range and count (for plots).
func (h *Histogram) Buckets(f func(lo, hi int64, n uint64)) {
	for i := nBuckets - 1; i >= 0; i-- {
		if h.neg[i] > 0 {
			lo, hi := bucketRange(i)
			f(neg(hi), neg(lo), h.neg[i])
		}
	}
	for i := range nBuckets {
		if h.pos[i] > 0 {
			lo, hi := bucketRange(i)
			f(pos(lo), pos(hi), h.pos[i])
		}
	}
}
