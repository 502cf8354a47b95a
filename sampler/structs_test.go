package sampler

import (
	"container/heap"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"unsafe"
)

// refGapHeap is the gap heap as container/heap keeps it: the typed
// gapHeap must hold the same gaps in the same places.
type refGapHeap []Gap

func (h refGapHeap) Len() int           { return len(h) }
func (h refGapHeap) Less(i, j int) bool { return gapLess(h[i], h[j]) }
func (h refGapHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *refGapHeap) Push(x any)        { *h = append(*h, x.(Gap)) }
func (h *refGapHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func TestGapHeapIsContainerHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, capacity := range []int{1, 2, 7, 1000} {
		var got gapHeap
		var want refGapHeap
		for i := range 20_000 {
			from := int64(i) * 1_000_000
			g := Gap{FromTNs: from, ToTNs: from + 1_000_000 + rng.Int64N(200_000) - 100_000, Restart: i%97 == 0}
			if i%500 == 0 {
				g.ToTNs += rng.Int64N(1e9) // an outage
			}
			if i%3 == 0 {
				g.ToTNs = from + 1_000_000 // ties
			}
			got.offer(g, capacity)
			if len(want) < capacity {
				heap.Push(&want, g)
			} else if gapLess(want[0], g) {
				want[0] = g
				heap.Fix(&want, 0)
			}
		}
		if !slices.Equal(got, []Gap(want)) {
			t.Fatalf("capacity %d: the typed heap differs from container/heap's", capacity)
		}
	}
}

// A Histogram keeps its buckets in an object of their own, without
// pointers (the GC does not scan it), made at the first value: a Stream
// of three empty histograms is small.
func TestHistogramBucketsApart(t *testing.T) {
	if n := unsafe.Sizeof(Histogram{}); n > 64 {
		t.Fatalf("Histogram is %d bytes", n)
	}
	if n := unsafe.Sizeof(Stream{}); n > 1024 {
		t.Fatalf("Stream is %d bytes", n)
	}
	var h Histogram
	if h.buckets != nil {
		t.Fatal("buckets before the first value")
	}
	h.Add(-3)
	h.Add(5)
	n := 0
	h.Buckets(func(lo, hi int64, c uint64) { n++ })
	if n != 2 || h.Quantile(0.5) != -3 {
		t.Fatalf("%d buckets, median %d", n, h.Quantile(0.5))
	}
	var e, m Histogram
	e.Merge(&h)
	m.Merge(&e)
	if m.Count() != 2 || m.Quantile(0.9) != 5 {
		t.Fatalf("merged: %d values, p90 %d", m.Count(), m.Quantile(0.9))
	}
	var empty Histogram
	empty.Buckets(func(lo, hi int64, c uint64) { t.Fatal("a bucket in an empty histogram") })
}

// Stream.keepLast copies a Sample field by field: every field, a new
// one included.
func TestKeepLastCopiesEveryField(t *testing.T) {
	var x Sample
	v := reflect.ValueOf(&x).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Uint64:
			f.SetUint(uint64(i + 1))
		case reflect.String:
			f.SetString("pub")
		default:
			t.Fatalf("Sample.%s: a field of a kind this test does not fill", v.Type().Field(i).Name)
		}
	}
	var s Stream
	s.keepLast(&x)
	if s.last != x {
		t.Fatalf("last %+v, want %+v", s.last, x)
	}
}
