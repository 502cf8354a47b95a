package recorder

import "testing"

func TestBufPool(t *testing.T) {
	p := newBufPool(2)
	a := p.get(100)
	if len(a) != 100 {
		t.Fatalf("len %d", len(a))
	}
	p.put(a)
	if b := p.get(60); &b[0] != &a[0] || len(b) != 60 {
		t.Fatal("a spare buffer large enough was not reused")
	}
	p.put(a[:60])
	if b := p.get(200); len(b) != 200 || &b[0] == &a[0] {
		t.Fatal("a too small spare was reused")
	}
	for i := 0; i < 5; i++ {
		p.put(make([]byte, 10)) // beyond capacity: dropped, no block
	}
}
