package analyze

import (
	"fmt"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/analyzer"
	"github.com/vrlog/vrlog/dataset"
	"github.com/vrlog/vrlog/hostclock"
	"github.com/vrlog/vrlog/internal/cliutil"
	"github.com/vrlog/vrlog/logfmt"
)

func datasetFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "dataset", Usage: "append this run to the Parquet dataset in `DIR` (tables runs, channels, events; DIR created if missing, not the directories above it; docs/analytics.md); a failed analysis appends a run of status error"},
		&cli.StringSliceFlag{Name: "label", Usage: "with --dataset: a `KEY=VALUE` for the run's labels (commit, branch, job...); repeatable"},
	}
}

// datasetRun appends the run to --dataset, when given.
type datasetRun struct {
	ds    *dataset.Dataset
	info  dataset.RunInfo
	start time.Time
}

// openDataset opens --dataset (nil without it) and parses --label.
func openDataset(c *cli.Context) (*datasetRun, error) {
	dir := c.String("dataset")
	labels := c.StringSlice("label")
	if dir == "" {
		if len(labels) > 0 {
			return nil, cliutil.Usage("--label: labels are for a --dataset run; add --dataset DIR")
		}
		return nil, nil
	}
	info := dataset.RunInfo{Labels: map[string]string{}, VrlogVersion: c.App.Version, Files: c.Args().Slice()}
	for _, l := range labels {
		k, v, err := dataset.ParseLabel(l)
		if err != nil {
			return nil, cliutil.Usage("--label %v", err)
		}
		if _, dup := info.Labels[k]; dup {
			return nil, cliutil.Usage("--label %q: key %q given twice", l, k)
		}
		info.Labels[k] = v
	}
	ds, err := dataset.Open(dir)
	if err != nil {
		return nil, cliutil.Output(fmt.Errorf("--dataset: %w", err))
	}
	return &datasetRun{ds: ds, info: info, start: time.Now()}, nil
}

// failed appends the run of an analysis that failed with err and returns
// err (or the append's own failure along with it).
func (d *datasetRun) failed(err error) error {
	if d == nil {
		return err
	}
	d.info.Analyze = time.Since(d.start)
	if _, aerr := d.ds.AppendFailed(err, d.info); aerr != nil {
		return cliutil.Runtime(fmt.Errorf("%w; and --dataset: %w", err, aerr))
	}
	return err
}

// append appends the finished analysis rep of the files.
func (d *datasetRun) append(rep *analyzer.Report, files []string) error {
	if d == nil {
		return nil
	}
	d.info.Analyze = time.Since(d.start)
	d.info.Hosts = hosts(files)
	if _, err := d.ds.Append(rep, d.info); err != nil {
		return cliutil.Runtime(fmt.Errorf("--dataset: %w", err))
	}
	return nil
}

// hosts are the recorder hosts the files' headers name, in order, once.
func hosts(files []string) []string {
	hs := []string{}
	for _, p := range files {
		r, err := logfmt.Open(p, logfmt.ReaderOptions{Tolerant: true})
		if err != nil {
			continue // analyzed already: cannot fail but by a race
		}
		if h := r.Header().Metadata[hostclock.MetaHost]; h != "" && !slices.Contains(hs, h) {
			hs = append(hs, h)
		}
		r.Close()
	}
	return hs
}
