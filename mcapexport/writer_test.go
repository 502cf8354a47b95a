package mcapexport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/outfile"
)

func TestCRC32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 1<<17)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	for _, cut := range []int{0, 1, 7, 8, 100, 4096, 65537, len(b) - 1, len(b)} {
		a, c := b[:cut], b[cut:]
		got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(c), uint64(len(c)))
		if want := crc32.ChecksumIEEE(b); got != want {
			t.Errorf("cut at %d: %#08x, want %#08x", cut, got, want)
		}
	}
}

// checkCRCs checks every CRC of an MCAP file against its bytes: the data
// section's (magic to the data end record), each chunk's (its records,
// decompressed) and the summary's (summary start to the footer's CRC).
func checkCRCs(t *testing.T, data []byte) {
	t.Helper()
	le := binary.LittleEndian
	footerAt := len(data) - len(mcap.Magic) - (9 + 20)
	if mcap.OpCode(data[footerAt]) != mcap.OpFooter {
		t.Fatalf("no footer at %d", footerAt)
	}
	summaryStart := le.Uint64(data[footerAt+9:])
	if got, want := le.Uint32(data[footerAt+9+16:]), crc32.ChecksumIEEE(data[summaryStart:footerAt+9+16]); got != want {
		t.Errorf("summary crc %#08x, bytes give %#08x", got, want)
	}
	dataEnd := int(summaryStart) - (9 + 4)
	if mcap.OpCode(data[dataEnd]) != mcap.OpDataEnd {
		t.Fatalf("no data end record at %d", dataEnd)
	}
	if got, want := le.Uint32(data[dataEnd+9:]), crc32.ChecksumIEEE(data[:dataEnd]); got != want {
		t.Errorf("data section crc %#08x, bytes give %#08x", got, want)
	}
	lex, err := mcap.NewLexer(bytes.NewReader(data), &mcap.LexerOptions{ValidateChunkCRCs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lex.Close()
	var msgs int
	for {
		tok, _, err := lex.Next(nil)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("lexer (chunk CRCs validated): %v", err)
		}
		if tok == mcap.TokenMessage {
			msgs++
		}
		if tok == mcap.TokenFooter {
			break
		}
	}
	if msgs == 0 {
		t.Fatal("lexer found no messages")
	}
}

// Every CRC is right, with every compression, with and without the
// payloads referenced, and the pixels of frames too large to be copied
// into the chunk's buffer read back exactly (the Python reader checks
// their sha256 and validates the CRCs itself).
func TestMCAPWriterCRCs(t *testing.T) {
	f := makeFixtureFrames(160, 160) // 76800 bytes of pixels: above refMin
	for _, comp := range []string{"none", "zstd", "lz4"} {
		for _, stable := range []bool{false, true} {
			name := comp
			if stable {
				name += "/stable"
			}
			t.Run(name, func(t *testing.T) {
				o := MCAPOptions{Compression: comp, ChunkSize: 100_000}
				if stable {
					o.Stable = func([]byte) bool { return true } // the fixture's records live until the end
				}
				data, st := export(t, f, o)
				checkCRCs(t, data)
				p := filepath.Join(t.TempDir(), "out.mcap")
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
				if err := Check(p, st.Messages); err != nil {
					t.Fatal(err)
				}
				if comp == "lz4" {
					return // tools/mcapcheck's expectation knows none and zstd
				}
				want := comp
				if comp == "none" {
					want = ""
				}
				runMCAPCheck(t, p, f.want, want)
			})
		}
	}
}

// Unless Stable says so, a record's bytes are the writer's once Write
// returns: the caller may reuse them before Close.
func TestMCAPWriterCopiesUnlessStable(t *testing.T) {
	f := makeFixtureFrames(160, 160)
	var buf bytes.Buffer
	w, err := NewMCAP(&buf, MCAPOptions{Compression: "none", Stable: func([]byte) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.chans {
		if err := w.AddChannel(c); err != nil {
			t.Fatal(err)
		}
	}
	for i := range f.recs {
		r := f.recs[i]
		r.Payload = append([]byte(nil), r.Payload...)
		if err := w.Write(&r); err != nil {
			t.Fatal(err)
		}
		clear(r.Payload) // reused by the caller
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "out.mcap")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	runMCAPCheck(t, p, f.want, "")
}

// Pixels copied file to file (FileRange, an outfile.File output: the
// kernel's copy) give the bytes of pixels written from memory: a log of
// uncompressed frames, read through its map, exported both ways.
func TestMCAPWriterFileRange(t *testing.T) {
	f := makeFixtureFrames(160, 160)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "frames.vrlog")
	lw, err := logfmt.Create(logPath, logfmt.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.chans {
		c.Compression = logfmt.Compression{Kind: logfmt.CompressionNone}
		if _, err := lw.AddChannel(c); err != nil {
			t.Fatal(err)
		}
	}
	for i := range f.recs {
		if err := lw.Write(&f.recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := logfmt.Open(logPath, logfmt.ReaderOptions{Map: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	write := func(out io.Writer, o MCAPOptions) MCAPStats {
		w, err := NewMCAP(out, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Channels() {
			if err := w.AddChannel(c); err != nil {
				t.Fatal(err)
			}
		}
		it := r.Records(logfmt.Filter{})
		for it.Next() {
			if err := w.Write(it.Record()); err != nil {
				t.Fatal(err)
			}
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return w.Stats()
	}
	var mem bytes.Buffer
	write(&mem, MCAPOptions{Compression: "none", ChunkSize: 100_000})
	p := filepath.Join(dir, "out.mcap")
	out, err := outfile.Create(p, outfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	copied := 0
	st := write(out, MCAPOptions{Compression: "none", ChunkSize: 100_000, Stable: r.Mapped,
		FileRange: func(b []byte) (*os.File, int64, bool) { copied++; return r.FileRange(b) }})
	if err := out.Commit(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if !bytes.Equal(got, mem.Bytes()) || copied == 0 {
		t.Fatalf("%d bytes copied file to file (%d frames), %d written from memory: they differ", len(got), copied, mem.Len())
	}
	if err := Check(p, st.Messages); err != nil {
		t.Fatal(err)
	}
	runMCAPCheck(t, p, f.want, "")
}
