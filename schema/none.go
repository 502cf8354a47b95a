package schema

import (
	"encoding/base64"
	"errors"
)

// noneFormat is a payload vrlog does not decode: its stamps, if any, come
// from the transport. Its JSON is its bytes in base64.
type noneFormat struct{}

func (noneFormat) resolve([]string) (ref, kind, error) {
	return nil, 0, errors.New("encoding none has no fields: use stamp=zenoh.timestamp, seq=zenoh.source_sn or seq=count")
}

func (noneFormat) read(_, _ []byte, _ []ref, _ []num) error { return nil }

func (noneFormat) json(dst, _, payload []byte) ([]byte, error) {
	dst = append(dst, `{"bytes":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, payload)
	return append(dst, `"}`...), nil
}

func (noneFormat) write(_, payload []byte, _ []ref, _ []num) ([]byte, bool, error) {
	return payload, false, nil
}
