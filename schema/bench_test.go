package schema

import (
	"encoding/binary"
	"testing"

	"github.com/vrlog/vrlog/codec"
	"github.com/vrlog/vrlog/logfmt"
)

// BenchmarkStamp is the record-time cost of a declared channel's stamp
// (StampRecord: the whole payload checked, the stamp and counter read),
// beside the built-in state's (codec.StateStamp), in one run.
func BenchmarkStamp(b *testing.B) {
	st := codec.AppendState(nil, &codec.State{Seq: 7, TNs: t0, Sensors: make([]codec.Sensor, 2)})
	pb := mustParse(b, "team/*/pose protobuf proto=../../peers/ownmsg/team.proto message=team.Pose stamp=header.stamp seq=header.seq")
	js := mustParse(b, `team/*/cmd json stamp=header.stamp_ns seq=header.seq`)
	ros := mustParse(b, `ros/* ros2msg type=team_msgs/msg/Odom msg_path=msg stamp=header.stamp seq=counter`)
	cs := mustParse(b, `sim/* cstruct struct="uint64_t seq; int64_t t_ns; double x; double y; uint32_t flags" stamp=t_ns seq=seq`)
	csp := binary.LittleEndian.AppendUint64(nil, 7)
	csp = binary.LittleEndian.AppendUint64(csp, uint64(t0))
	csp = append(csp, make([]byte, 20)...)
	for _, c := range []struct {
		name    string
		payload []byte
		stamp   func([]byte) error
	}{
		{"vrsdk", st, func(p []byte) error { _, _, err := codec.StateStamp(p); return err }},
		{"protobuf", poseMsg(b, pb, 7, t0), stamper(pb)},
		{"json", []byte(`{"header": {"stamp_ns": 1767225600123456789, "seq": 7, "frame_id": "map"}, "x": 0.5, "y": -0.5}`), stamper(js)},
		{"ros2", cdrOdom(int32(t0/1e9), uint32(t0%1e9), 7, "odom", []float64{0.5, 0.25}), stamper(ros)},
		{"cstruct", csp, stamper(cs)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.payload)))
			for b.Loop() {
				if err := c.stamp(c.payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func stamper(c *Codec) func([]byte) error {
	var rec logfmt.Record
	return func(p []byte) error {
		rec.Payload = p
		return c.StampRecord(&rec, Arrival{Count: 1})
	}
}
