// Command pacegen is the pacing benchmark's helper (bench/replay/pacing.sh):
//
//	pacegen log -o LOG -robot R -n N [-period 1ms] [-iox2-template T -iox2-out F]
//	pacegen sleeploop -connect EP [-stamps FILE] LOG
//
// "log" writes an ideal schedule, N records period apart: states on zenoh
// key vr/R/state and 16×16 rgb8 frames on iceoryx2 service
// vr/R/camera/front, record i received at exactly i×period. With a
// template (a human-readable `iox2 service record` of that frame service)
// it also writes the same frames, at the same times, as an iox2 record
// file, so `iox2 service replay` gets the very schedule vrlog replay gets
// (iox2 record files keep milliseconds: the period must be a whole number
// of them).
//
// "sleeploop" is the plain baseline: it publishes the log's zenoh states
// with a time.Sleep to each deadline and nothing else (no spin, no
// adaptation), through vrlog's zenoh transport. With -stamps it writes,
// per record, its seq and the CLOCK_MONOTONIC time read right before the
// put, as JSON [[seq, t_ns], ...]: joined with the subscriber's arrival
// stamps, that separates the publisher's own lateness from what the
// transport and the subscriber add (the floor no publisher can go below).
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/transport/iceoryx2"
	"github.com/vrlog/vrlog/transport/zenoh"
	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pacegen log|sleeploop ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "log":
		err = genLog(os.Args[2:])
	case "sleeploop":
		err = sleepLoop(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "pacegen:", err)
		os.Exit(1)
	}
}

var frameTypes = iceoryx2.TypeDetails{
	Payload:    iceoryx2.TypeDetail{Variant: iceoryx2.Dynamic, TypeName: "u8", Size: 1, Alignment: 1},
	UserHeader: iceoryx2.TypeDetail{Variant: iceoryx2.FixedSize, TypeName: "vrsdk::FrameHeader", Size: codec.FrameHeaderSize, Alignment: codec.FrameHeaderAlign},
}

// iox2Record is one record of an IOX2DUMP file.
type iox2Record struct {
	ms                   int64
	sys, header, payload []byte
}

func genLog(args []string) error {
	fs := flag.NewFlagSet("log", flag.ExitOnError)
	out := fs.String("o", "", "output log")
	robot := fs.String("robot", "pace", "robot name in keys")
	n := fs.Int("n", 5000, "records per stream")
	period := fs.Duration("period", time.Millisecond, "record period")
	tmpl := fs.String("iox2-template", "", "an IOX2DUMP record file of the frame service (its header and first record's system header are reused)")
	iout := fs.String("iox2-out", "", "iox2 record file to write (with -iox2-template)")
	fs.Parse(args)
	if *out == "" {
		return errors.New("log: -o is required")
	}
	var head []byte
	var sys []byte
	var iw *bufio.Writer
	if *tmpl != "" {
		if *period%time.Millisecond != 0 {
			return fmt.Errorf("log: iox2 record files keep milliseconds; period %v is not a whole number of them", *period)
		}
		var err error
		if head, sys, err = readTemplate(*tmpl); err != nil {
			return err
		}
		f, err := os.Create(*iout)
		if err != nil {
			return err
		}
		defer f.Close()
		iw = bufio.NewWriterSize(f, 1<<20)
		if _, err := iw.Write(head); err != nil {
			return err
		}
	}
	w, err := logfmt.Create(*out, logfmt.WriterOptions{})
	if err != nil {
		return err
	}
	stateKey, service := "vr/"+*robot+"/state", "vr/"+*robot+"/camera/front"
	sc, err := w.AddChannel(logfmt.Channel{Name: stateKey, Transport: logfmt.TransportZenoh, Topic: stateKey, Schema: codec.SchemaState,
		Compression: logfmt.Compression{Kind: logfmt.CompressionZstd}, Meta: map[string]string{"zenoh.encoding": "application/octet-stream"}})
	if err != nil {
		return err
	}
	fc, err := w.AddChannel(logfmt.Channel{Name: service, Transport: logfmt.TransportIceoryx2, Topic: service, Schema: codec.SchemaFrame,
		Compression: logfmt.Compression{Kind: logfmt.CompressionZstd}, Meta: frameTypes.ToMeta()})
	if err != nil {
		return err
	}
	t0 := time.Now().UnixNano()
	const mono0 = int64(1e12)
	pix := make([]byte, 16*16*3)
	var st []byte
	for i := 0; i < *n; i++ {
		at := int64(i) * int64(*period)
		c := t0 + at
		s := codec.State{Seq: uint64(i), TNs: c, EstimateTNs: c, Sensors: []codec.Sensor{{ID: 1, TNs: c}, {ID: 2, TNs: c}, {ID: 3, TNs: c}, {ID: 4, TNs: c}}}
		st = codec.AppendState(st[:0], &s)
		if err := w.Write(&logfmt.Record{Channel: sc, RecvWallNs: c, RecvMonoNs: mono0 + at, CaptureNs: c, Seq: uint64(i), HasStamp: true, Payload: st}); err != nil {
			return err
		}
		for k := range pix {
			pix[k] = byte(i + k)
		}
		h := codec.NewFrameHeader(uint64(i), c, 1, 16, 16, codec.RGB8)
		hdr := codec.AppendFrameHeader(nil, &h)
		if err := w.Write(&logfmt.Record{Channel: fc, RecvWallNs: c, RecvMonoNs: mono0 + at, CaptureNs: c, Seq: uint64(i), HasStamp: true, Header: hdr, Payload: pix}); err != nil {
			return err
		}
		if iw != nil {
			writeIox2(iw, iox2Record{ms: at / 1e6, sys: sys, header: hdr, payload: pix})
		}
	}
	if iw != nil {
		if err := iw.Flush(); err != nil {
			return err
		}
	}
	return w.Close()
}

// readTemplate returns an IOX2DUMP record file's header and its first
// record's system header. The header is iceoryx2's RecordHeader struct as
// it is in memory (its size is not in the file): it ends where a chain of
// well-formed records starts that runs exactly to the end of the file.
func readTemplate(path string) (head, sys []byte, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	u64 := func(off int) (uint64, bool) {
		if off+8 > len(b) {
			return 0, false
		}
		return binary.LittleEndian.Uint64(b[off:]), true
	}
	// chain walks the records from off; it returns the first one's system
	// header if they end exactly at the end of the file.
	chain := func(off int) ([]byte, bool) {
		var first []byte
		for n := 0; off < len(b); n++ {
			if _, ok := u64(off); !ok {
				return nil, false
			}
			off += 8
			start := off
			for range 3 { // system header, user header, payload
				l, ok := u64(off)
				if !ok || l > uint64(len(b)-off-8) {
					return nil, false
				}
				off += 8 + int(l)
			}
			if n == 0 {
				l, _ := u64(start)
				first = b[start+8 : start+8+int(l)]
			}
		}
		return first, off == len(b) && first != nil
	}
	for h := 8; h < min(len(b), 1<<16); h += 8 {
		if sys, ok := chain(h); ok {
			return b[:h], sys, nil
		}
	}
	return nil, nil, fmt.Errorf("%s: no IOX2DUMP record chain found (record at least one sample with -d IOX2DUMP)", path)
}

// writeIox2 appends one IOX2DUMP record: the timestamp in ms, then system
// header, user header and payload, each after its length (u64 little-endian).
func writeIox2(w *bufio.Writer, r iox2Record) {
	var n [8]byte
	put := func(v uint64) {
		binary.LittleEndian.PutUint64(n[:], v)
		w.Write(n[:])
	}
	put(uint64(r.ms))
	for _, part := range [][]byte{r.sys, r.header, r.payload} {
		put(uint64(len(part)))
		w.Write(part)
	}
}

func sleepLoop(args []string) error {
	fs := flag.NewFlagSet("sleeploop", flag.ExitOnError)
	connect := fs.String("connect", "", "zenoh endpoint of the subscriber")
	delay := fs.Duration("delay", time.Second, "wait before the first record")
	stamps := fs.String("stamps", "", "write [[seq, publish CLOCK_MONOTONIC ns], ...] here")
	fs.Parse(args)
	if fs.NArg() != 1 {
		return errors.New("sleeploop: one log expected")
	}
	r, err := logfmt.Open(fs.Arg(0), logfmt.ReaderOptions{})
	if err != nil {
		return err
	}
	defer r.Close()
	cfg := zenoh.Config{Mode: zenoh.ModePeer, DisableMulticastScouting: true}
	if *connect != "" {
		cfg.Connect = []string{*connect}
	}
	sess, err := zenoh.Open(cfg)
	if err != nil {
		return err
	}
	defer sess.Close()
	var recs []logfmt.Record
	var key string
	for _, c := range r.Channels() {
		if c.Transport == logfmt.TransportZenoh {
			key = c.Topic
			it := r.Records(logfmt.Filter{Channels: []uint16{c.ID}})
			for it.Next() {
				rec := *it.Record()
				rec.Payload = bytes.Clone(rec.Payload)
				recs = append(recs, rec)
			}
			if err := it.Err(); err != nil {
				return err
			}
			break
		}
	}
	if len(recs) == 0 {
		return errors.New("sleeploop: the log has no zenoh records")
	}
	pub, err := sess.Publisher(key, zenoh.PublisherOptions{Encoding: "application/octet-stream", Block: true, Express: true})
	if err != nil {
		return err
	}
	defer pub.Close()
	time.Sleep(*delay)
	sent := make([][2]int64, 0, len(recs))
	start := time.Now()
	for _, rec := range recs {
		time.Sleep(time.Until(start.Add(time.Duration(rec.RecvMonoNs - recs[0].RecvMonoNs))))
		var ts unix.Timespec
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		if err := pub.Put(rec.Payload, nil); err != nil {
			return err
		}
		sent = append(sent, [2]int64{int64(rec.Seq), ts.Nano()})
	}
	time.Sleep(500 * time.Millisecond)
	if *stamps == "" {
		return nil
	}
	b, err := json.Marshal(sent)
	if err != nil {
		return err
	}
	return os.WriteFile(*stamps, b, 0o644)
}
