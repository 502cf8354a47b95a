package replayer

import (
	"errors"
	"fmt"
	"io"

	"github.com/vrlog/vrlog/logfmt"
	"github.com/vrlog/vrlog/player"
	"github.com/vrlog/vrlog/transport/iceoryx2"
	"github.com/vrlog/vrlog/transport/zenoh"
)

// frameTypes are a vrsdk frame service's types (docs/wire-format.md), used
// when a frame channel's log lacks iceoryx2 type details.
var frameTypes = iceoryx2.TypeDetails{
	Payload:    iceoryx2.TypeDetail{Variant: iceoryx2.Dynamic, TypeName: "u8", Size: 1, Alignment: 1},
	UserHeader: iceoryx2.TypeDetail{Variant: iceoryx2.FixedSize, TypeName: "vrsdk::FrameHeader", Size: 48, Alignment: 8},
}

// publishers holds one publisher per output; it implements player.Sink.
type publishers struct {
	outs  []output
	zs    *zenoh.Session // not owned: the replay's session
	node  *iceoryx2.Node
	zpub  []*zenoh.Publisher
	ipub  []*iceoryx2.Publisher
	iUser []int // iceoryx2 user-header size, to pad a missing header
}

// transportOptions say how to publish.
type transportOptions struct {
	express bool
	block   bool // iceoryx2: no safe overflow, sends wait for the subscribers (Config.BlockIceoryx)
	warn    io.Writer
}

// warnf writes one line to w (nil: nowhere).
func warnf(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, "replay: "+format+"\n", args...)
	}
}

// needsZenoh reports whether an output is published over zenoh.
func needsZenoh(outs []output) bool {
	for _, o := range outs {
		if o.Transport == logfmt.TransportZenoh {
			return true
		}
	}
	return false
}

// openPublishers creates every output's publisher, so subscribers can
// discover them before the first record (see --delay and
// --wait-for-subscribers); zenoh outputs go out on zs.
func openPublishers(outs []output, zs *zenoh.Session, o transportOptions) (*publishers, error) {
	p := &publishers{outs: outs, zs: zs, zpub: make([]*zenoh.Publisher, len(outs)), ipub: make([]*iceoryx2.Publisher, len(outs)), iUser: make([]int, len(outs))}
	var err error
	for i, out := range outs {
		switch out.Transport {
		case logfmt.TransportZenoh:
			enc := out.Meta["zenoh.encoding"]
			p.zpub[i], err = p.zs.Publisher(out.Topic, zenoh.PublisherOptions{Encoding: enc, Block: true, Express: o.express})
			if err != nil {
				return p, kindf(ErrTransport, "zenoh publisher %s: %w", out.Topic, err)
			}
		case logfmt.TransportIceoryx2:
			if e := out.Meta[logfmt.MetaError]; e != "" {
				// The recorder could not open it: no records, nothing to publish.
				warnf(o.warn, "channel %s was not recorded (%s); nothing to publish on %s", out.Name, e, out.Topic)
				continue
			}
			if p.node == nil {
				if p.node, err = iceoryx2.NewNode("vrlog-replay"); err != nil {
					return p, kindf(ErrTransport, "iceoryx2 node: %w", err)
				}
			}
			types, terr := iceoryx2.TypeDetailsFromMeta(out.Meta)
			if terr != nil {
				if !isFrameSchema(out.Schema) {
					return p, kindf(ErrTransport, "channel %s: the log has no iceoryx2 type details to recreate service %s: %w", out.Name, out.Topic, terr)
				}
				warnf(o.warn, "channel %s: %v; using the vrsdk frame types", out.Name, terr)
				types = frameTypes
			}
			cfg, cerr := iceoryx2.ServiceConfigFromMeta(out.Meta)
			if cerr != nil {
				return p, kindf(ErrTransport, "channel %s: %w", out.Name, cerr)
			}
			if o.block {
				no := false
				cfg.SafeOverflow = &no
			}
			opts := iceoryx2.PublisherOptions{Service: cfg}
			if o.block {
				opts.Backpressure = iceoryx2.BackpressureBlock
			}
			if types.Payload.Variant == iceoryx2.Dynamic && types.Payload.Size > 0 {
				opts.InitialMaxSliceLen = max(4096, out.MaxRecord/int(types.Payload.Size))
			}
			p.ipub[i], err = p.node.Publisher(out.Topic, types, opts)
			if errors.Is(err, iceoryx2.ErrIncompatible) && cfg != (iceoryx2.ServiceConfig{}) {
				// The service exists already (the controller under test made
				// it) with other limits: join it as it is, same types.
				warnf(o.warn, "service %s exists with other settings than recorded (%v); publishing into it as it is", out.Topic, err)
				if o.block {
					warnf(o.warn, "service %s: blocking cannot be promised: if it overwrites (safe overflow), a slow subscriber loses frames and the publisher is not told", out.Topic)
				}
				opts.Service = iceoryx2.ServiceConfig{}
				p.ipub[i], err = p.node.Publisher(out.Topic, types, opts)
			}
			if err != nil {
				return p, kindf(ErrTransport, "iceoryx2 publisher %s: %w", out.Topic, err)
			}
			p.iUser[i] = int(types.UserHeader.Size)
		default:
			return p, kindf(ErrTransport, "channel %s: transport %v cannot be replayed", out.Name, out.Transport)
		}
	}
	return p, nil
}

func isFrameSchema(s string) bool { return s == "vrsdk.Frame/1" }

// Publish implements player.Sink. zenoh records go out with the source
// info they were recorded with (publisher id and sequence number), so a
// replayed channel carries the original's skips and restarts.
func (p *publishers) Publish(r *player.Rec) error {
	if z := p.zpub[r.Channel]; z != nil {
		if r.HasSourceSN {
			return z.PutAs(r.Payload, r.Header, r.SourceID, r.SourceSN)
		}
		return z.Put(r.Payload, r.Header)
	}
	i := p.ipub[r.Channel]
	if i == nil {
		return errors.New("no publisher: the log says the recorder could not open this channel, yet it has records")
	}
	if len(r.Header) != p.iUser[r.Channel] {
		return fmt.Errorf("record's user header is %d bytes, the service's is %d", len(r.Header), p.iUser[r.Channel])
	}
	_, err := i.Send(r.Header, r.Payload)
	return err
}

// Close releases every publisher, then the node.
func (p *publishers) Close() error {
	var errs []error
	for _, z := range p.zpub {
		if z != nil {
			errs = append(errs, z.Close())
		}
	}
	for _, i := range p.ipub {
		if i != nil {
			errs = append(errs, i.Close())
		}
	}
	if p.node != nil {
		errs = append(errs, p.node.Close())
	}
	return errors.Join(errs...)
}
