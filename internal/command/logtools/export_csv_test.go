package logtools

import (
	"encoding/binary"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/mcapexport"
	"github.com/vrlog/vrlog/schema"
)

// A declared C struct whose fields are named seq and t_ns (docs/schemas.md's
// own example) exports to CSV with every column name once: its decoded
// fields are msg.seq, msg.t_ns, ... (they came out as a second seq and
// t_ns, which pandas renames seq.1, t_ns.1), in one table and per channel.
func TestExportCSVDeclaredColumns(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "declared.vrlog")
	d, err := schema.Parse(`sim/pose cstruct struct="uint64_t seq; int64_t t_ns; double x; double y; uint32_t flags" stamp=t_ns seq=seq`, ".", "test")
	if err != nil {
		t.Fatal(err)
	}
	d = d.Resolve(&logfmt.Record{}, false)
	cd, err := schema.Compile(d)
	if err != nil {
		t.Fatal(err)
	}
	w, err := logfmt.Create(src, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := w.AddChannel(logfmt.Channel{Name: "sim/pose", Transport: logfmt.TransportZenoh, Topic: "sim/pose", Schema: d.Name, Meta: d.Meta()})
	const n = 5
	for i := range int64(n) {
		p := binary.LittleEndian.AppendUint64(nil, uint64(100+i))
		p = binary.LittleEndian.AppendUint64(p, uint64(t0+i*1e7))
		p = binary.LittleEndian.AppendUint64(p, math.Float64bits(float64(i)/2))
		p = binary.LittleEndian.AppendUint64(p, math.Float64bits(-float64(i)))
		p = binary.LittleEndian.AppendUint32(p, uint32(i))
		rec := &logfmt.Record{Channel: id, RecvWallNs: t0 + i*1e7 + 1e6, RecvMonoNs: 1e9 + i*1e7, Payload: p}
		cd.StampRecord(rec, schema.Arrival{})
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	one, perChan := filepath.Join(dir, "all.csv"), filepath.Join(dir, "csv")
	for _, out := range []string{one, perChan} {
		if _, errs, code := run(t, "export", src, "--format", "csv", "-o", out); code != 0 {
			t.Fatalf("export -o %s: exit %d %s", out, code, errs)
		}
	}
	for _, path := range []string{one, filepath.Join(perChan, mcapexport.CSVName("sim/pose"))} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || len(rows) != n+1 {
			t.Fatalf("%s: %d rows: %v", path, len(rows), err)
		}
		hdr := rows[0]
		for i, c := range hdr {
			if slices.Index(hdr, c) != i {
				t.Fatalf("%s: column %q twice: %v", path, c, hdr)
			}
		}
		col := func(name string) int {
			i := slices.Index(hdr, name)
			if i < 0 {
				t.Fatalf("%s: no column %s: %v", path, name, hdr)
			}
			return i
		}
		for i, row := range rows[1:] {
			want := map[string]string{"seq": strconv.Itoa(100 + i), "t_ns": strconv.FormatInt(t0+int64(i)*1e7, 10),
				"msg.seq": strconv.Itoa(100 + i), "msg.t_ns": strconv.FormatInt(t0+int64(i)*1e7, 10),
				"msg.x": strconv.FormatFloat(float64(i)/2, 'g', -1, 64), "msg.flags": strconv.Itoa(i)}
			for name, v := range want {
				if got := row[col(name)]; got != v {
					t.Fatalf("%s row %d: %s = %q, want %q", path, i, name, got, v)
				}
			}
		}
	}
}
