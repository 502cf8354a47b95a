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

// buckets are a Histogram's counts, in pages of pageLen buckets made as
// values fall in them: a steady stream's values fill one or two pages
// (4 KiB each) of the 14,592 buckets of either sign, so a Histogram is
// quick to make, merge and collect.
type buckets struct {
	pos, neg [nPages]*page // values ≥ 0; magnitudes of the negative ones
}

// page is pageLen buckets and their total count, so that a quantile
// skips empty stretches.
type page struct {
	n uint64
	b [pageLen]bucket
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

	pageBits = 8 // buckets per page: 1<<pageBits
	pageLen  = 1 << pageBits
	nPages   = (nBuckets + pageLen - 1) >> pageBits
)

// at is bucket i of pages ps, made if need be.
func at(ps *[nPages]*page, i int) (*page, *bucket) {
	pg := ps[i>>pageBits]
	if pg == nil {
		pg = new(page)
		ps[i>>pageBits] = pg
	}
	return pg, &pg.b[i&(pageLen-1)]
}

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
		h.made()
	}
	h.min, h.max = min(h.min, v), max(h.max, v)
	h.n++
	h.sum += float64(v)
	if h.n <= ExactLimit {
		h.exact = append(h.exact, v)
	} else if h.exact != nil {
		h.exact = nil // past the limit: buckets only, memory back
	}
	if v >= 0 {
		pg, b := at(&h.buckets.pos, bucketOf(uint64(v)))
		pg.n++
		b.add(float64(v))
	} else {
		m := uint64(-(v + 1)) + 1
		pg, b := at(&h.buckets.neg, bucketOf(m))
		pg.n++
		b.add(float64(m))
	}
}

// made makes h's buckets if it has none yet.
func (h *Histogram) made() {
	if h.buckets == nil {
		h.buckets = new(buckets)
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
// walking the pages first: tens of steps instead of thousands, so
// Stream can refresh its running median cheaply.
func (h *Histogram) bucketQuantile(rank uint64) int64 {
	hb := h.buckets // not nil: h holds values
	var seen uint64
	for g := nPages - 1; g >= 0; g-- { // most negative first
		pg := hb.neg[g]
		if pg == nil || seen+pg.n < rank {
			if pg != nil {
				seen += pg.n
			}
			continue
		}
		for i := pageLen - 1; i >= 0; i-- {
			if b := &pg.b[i]; b.n > 0 {
				if seen += b.n; seen >= rank {
					return h.clamp(neg(uint64(math.Round(b.mean()))))
				}
			}
		}
	}
	for g := range nPages {
		pg := hb.pos[g]
		if pg == nil || seen+pg.n < rank {
			if pg != nil {
				seen += pg.n
			}
			continue
		}
		for i := range pageLen {
			if b := &pg.b[i]; b.n > 0 {
				if seen += b.n; seen >= rank {
					return h.clamp(pos(uint64(math.Round(b.mean()))))
				}
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
	h.made()
	mergePages(&h.buckets.pos, &o.buckets.pos)
	mergePages(&h.buckets.neg, &o.buckets.neg)
}

// mergePages adds the counts of pages o to h.
func mergePages(h, o *[nPages]*page) {
	for g, op := range o {
		if op == nil {
			continue
		}
		if h[g] == nil {
			h[g] = new(page)
		}
		hp := h[g]
		hp.n += op.n
		for i := range op.b {
			hp.b[i].n += op.b[i].n
			hp.b[i].sum += op.b[i].sum
		}
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
		if pg := hb.neg[i>>pageBits]; pg != nil && pg.b[i&(pageLen-1)].n > 0 {
			lo, hi := bucketRange(i)
			f(neg(hi), neg(lo), pg.b[i&(pageLen-1)].n)
		}
	}
	for i := range nBuckets {
		if pg := hb.pos[i>>pageBits]; pg != nil && pg.b[i&(pageLen-1)].n > 0 {
			lo, hi := bucketRange(i)
			f(pos(lo), pos(hi), pg.b[i&(pageLen-1)].n)
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
