package sampler

import (
	"math"
	"math/bits"
)

// Histogram summarises int64 values (nanoseconds, usually) in bounded
// memory. It keeps the first ExactLimit values, so quantiles of a stream of
// up to that many values are exact; past that it answers from log-linear
// buckets (relative width 1/256) with the mean of the values in the bucket
// that holds the quantile, so the error is under 0.4 % and zero when the
// values in that bucket are equal (a steady period). Min, max, count and
// mean are always exact. Negative values (lags between two streams can be
// negative) have their own buckets.
//
// The zero value is empty and ready. A Histogram must not be copied
// after its first Add (the copy would share the buckets).
type Histogram struct {
	// The pointers come first: the GC scans a Histogram, and a struct
	// holding one, only up to its last pointer field.
	exact    []int64 // the first ExactLimit values, partially ordered by selections
	*buckets         // nil until the first value
	n        uint64
	sum      float64
	min, max int64
}

// buckets are a Histogram's counts, 467 KB in an object of their own
// without pointers, which the GC does not scan.
type buckets struct {
	pos, neg [nBuckets]bucket // values ≥ 0; magnitudes of the negative ones
	gpos     [nGroups]uint64  // pos and neg counts summed per group of
	gneg     [nGroups]uint64  // buckets, so a quantile skips empty stretches
}

// bucket is one histogram bucket: count and sum side by side, so an Add
// touches one cache line.
type bucket struct {
	n   uint64
	sum float64
}

func (b *bucket) add(v float64) { b.n++; b.sum += v }

func (b *bucket) mean() float64 { return b.sum / float64(b.n) }

// ExactLimit is how many values a Histogram keeps for exact quantiles
// (512 KiB at most per histogram, allocated as values arrive): a minute of
// a 1 kHz stream. Selecting from more would cost more than it tells.
const ExactLimit = 1 << 16

const (
	subBits  = 9
	subCount = 1 << subBits // values below this are exact
	nBuckets = subCount + (64-subBits)*(subCount/2)

	groupBits = 8 // buckets per group: 1<<groupBits
	nGroups   = (nBuckets + 1<<groupBits - 1) >> groupBits
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

// Reserve makes room for n more values without regrowing (a caller that
// knows the stream's length, e.g. from a log's index, saves the copies).
func (h *Histogram) Reserve(n int) {
	if h.n == uint64(len(h.exact)) {
		want := min(len(h.exact)+n, ExactLimit)
		if want > cap(h.exact) {
			h.exact = append(make([]int64, 0, want), h.exact...)
		}
	}
}

// Add records v.
func (h *Histogram) Add(v int64) {
	if h.n == 0 { // the first value: after it, no branch for min, max or the buckets
		h.min, h.max = v, v
		if h.buckets == nil {
			h.buckets = new(buckets)
		}
	}
	h.min, h.max = min(h.min, v), max(h.max, v)
	h.n++
	h.sum += float64(v)
	if h.n <= ExactLimit {
		h.exact = append(h.exact, v)
	} else if h.exact != nil {
		h.exact = nil // past the limit: buckets only, memory back
	}
	hb := h.buckets
	if v >= 0 {
		b := bucketOf(uint64(v))
		hb.pos[b].add(float64(v))
		hb.gpos[b>>groupBits]++
	} else {
		m := uint64(-(v + 1)) + 1
		b := bucketOf(m)
		hb.neg[b].add(float64(m))
		hb.gneg[b>>groupBits]++
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
	if h.exact != nil && uint64(len(h.exact)) == h.n {
		return selectNth(h.exact, int(rank-1))
	}
	return h.bucketQuantile(rank)
}

// approxQuantile answers from the buckets alone: cheap enough to call while
// a stream is running.
func (h *Histogram) approxQuantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	return h.bucketQuantile(max(1, uint64(math.Ceil(q*float64(h.n)))))
}

// bucketQuantile finds the bucket holding the rank-th value (1-based),
// walking the groups first: tens of steps instead of thousands, so
// Stream can refresh its running median cheaply.
func (h *Histogram) bucketQuantile(rank uint64) int64 {
	hb := h.buckets // not nil: h holds values
	var seen uint64
	for g := nGroups - 1; g >= 0; g-- { // most negative first
		if seen+hb.gneg[g] < rank {
			seen += hb.gneg[g]
			continue
		}
		for i := min(nBuckets, (g+1)<<groupBits) - 1; i >= g<<groupBits; i-- {
			if seen += hb.neg[i].n; seen >= rank && hb.neg[i].n > 0 {
				return h.clamp(neg(uint64(math.Round(hb.neg[i].mean()))))
			}
		}
	}
	for g := range nGroups {
		if seen+hb.gpos[g] < rank {
			seen += hb.gpos[g]
			continue
		}
		for i := g << groupBits; i < min(nBuckets, (g+1)<<groupBits); i++ {
			if seen += hb.pos[i].n; seen >= rank && hb.pos[i].n > 0 {
				return h.clamp(pos(uint64(math.Round(hb.pos[i].mean()))))
			}
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
	if h.n+o.n <= ExactLimit && uint64(len(h.exact)) == h.n && uint64(len(o.exact)) == o.n {
		h.exact = append(h.exact, o.exact...)
	} else {
		h.exact = nil
	}
	h.n += o.n
	h.sum += o.sum
	if h.buckets == nil {
		h.buckets = new(buckets)
	}
	hb, ob := h.buckets, o.buckets
	for i := range nBuckets {
		hb.pos[i].n += ob.pos[i].n
		hb.pos[i].sum += ob.pos[i].sum
		hb.neg[i].n += ob.neg[i].n
		hb.neg[i].sum += ob.neg[i].sum
	}
	for g := range nGroups {
		hb.gpos[g] += ob.gpos[g]
		hb.gneg[g] += ob.gneg[g]
	}
}

// absorb is Merge for an o that is not used after: an empty h takes
// o's buckets instead of copying them.
func (h *Histogram) absorb(o *Histogram) {
	if h.n == 0 {
		*h, *o = *o, Histogram{}
		return
	}
	h.Merge(o)
}

// Buckets calls f for each non-empty bucket in ascending value order with
// the bucket's value range and count (for plots).
func (h *Histogram) Buckets(f func(lo, hi int64, n uint64)) {
	hb := h.buckets
	if hb == nil {
		return
	}
	for i := nBuckets - 1; i >= 0; i-- {
		if hb.neg[i].n > 0 {
			lo, hi := bucketRange(i)
			f(neg(hi), neg(lo), hb.neg[i].n)
		}
	}
	for i := range nBuckets {
		if hb.pos[i].n > 0 {
			lo, hi := bucketRange(i)
			f(pos(lo), pos(hi), hb.pos[i].n)
		}
	}
}

// selectNth returns the k-th smallest value of a (0-based), reordering a
// (quickselect, median-of-three pivots): O(n) where a sort would be
// O(n log n), and later selections reuse the partial order.
func selectNth(a []int64, k int) int64 {
	lo, hi := 0, len(a)-1
	for hi > lo {
		if hi-lo < 16 {
			for i := lo + 1; i <= hi; i++ { // insertion sort the small rest
				for j := i; j > lo && a[j] < a[j-1]; j-- {
					a[j], a[j-1] = a[j-1], a[j]
				}
			}
			return a[k]
		}
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		p := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}
