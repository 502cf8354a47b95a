package foxws

import "testing"

// The queue's budget drops the oldest frames first, a frame itself when no
// older frame makes room, and states only when no frame is queued; the
// writer gets what is left in publishing order.
func TestQueueDropsFramesBeforeStates(t *testing.T) {
	frame, state := &fchannel{id: 1, bulk: true, topic: "f"}, &fchannel{id: 2, topic: "s"}
	var dropped []string
	q := newQueue(100, 1000, func(e *entry) { dropped = append(dropped, e.ch.topic+string(e.body[:1])) })
	push := func(ch *fchannel, tag byte, n int) bool {
		b := make([]byte, n-messageDataHead)
		b[0] = tag
		return q.push(entry{ch: ch, body: b}, ch.bulk)
	}
	push(state, 'a', 20)
	push(frame, 'b', 40)
	push(state, 'c', 20)
	push(frame, 'd', 40) // 120 > 100: the oldest frame b goes
	if got := len(dropped); got != 1 || dropped[0] != "fb" {
		t.Fatalf("dropped %v, want [fb]", dropped)
	}
	if push(frame, 'e', 70) { // no older frame than d frees enough: d goes, then e still does not fit
		t.Fatal("frame e queued over the budget")
	}
	if q.bytes != 40 {
		t.Fatalf("%d bytes queued", q.bytes)
	}
	push(state, 'f', 50) // frames first: none left, then the oldest state
	push(state, 'g', 50)
	var order []byte
	for e, ok := q.pop(); ok; e, ok = q.pop() {
		order = append(order, e.body[0])
	}
	if string(order) != "fg" || q.bytes != 0 {
		t.Fatalf("popped %q (%d bytes left), dropped %v", order, q.bytes, dropped)
	}
	if want := "[fb fd fe sa sc]"; fmtList(dropped) != want {
		t.Fatalf("dropped %v, want %s", dropped, want)
	}
	// A message larger than the budget goes alone into an empty queue.
	if !push(frame, 'h', 500) {
		t.Fatal("a frame larger than the budget was refused by an empty queue")
	}
}

func fmtList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}
