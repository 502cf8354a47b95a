package dataset

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/outfile"
)

// SchemaVersion is the version of the tables' layout this vrlog writes.
// A change that renames, retypes or removes a column, or changes what one
// means, takes a new version; docs/analytics.md has the tables.
const SchemaVersion = 1

// Schema is the dataset's layout name, as the marker file and every
// Parquet file's key-value metadata (MetaSchema) carry it.
var Schema = "vrlog.dataset/" + strconv.Itoa(SchemaVersion)

// MarkerFile is the file at a dataset's root that says its schema.
const MarkerFile = "vrlog-dataset.json"

// MetaSchema is the Parquet key-value metadata key holding Schema.
const MetaSchema = "vrlog.dataset.schema"

// The tables, each a directory of the dataset.
const (
	TableRuns     = "runs"
	TableChannels = "channels"
	TableEvents   = "events"
)

// ErrSchema: the directory holds a dataset of another schema version.
var ErrSchema = errors.New("dataset: another schema version")

var (
	runsTable     = mustTable[Run]()
	channelsTable = mustTable[Channel]()
	eventsTable   = mustTable[Event]()
)

func mustTable[T any]() *table {
	t, err := tableOf(reflect.TypeFor[T]())
	if err != nil {
		panic(err)
	}
	return t
}

// RunInfo is what a run row holds beyond the report.
type RunInfo struct {
	Labels       map[string]string
	VrlogVersion string
	Hosts        []string
	Files        []string
	Analyze      time.Duration // how long the analysis took
	Now          func() time.Time
}

func (i RunInfo) now() time.Time {
	if i.Now != nil {
		return i.Now().UTC()
	}
	return time.Now().UTC()
}

// Dataset is a dataset directory opened for appending.
type Dataset struct {
	dir string
}

// marker is the content of MarkerFile.
type marker struct {
	Schema string `json:"schema"`
	Note   string `json:"note,omitempty"`
}

// Open opens dir for appending, creating it and its marker if missing
// (not the directories above it, as for every output: outfile.ErrNoDir).
// A directory whose marker names another schema is refused (ErrSchema):
// a dataset is never silently mixed. Several processes may open and
// append to one directory at once.
func Open(dir string) (*Dataset, error) {
	if err := outfile.ParentExists(dir); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("dataset %s: %w", dir, err)
	}
	path := filepath.Join(dir, MarkerFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = createMarker(path)
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", dir, err)
	}
	if err := checkMarker(b); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", dir, err)
	}
	return &Dataset{dir: dir}, nil
}

// createMarker writes the marker; when another process created it first,
// its content is returned instead.
func createMarker(path string) ([]byte, error) {
	b, _ := json.MarshalIndent(marker{Schema: Schema, Note: "written by vrlog analyze --dataset; tables runs/, channels/, events/ (docs/analytics.md)"}, "", "  ")
	b = append(b, '\n')
	f, err := outfile.Create(path, outfile.Options{})
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return os.ReadFile(path)
		}
		return nil, err
	}
	defer f.Abort()
	if _, err := f.Write(b); err != nil {
		return nil, err
	}
	if err := f.Commit(); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return os.ReadFile(path)
		}
		return nil, err
	}
	return b, nil
}

func checkMarker(b []byte) error {
	var m marker
	if err := json.Unmarshal(b, &m); err != nil || !strings.HasPrefix(m.Schema, "vrlog.dataset/") {
		return fmt.Errorf("%s is not a vrlog dataset marker (want {\"schema\": %q})", MarkerFile, Schema)
	}
	v, err := strconv.Atoi(strings.TrimPrefix(m.Schema, "vrlog.dataset/"))
	switch {
	case err != nil:
		return fmt.Errorf("%s: unknown schema %q", MarkerFile, m.Schema)
	case v > SchemaVersion:
		return fmt.Errorf("%w: the dataset is %s, newer than this vrlog's %s: append with a newer vrlog, or start a new dataset directory", ErrSchema, m.Schema, Schema)
	case v < SchemaVersion:
		return fmt.Errorf("%w: the dataset is %s, older than this vrlog's %s (docs/analytics.md lists the changes): start a new dataset directory, or append with the vrlog that wrote it", ErrSchema, m.Schema, Schema)
	}
	return nil
}

// Dir is the dataset's directory.
func (d *Dataset) Dir() string { return d.dir }

// Append adds the run rep (info: what the report does not hold) to the
// dataset and returns its run id.
func (d *Dataset) Append(rep *analyzer.Report, info RunInfo) (string, error) {
	id := newRunID(info.now())
	run := runRow(id, rep, info)
	return id, d.write(run, channelRows(id, rep), eventRows(id, rep))
}

// AppendFailed adds a run whose analysis failed with cause: a runs row of
// status error, no channels or events.
func (d *Dataset) AppendFailed(cause error, info RunInfo) (string, error) {
	id := newRunID(info.now())
	run := baseRun(id, info)
	run.Status, run.Error = "error", cause.Error()
	return id, d.write(run, nil, nil)
}

// write writes the run's three files, each complete or absent (written
// aside, renamed into place under a name no other run has): all three are
// written and fsynced at once, then renamed, channels and events first
// and the runs row last, so that a reader that sees a runs row sees the
// whole run (a run killed between the renames leaves channels and events
// rows that no runs row names).
func (d *Dataset) write(run Run, channels []Channel, events []Event) error {
	date := run.Appended
	if run.Start != nil {
		date = *run.Start
	}
	part := "date=" + date.UTC().Format(time.DateOnly)
	tables := []struct {
		name string
		tb   *table
		rows any
	}{{TableChannels, channelsTable, channels}, {TableEvents, eventsTable, events}, {TableRuns, runsTable, []Run{run}}}
	files := make([]*outfile.File, len(tables))
	errs := make([]error, len(tables))
	defer func() {
		for _, f := range files {
			if f != nil {
				f.Abort() // a no-op once committed
			}
		}
	}()
	var wg sync.WaitGroup
	for i, t := range tables {
		wg.Go(func() { // the fsyncs overlap
			files[i], errs[i] = writeFile(filepath.Join(d.dir, t.name, part, run.RunID+".parquet"), t.tb, t.rows)
		})
	}
	wg.Wait()
	for i, t := range tables {
		if errs[i] != nil {
			return fmt.Errorf("dataset %s: %s: %w", d.dir, t.name, errs[i])
		}
	}
	for i, t := range tables {
		if err := files[i].Commit(); err != nil {
			return fmt.Errorf("dataset %s: %s: %w", d.dir, t.name, err)
		}
	}
	return nil
}

// writeFile writes rows into a temporary file for path, complete and
// fsynced, for the caller to commit.
func writeFile(path string, tb *table, rows any) (*outfile.File, error) {
	rec, err := tb.records(rows)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, err
	}
	f, err := outfile.Create(path, outfile.Options{})
	if err != nil {
		return nil, err
	}
	// Small tables: no dictionary pages, no compression (a run's files
	// are a few kB; setting either up per column costs more than it saves).
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Uncompressed), parquet.WithDictionaryDefault(false), parquet.WithCreatedBy("vrlog"))
	w, err := pqarrow.NewFileWriter(tb.schema, f, props, pqarrow.NewArrowWriterProperties())
	if err == nil {
		if err = w.AppendKeyValueMetadata(MetaSchema, Schema); err == nil {
			err = w.Write(rec)
		}
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = f.Finish()
	}
	if err != nil {
		f.Abort()
		return nil, err
	}
	return f, nil
}

// newRunID is unique without coordination: the time (sortable) and 64
// random bits.
func newRunID(now time.Time) string {
	var b [8]byte
	rand.Read(b[:])
	return now.UTC().Format("20060102T150405.000000Z") + "-" + hex.EncodeToString(b[:])
}

// ParseLabel parses a --label KEY=VALUE. A key is non-empty and has no
// control character; a value is any valid UTF-8 without control
// characters ('=' and quotes included: a label is data, never a path
// or a query).
func ParseLabel(s string) (key, value string, err error) {
	key, value, ok := strings.Cut(s, "=")
	switch {
	case !ok:
		return "", "", fmt.Errorf("%q: want KEY=VALUE", s)
	case strings.TrimSpace(key) == "":
		return "", "", fmt.Errorf("%q: the key is empty", s)
	case !utf8.ValidString(s):
		return "", "", fmt.Errorf("%q: not valid UTF-8", s)
	case strings.ContainsFunc(s, unicode.IsControl):
		return "", "", fmt.Errorf("%q: has a control character", s)
	}
	return key, value, nil
}
