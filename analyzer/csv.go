package analyzer

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/sampler"
)

// CSVHeader is the header row of WriteCSV's table.
const CSVHeader = "channel,seq,t_ns,time,recv_wall_ns,recv_mono_ns,dt_ns,latency_ns,skipped,event\n"

// WriteCSV writes the per-sample table (analyze --csv), one row per
// analyzed sample in arrival order: channel, seq, t_ns, time (t_ns in tf,
// elapsed from the session epoch), recv_wall_ns, recv_mono_ns, dt_ns (the
// capture interval to the previous in-order sample; 0 for a first,
// duplicate or reordered one), latency_ns (receive wall minus capture; 0 on
// raw channels), skipped, event (first, next, skip, duplicate, reorder,
// restart, with +outage when the interval is above the outage threshold).
//
// It reads the analysis's files again after the report rep: the epoch and
// each channel's nominal period are then final, so every row's elapsed
// counts from the session epoch (frames captured before the first state
// included) and +outage marks exactly the intervals the report calls
// outages. Every integer column is filled in every row (pandas reads int64).
// csvFile reads f's records for the CSV as AddFile read them: from where
// it was read (overlapping snapshots), in segments between the
// recording's pauses, breaking the timing at each (brk).
func (a *Analysis) csvFile(r *logfmt.Reader, f FileReport, row func(*channel, *logfmt.Record), brk func(pauseMark)) error {
	ids, dataIDs, _ := a.channels(r)
	defer func() { a.readFrom, a.readTo = 0, 0 }()
	a.readFrom = f.readFrom
	for i := 0; i <= len(f.pauses); i++ {
		if i > 0 {
			a.readFrom = f.pauses[i-1].at
			brk(f.pauses[i-1])
		}
		a.readTo = 0
		if i < len(f.pauses) {
			a.readTo = f.pauses[i].at
		}
		if err := a.eachData(r, ids, dataIDs, row); err != nil {
			return err
		}
	}
	return nil
}

func (a *Analysis) WriteCSV(w io.Writer, rep *Report, tf codec.TimeFormat) error {
	type pass struct {
		stream *sampler.Stream
		n      uint64
		pub    string
	}
	passes := map[*channel]*pass{}
	for _, ch := range a.order {
		nominal := ch.stream.Summary().NominalPeriodNs
		passes[ch] = &pass{stream: sampler.NewStream(sampler.Config{OutageFactor: a.opts.OutageFactor, NominalPeriodNs: nominal, MaxEvents: 1})}
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(CSVHeader)
	var b []byte
	row := func(ch *channel, rec *logfmt.Record) {
		p := passes[ch]
		p.n++
		var s sampler.Sample
		if !a.sampleOf(&s, ch, rec, p.n, &p.pub) {
			return
		}
		ev := p.stream.Add(s)
		b = appendCSVField(b[:0], ch.rep.Name)
		b = append(b, ',')
		b = strconv.AppendUint(b, s.Seq, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, s.TNs, 10)
		b = append(b, ',')
		b = append(b, tf.Format(s.TNs, rep.EpochNs)...)
		b = append(b, ',')
		b = strconv.AppendInt(b, rec.RecvWallNs, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, rec.RecvMonoNs, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, ev.DtNs, 10)
		b = append(b, ',')
		var lat int64
		if s.RecvWallNs != 0 {
			lat = s.RecvWallNs - s.TNs
		}
		b = strconv.AppendInt(b, lat, 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, ev.Skipped, 10)
		b = append(b, ',')
		b = append(b, ev.Kind.String()...)
		if ev.Outage {
			b = append(b, "+outage"...)
		}
		b = append(b, '\n')
		bw.Write(b)
	}
	for _, f := range a.files {
		r, err := logfmt.Open(f.Path, logfmt.ReaderOptions{Tolerant: a.opts.Tolerant})
		if err != nil {
			return err
		}
		err = a.csvFile(r, f, row, func(pm pauseMark) {
			for ch, p := range passes {
				if pm.pauses(ch) {
					p.stream.Break()
				}
			}
		})
		r.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	return bw.Flush()
}

// appendCSVField quotes a field when it needs it (RFC 4180).
func appendCSVField(b []byte, s string) []byte {
	need := false
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ',' || c == '"' || c == '\n' || c == '\r' {
			need = true
			break
		}
	}
	if !need {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
